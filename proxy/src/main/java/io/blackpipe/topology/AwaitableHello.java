package io.blackpipe.topology;

import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The awaitable hello a simulated member's client sent last (one reply, or the first of a stream):
 * the topologyVersion it already knows, when it came and how long it may wait. A server answers
 * such a hello when its topologyVersion moves on or the wait ends, and not before. The one real
 * node may answer it at once all the same (jongodb always does), and passed on, that answer has the
 * client's monitor ask again at once: thousands of hellos a second for each member. {@link
 * #holdMillis} says how long the member would have kept it. Used from the connection's event loop only.
 */
final class AwaitableHello {
    private boolean open;
    private int requestId;
    private String command;
    private BsonDocument knownVersion;
    private long sentNanos;
    private long maxAwaitMillis;

    /** Notes a hello as its client sent it, before any rewrite; one that awaits nothing, or not well formed, is not noted. */
    void asked(int requestId, String command, BsonDocument request) {
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
        if (!sameVersion(knownVersion, reply.get("topologyVersion"))) {
            return 0;
        }
        return Math.max(0, maxAwaitMillis - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sentNanos));
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
