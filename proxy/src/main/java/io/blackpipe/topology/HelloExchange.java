package io.blackpipe.topology;

import io.blackpipe.wire.BsonCursor;
import io.blackpipe.wire.BsonIo;
import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.Header;
import io.blackpipe.wire.Messages;
import io.blackpipe.wire.OpCode;
import io.blackpipe.wire.OpMsg;
import io.blackpipe.wire.OpQuery;
import io.blackpipe.wire.OpReply;
import io.blackpipe.wire.ReadPreference;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.List;
import org.bson.BsonDocument;

/**
 * The hello conversation of one connection: remembers which requests were hellos so that exactly
 * their replies (and the moreToCome replies that stream after an awaitable hello) are rewritten.
 * Every other reply passes untouched. Used from the connection's event loop only.
 */
public final class HelloExchange {
    private final MemberStates states;
    private final MemberAddress member;
    private final SimulatedReplicaSet simulation;
    /** The hellos whose replies are still to come: the requests, then each streamed reply's id. */
    private final RequestIds pending = new RequestIds();
    /** Those of them that are legacy isMaster, whose replies may carry a processId of their own (see {@link MemberStates}). */
    private final RequestIds legacy = new RequestIds();
    /** Awaitable hellos the proxy answered itself: the member's own reply, when it comes, is one too many. */
    private final RequestIds answeredEarly = new RequestIds();
    /** Whether an awaitable hello without exhaustAllowed (one reply) waits for its answer, and which. */
    private boolean awaiting;
    private int awaitingId;
    private String awaitingName;
    /** Whether that hello waits here, in the member's place ({@link #standIn}), not at the member. */
    private boolean awaitingHere;
    /** The member's own stream of hello replies, when the client streams hello (exhaustAllowed). */
    private final MemberHelloStream stream = new MemberHelloStream();
    /** The member's last hello reply on this connection as it sent it: what an early answer repeats. */
    private final LastHello lastHello;
    /** The hello the client streams, as sent; see {@link #streamedRequest}. */
    private BsonDocument streamedRequest;
    /** What the member's replies say of it, noted, and the replies made to name the proxy. */
    private final HelloReplies replies;
    /** The awaitable hello asked last: whether the member's early answer to it is held, and a stream made here. */
    private final AwaitableHello awaitable = new AwaitableHello();

    /**
     * The command (hello, isMaster) of the awaitable hello that waits on this connection, streamed or not, as
     * {@link #answerAwaitingWithError} would answer it; null when none waits.
     */
    public String awaitingName() {
        if (awaitable.streamsHere() || stream.open()) {
            return streamedRequest != null && !streamedRequest.isEmpty() ? streamedRequest.getFirstKey() : "hello";
        }
        return awaiting ? awaitingName : null;
    }

    /** A reply held in the member's place: the request (or streamed reply) it answers, and how long until it is due. */
    public record Held(int requestId, long millis) {
    }

    public HelloExchange(HelloRewriter rewriter, MemberStates states, MemberAddress member) {
        this(rewriter, states, member, null);
    }

    /** @param simulation the simulated set {@code member} belongs to, or null for a real member */
    public HelloExchange(HelloRewriter rewriter, MemberStates states, MemberAddress member, SimulatedReplicaSet simulation) {
        this.states = states;
        this.member = member;
        this.simulation = simulation;
        this.lastHello = new LastHello(rewriter, states, member, simulation);
        this.replies = new HelloReplies(rewriter, states, member, simulation, lastHello);
    }

    /**
     * Notes a hello request and returns the frame to forward: the same one, or a copy without a
     * compressor list, or without a read preference other than primary for a simulated member or one
     * that takes only primary reads (the original is then released).
     */
    public ByteBuf onRequest(ByteBufAllocator alloc, ByteBuf frame, CommandFacts facts, OpMsg msg, OpQuery query) {
        if (!facts.isHello()) {
            return frame;
        }
        awaitable.newHello();
        if (!facts.moreToCome()) {
            pending.add(facts.requestId());
            if (!"hello".equals(facts.name())) {
                legacy.add(facts.requestId());
            }
        }
        if (msg != null && facts.exhaustAllowed()) {
            stream.begin(facts.requestId(), facts.name());
        } else if (msg != null && !facts.moreToCome() && isAwaitable(frame, msg)) {
            awaiting = true;
            awaitingId = facts.requestId();
            awaitingName = facts.name();
        }
        boolean shifted = msg != null && states.versionsRewritten(member);
        // an awaitable hello is noted (its early answer may be held: see AwaitableHello); a simulated member's
        // asks about the member's topologyVersion, which the real node never had
        boolean awaitableHello = msg != null && msg.body(frame).find("topologyVersion");
        boolean simulatedVersion = simulation != null && awaitableHello;
        // a simulated member's hello reaches the one real node, which may take only primary reads (jongodb), as does a
        // member whose quirks say so: the Node.js driver's handshakes (OP_QUERY, then OP_MSG on new connections)
        // carry the URI's readPreference, the Go driver's heartbeats primaryPreferred
        boolean readPreference = (simulation != null || states.quirks(member).primaryReadsOnly())
                && (msg != null ? !ReadPreference.mode(frame, msg).equals("primary")
                        : BsonCursor.over(frame, query.queryOffset(), query.queryEnd()).find("$readPreference"));
        if (!facts.compressionRequested() && !shifted && !awaitableHello && !readPreference) {
            return frame;
        }
        ByteBuf rewritten;
        if (msg != null) {
            BsonDocument body = BsonIo.decode(frame, msg.bodyOffset(), msg.sectionsEnd());
            if (facts.exhaustAllowed()) {
                streamedRequest = body.clone(); // as sent: each later reply of the stream is a check of it, which a rule may look into
            }
            if (awaitableHello && !facts.moreToCome()) {
                awaitable.asked(facts.requestId(), facts.name(), body, facts.exhaustAllowed());
            }
            HelloRewriter.stripCompression(body);
            boolean unshifted = states.unshiftRequest(member, body);
            boolean translated = simulatedVersion && simulation.asTheRealNodeAwaits(body, member,
                    lastHello.topologyVersion());
            if (readPreference) {
                body.remove("$readPreference");
            }
            if (!facts.compressionRequested() && !unshifted && !translated && !readPreference) {
                return frame;
            }
            rewritten = Messages.opMsgWithBody(alloc, frame, msg, body);
        } else {
            BsonDocument document = BsonIo.decode(frame, query.queryOffset(), query.queryEnd());
            HelloRewriter.stripCompression(document.isDocument("$query") ? document.getDocument("$query") : document);
            if (readPreference) {
                document.remove("$readPreference");
            }
            rewritten = Messages.opQueryWithQuery(alloc, frame, query, document);
        }
        frame.release();
        return rewritten;
    }

    /** A hello that waits for a topology change: it carries the topologyVersion its sender knows and maxAwaitTimeMS. */
    private static boolean isAwaitable(ByteBuf frame, OpMsg msg) {
        return msg.body(frame).find("topologyVersion") && msg.body(frame).find("maxAwaitTimeMS");
    }

    /** The hello the client streams, as it sent it (null when none was decoded): what a rule looks into at each check. */
    public BsonDocument streamedRequest() {
        return streamedRequest;
    }

    /** Whether the member's {@code frame} is its stream's next reply after the first: a check of its own, as on mongod. */
    public boolean isStreamedCheck(ByteBuf frame) {
        return stream.isNextCheck(Header.responseTo(frame));
    }

    /**
     * The same for the reply a stream made here (for a member that does not stream: jongodb) owes {@code requestId} now;
     * false for a wait that an earlier answer overtook (a change answered it, and the next wait began).
     */
    public boolean makesAStreamedCheck(int requestId) {
        return awaitable.streamsHereAfterItsFirst() && awaitable.chain() == requestId;
    }

    /** A rule swallowed a check: the member's stream is dropped from here, or one made here makes no more. */
    public void endStreamUnanswered() {
        if (awaitable.streamsHere()) {
            awaitable.newHello();
        } else {
            stream.endHere();
        }
    }

    /** True while some hello reply is still expected on this connection. */
    public boolean expectsReplies() {
        return !pending.isEmpty();
    }

    /**
     * Returns the frame to send to the client: the reply itself or its rewritten copy; null for the
     * member's late reply to an awaitable hello the proxy answered early (released here).
     */
    public ByteBuf onReply(ByteBufAllocator alloc, ByteBuf frame) {
        int responseTo = Header.responseTo(frame);
        if (pending.isEmpty() || !pending.remove(responseTo)) {
            return frame;
        }
        boolean legacyReply = legacy.remove(responseTo);
        if (stream.drops(frame, responseTo, pending::add)) { // an error ended that stream here
            frame.release();
            return null;
        }
        if (awaiting && !awaitingHere && responseTo == awaitingId) {
            awaiting = false;
        }
        if (answeredEarly.remove(responseTo)) {
            replies.observeLate(frame, legacyReply);
            int lateId = Header.requestId(frame);
            frame.release();
            // the member is free again: its latest word answers a hello that waited here (the client never sees this id)
            return answeredEarly.isEmpty() && awaitingHere ? answerWaiting(alloc, lateId) : null;
        }
        int opCode = Header.opCode(frame);
        ByteBuf rewritten = null;
        if (opCode == OpCode.OP_MSG) {
            OpMsg msg = OpMsg.parse(frame);
            if (msg.moreToCome()) {
                pending.add(Header.requestId(frame)); // the next streamed reply answers this one
                if (legacyReply) {
                    legacy.add(Header.requestId(frame));
                }
            }
            boolean rechained = stream.isNext(Header.responseTo(frame)) && stream.follow(frame, msg);
            BsonDocument body = BsonIo.decode(frame, msg.bodyOffset(), msg.sectionsEnd());
            lastHello.remember(body.clone());
            boolean changed = replies.rewriteReply(body, legacyReply);
            if (!msg.moreToCome() && holdsInTheMembersPlace(responseTo, body)) {
                frame.release();
                return null;
            }
            if (!msg.moreToCome() && awaitable.takeEndedStream()) { // goes now, and the stream goes on from here
                awaitable.streamFrom(Header.requestId(frame));
                rewritten = Messages.opMsg(alloc, Header.requestId(frame), Header.responseTo(frame),
                        OpMsg.MORE_TO_COME | msg.flags() & OpMsg.CHECKSUM_PRESENT, body);
            } else if (changed || rechained) {
                rewritten = Messages.opMsgWithBody(alloc, frame, msg, body);
            }
        } else if (opCode == OpCode.OP_REPLY) {
            OpReply reply = OpReply.parse(frame);
            if (reply.numberReturned() == 1) {
                BsonDocument body = BsonIo.decode(frame, reply.firstDocumentOffset(), reply.end());
                lastHello.remember(body.clone()); // the handshake's: all there is until the stream's first reply
                if (replies.rewriteReply(body, legacyReply)) {
                    rewritten = Messages.opReplyWithDocuments(alloc, frame, reply, List.of(body));
                }
            }
        }
        if (rewritten == null) {
            return frame;
        }
        frame.release();
        return rewritten;
    }

    /**
     * Whether the member's reply (as the client gets it) to the awaitable hello {@code responseTo}
     * says only what its client knew, before the hello's wait ended: a server would have held it
     * (the member, if mongod, did; jongodb answers at once), so it waits here, as one {@link
     * #standIn} holds, for the rest of that wait ({@link #takeHeld}), or until {@link
     * #answerAwaitingNow}. A streamed hello's one reply (the node ended the stream) is held the same
     * way, and the stream goes on from here, one reply each maxAwaitTimeMS or at a change, as from a
     * server.
     */
    private boolean holdsInTheMembersPlace(int responseTo, BsonDocument reply) {
        long millis = HelloReplies.isError(reply) ? 0 : awaitable.holdMillis(responseTo, reply);
        if (millis <= 0) {
            return false;
        }
        awaitable.hold(millis);
        if (!awaitable.streamsHere()) {
            awaiting = true;
            awaitingHere = true;
            awaitingId = responseTo;
            awaitingName = awaitable.command();
        }
        return true;
    }

    /**
     * The reply held last in the member's place (null: none): by {@link #onReply}, or the next of a
     * stream made here, after {@link #answerWaitedHere} or {@link #answerAwaitingNow} sent one. Its
     * caller has {@link #answerWaitedHere} answer it after {@link Held#millis}.
     */
    public Held takeHeld() {
        return awaitable.takeHeld();
    }

    /** The member's next streamed reply, made here: it answers the last, and the next is due when the wait has passed again. */
    private ByteBuf streamOnHere(ByteBufAllocator alloc, int replyId) {
        ByteBuf reply = Messages.opMsg(alloc, replyId, awaitable.chain(), OpMsg.MORE_TO_COME, lastHello.now(awaitable.command()));
        awaitable.chainTo(replyId);
        return reply;
    }

    /**
     * The member's topologyVersion moved on (the proxy shifted it for a state-change error it
     * injected): a server answers every waiting awaitable hello at once when that happens, so the
     * client gets its answer now, with the new counter, rather than when the member's wait ends
     * (maxAwaitTimeMS). Returns that reply: the stream's next (moreToCome; the member's own next
     * streamed reply is then chained after it, or, in a stream made here, the next is due a
     * maxAwaitTimeMS later: {@link #takeHeld}), or the answer to an awaitable hello without
     * exhaustAllowed (the member's own answer to it is then dropped when it comes), or to one that
     * waits {@link #standIn here}; null when no hello waits on this connection. The member still
     * holds a hello answered early until its wait ends: see {@link #memberHoldsAnsweredHello}.
     */
    public ByteBuf answerAwaitingNow(ByteBufAllocator alloc, int requestId) {
        if (!lastHello.known()) {
            return null;
        }
        awaitable.forget(); // answered now: the member's own reply, when it comes, follows this answer
        if (awaitable.streamsHere()) {
            return streamOnHere(alloc, requestId);
        }
        if (stream.open()) {
            return Messages.opMsg(alloc, requestId, stream.answerHere(requestId), OpMsg.MORE_TO_COME, lastHello.now(stream.name()));
        }
        if (awaiting && !awaitingHere) {
            answeredEarly.add(awaitingId);
        }
        return answerWaiting(alloc, requestId);
    }

    /**
     * The member quiesces (see {@code pipe.Quiesce}): as mongod, it answers the awaitable hello that
     * waits on this connection (streamed or not, at the member or here) with {@code error} at once.
     * An error ends a stream: what the member still sends for it is dropped ({@link #onReply}), as
     * is its own late answer to a one-reply hello. Returns that answer; null when no hello waits.
     */
    public ByteBuf answerAwaitingWithError(ByteBufAllocator alloc, int requestId, BsonDocument error) {
        int responseTo;
        if (awaitable.streamsHere()) {
            responseTo = awaitable.chain();
        } else if (stream.open()) {
            responseTo = stream.endHere();
        } else if (awaiting) {
            responseTo = awaitingId;
            if (!awaitingHere) {
                answeredEarly.add(awaitingId);
            }
            awaiting = false;
            awaitingHere = false;
        } else {
            return null;
        }
        awaitable.newHello(); // nothing held, no stream made here: the error was the last word on that hello
        return Messages.opMsg(alloc, requestId, responseTo, 0, error);
    }

    /**
     * Whether the member still holds an awaitable hello the proxy answered early: it serves one
     * request at a time per connection, so a hello forwarded now would wait behind that one, up to
     * the rest of its maxAwaitTimeMS, for an answer a server would give at once. The caller has
     * {@link #standIn} answer it instead.
     */
    public boolean memberHoldsAnsweredHello() {
        return !answeredEarly.isEmpty();
    }

    /**
     * Answers a hello (OP_MSG, one reply) in the member's place while {@link #memberHoldsAnsweredHello},
     * as the member would: from its last hello, with the shifted counter, naming the proxy, in
     * {@code facts}' command's words. That last hello is still its word: any change of its state
     * would have ended its wait and brought its answer. Null when {@code request} is an awaitable
     * hello that already knows the topologyVersion: a server holds it until that changes or its
     * maxAwaitTimeMS ends, and so it waits here until {@link #answerAwaitingNow} (a change), the
     * member's answer to the hello it holds (the member free again, its latest word), or {@link
     * #answerWaitedHere} (the caller's timer, after maxAwaitTimeMS).
     *
     * @param requestId the id of the reply made here
     */
    public ByteBuf standIn(ByteBufAllocator alloc, BsonDocument request, CommandFacts facts, int requestId) {
        BsonDocument reply = lastHello.now(facts.name());
        if (request.isNumber("maxAwaitTimeMS") && AwaitableHello.sameVersion(request.get("topologyVersion"), reply.get("topologyVersion"))) {
            awaiting = true;
            awaitingHere = true;
            awaitingId = facts.requestId();
            awaitingName = facts.name();
            return null;
        }
        return Messages.opMsg(alloc, requestId, facts.requestId(), 0, reply);
    }

    /**
     * The answer to the hello {@code requestId} that waited here until its maxAwaitTimeMS ended, or
     * the next reply of a stream made here, due after the reply {@code requestId}; null once
     * answered otherwise.
     */
    public ByteBuf answerWaitedHere(ByteBufAllocator alloc, int replyId, int requestId) {
        if (awaitable.streamsHere()) {
            return awaitable.chain() == requestId ? streamOnHere(alloc, replyId) : null;
        }
        return awaitingHere && awaitingId == requestId ? answerWaiting(alloc, replyId) : null;
    }

    /** Answers the one-reply awaitable hello that waits (at the member or here) from the member's last hello; null if none. */
    private ByteBuf answerWaiting(ByteBufAllocator alloc, int replyId) {
        if (!awaiting) {
            return null;
        }
        awaiting = false;
        awaitingHere = false;
        return Messages.opMsg(alloc, replyId, awaitingId, 0, lastHello.now(awaitingName));
    }
}
