package io.blackpipe.pipe;

import io.blackpipe.fault.ReplyFate;
import io.blackpipe.observe.Attempt;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.List;
import org.bson.BsonDocument;

/**
 * The application command a connection is waiting on, until its last reply (or the connection's end);
 * or, with no attempt, the proxy's answer to a pipelined request, waiting its turn, or a hello
 * forwarded to the member, until its first reply.
 */
final class InFlight {
    final Attempt attempt;
    final long fingerprint;
    /** The fault that met it, or null; a blackhole that holds its reply sets it (see AwaitedReplies#metTheBlackhole). */
    String fault;
    final ReplyFate fate;
    /**
     * Whether the member has the command; not when a member answers it for itself (a simulated member that stepped down
     * while a rule blocked it: NotWritablePrimary) and the rule's reply fate acts on that answer, as it would on the
     * member's reply. Answered past the fate, the dropReply counted was a reply the client got whole.
     */
    final boolean forwarded;
    /** The responseTo the next reply carries: the request id, then each streamed reply's own id. */
    int awaitedResponseTo;
    boolean fateDecided;
    /** The proxy's answer, waiting for the replies to the commands sent before it (see {@link AwaitedReplies}); else null. */
    ByteBuf answer;
    /** What the client gets in place of the member's reply, a fault's fate acting on it (see FailoverEndedTransactions); else null. */
    private BsonDocument replyInstead;
    /** The write whose duplicate key is answered as mongod answers it (see DuplicateKeys); else null. */
    private DuplicateKeys.OneStatement duplicateKeysAsMongod;
    /** A write a simulated primary acknowledges, as it bears on a rollback (see RollbackRecorder); else null. */
    SimulatedWrite write;
    /** What that write's pre-image find read: the documents it may change, as they were. */
    List<BsonDocument> preImages = List.of();
    /** Which primary that write went to (see UnreplicatedWrites#epoch). */
    int writeEpoch;
    /** What that write created and changed, once its reply came; null before. */
    List<UnreplicatedWrites.Change> changes;

    InFlight(Attempt attempt, long fingerprint, String fault, ReplyFate fate, boolean forwarded) {
        this(attempt, fingerprint, fault, fate, forwarded, null, attempt.facts().requestId());
    }

    private InFlight(Attempt attempt, long fingerprint, String fault, ReplyFate fate, boolean forwarded, ByteBuf answer,
                     int awaitedResponseTo) {
        this.attempt = attempt;
        this.fingerprint = fingerprint;
        this.fault = fault;
        this.fate = fate;
        this.forwarded = forwarded;
        this.answer = answer;
        this.awaitedResponseTo = awaitedResponseTo;
    }

    /** An answer the proxy gave in the member's place, waiting its turn; whatever it answers was counted already. */
    static InFlight answerInWaiting(ByteBuf answer) {
        return new InFlight(null, 0, null, null, false, answer, 0);
    }

    /** A hello forwarded to the member: not an application command, but answers sent after it wait for its reply. */
    static InFlight forwardedHello(int requestId) {
        return new InFlight(null, 0, null, null, true, null, requestId);
    }

    /** Sets {@link #replyInstead} (null: the member's reply itself); returns this. */
    InFlight withReplyInstead(BsonDocument reply) {
        replyInstead = reply;
        return this;
    }

    /** Has a duplicate key in the reply to this write of one statement answered as mongod answers it; returns this. */
    InFlight withDuplicateKeysAsMongod(DuplicateKeys.OneStatement oneStatementWrite) {
        duplicateKeysAsMongod = oneStatementWrite;
        return this;
    }

    /**
     * The member's {@code reply} as the client gets it: itself, {@link #replyInstead} with its ids, or a duplicate key
     * as mongod answers it ({@code reply} released when replaced).
     */
    ByteBuf asTheClientGetsIt(ByteBufAllocator alloc, ByteBuf reply) {
        if (replyInstead != null) {
            return FailoverEndedTransactions.answerInstead(alloc, reply, replyInstead);
        }
        return duplicateKeysAsMongod == null ? reply : DuplicateKeys.asMongodAnswers(alloc, reply, duplicateKeysAsMongod);
    }

    boolean isHello() {
        return attempt == null && answer == null;
    }
}
