package io.blackpipe.topology;

import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The awaitable hello a member's client sent last (one reply, or a stream with exhaustAllowed): the
 * topologyVersion it already knows, when it came and how long it may wait. A server answers such a
 * hello when its topologyVersion moves on or the wait ends, and not before, and streams a reply of
 * each to a client that allowed it. The member (for a simulated member, the one real node) may
 * answer at once all the same, and end the stream with that one reply (jongodb always does); passed
 * on, that answer has the client's monitor ask again at once, thousands of hellos a second for each
 * member, and the Node.js driver fails a heartbeat whose stream ends. So the member's answer is held
 * ({@link #holdMillis}, {@link #takeHeld}), and a stream the node ended goes on from the proxy
 * ({@link #streamsHere}). Used from the connection's event loop only.
 */
final class AwaitableHello {
    private boolean open;
    private int requestId;
    private String command;
    private BsonDocument knownVersion;
    private long sentNanos;
    private long maxAwaitMillis;
    private boolean exhaustAllowed;
    /** Whether the proxy streams the member's replies to this client, and the id the next one answers. */
    private boolean streamsHere;
    private int chain;
    private HelloExchange.Held held;
    /** Whether the member's reply to a streamed hello goes now and ends the stream the client asked for. */
    private boolean endsStream;

    /** A new hello came: what the last one asked is over, and so is a stream made here (a client sends one only once its stream has ended). */
    void newHello() {
        open = false;
        streamsHere = false;
        held = null;
        endsStream = false;
    }

    /** Notes a hello as its client sent it, before any rewrite; one that awaits nothing, or not well formed, is not noted. */
    void asked(int requestId, String command, BsonDocument request, boolean exhaustAllowed) {
        BsonValue version = request.get("topologyVersion");
        BsonValue maxAwait = request.get("maxAwaitTimeMS");
        open = version != null && version.isDocument() && maxAwait != null && maxAwait.isNumber()
                && maxAwait.asNumber().longValue() >= 0;
        if (open) {
            this.requestId = requestId;
            this.command = command;
            this.knownVersion = version.asDocument().clone();
            this.sentNanos = System.nanoTime();
            this.maxAwaitMillis = maxAwait.asNumber().longValue();
            this.exhaustAllowed = exhaustAllowed;
        }
    }

    /** The hello was answered otherwise (an election, an injected state change): the member's own reply goes as it comes. */
    void forget() {
        open = false;
    }

    /**
     * How long the member's reply to {@code responseTo}, as the client would get it, is to be held:
     * the rest of the hello's wait when the reply's topologyVersion is the one the client already
     * knew; 0 to send it now (any other reply, a changed version, a wait already over).
     */
    long holdMillis(int responseTo, BsonDocument reply) {
        if (!open || responseTo != requestId) {
            return 0;
        }
        open = false;
        long rest = sameVersion(knownVersion, reply.get("topologyVersion"))
                ? Math.max(0, maxAwaitMillis - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sentNanos)) : 0;
        endsStream = rest == 0 && exhaustAllowed;
        return rest;
    }

    /**
     * Whether the reply {@link #holdMillis} let go now answers a streamed hello: a server's first
     * reply to one says more is to come. Where the node's does not, the reply goes with moreToCome
     * and the stream goes on from here ({@link #streamFrom}); else a driver takes the stream for
     * broken (the Node.js driver fails the heartbeat and marks the member Unknown).
     */
    boolean takeEndedStream() {
        boolean ended = endsStream;
        endsStream = false;
        return ended;
    }

    /** The member's reply {@code replyId} to a streamed hello went now: the stream goes on from here, its next reply a wait later. */
    void streamFrom(int replyId) {
        streamsHere = true;
        chainTo(replyId);
    }

    /**
     * The member's reply to the hello noted last is held for {@code millis}. When that hello
     * allowed a stream, the stream goes on from here: its first reply answers the hello, each next
     * one the last (see {@link #chainTo}).
     */
    void hold(long millis) {
        streamsHere = exhaustAllowed;
        chain = requestId;
        held = new HelloExchange.Held(requestId, millis);
    }

    boolean streamsHere() {
        return streamsHere;
    }

    /** Whether the next reply streamed here answers a reply, not the hello: a check of its own, as a server's next would be. */
    boolean streamsHereAfterItsFirst() {
        return streamsHere && chain != requestId;
    }

    /** The id the next reply streamed here answers: the hello's, then each reply's. */
    int chain() {
        return chain;
    }

    /** A reply {@code replyId} was streamed here: the next answers it, when the wait has passed again (or at a change). */
    void chainTo(int replyId) {
        chain = replyId;
        held = new HelloExchange.Held(replyId, maxAwaitMillis);
    }

    /** The reply held last (null: none, or already taken), for its caller to send when its time comes. */
    HelloExchange.Held takeHeld() {
        HelloExchange.Held taken = held;
        held = null;
        return taken;
    }

    /** The command of the hello last noted: hello or legacy isMaster, whose replies name the primary differently. */
    String command() {
        return command;
    }

    /** Whether a topologyVersion a client sent names the same process and counter as the member's. */
    static boolean sameVersion(BsonValue asked, BsonValue current) {
        if (asked == null || !asked.isDocument() || current == null || !current.isDocument()) {
            return false;
        }
        BsonDocument a = asked.asDocument();
        BsonDocument c = current.asDocument();
        return a.isObjectId("processId") && a.isNumber("counter") && a.get("processId").equals(c.get("processId"))
                && c.isNumber("counter") && a.getNumber("counter").longValue() == c.getNumber("counter").longValue();
    }
}
