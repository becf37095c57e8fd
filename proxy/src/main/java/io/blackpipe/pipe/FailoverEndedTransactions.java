package io.blackpipe.pipe;

import io.blackpipe.fault.ErrorReplies;
import io.blackpipe.topology.MemberState;
import io.blackpipe.wire.AbortTransaction;
import io.blackpipe.wire.BsonIo;
import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.Header;
import io.blackpipe.wire.Messages;
import io.blackpipe.wire.OpMsg;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.bson.BsonDocument;

/**
 * The transactions a simulated failover ended. A real primary that steps down aborts the
 * transactions open on it, and the new primary never heard of them: a later statement or commit
 * of one gets NoSuchTransaction (TransientTransactionError), so withTransaction runs its body again.
 * Behind a simulated set the one real node would hold them open and commit them. So the
 * transactions the simulated primary passes on are noted (by session, with their txnNumber) until
 * their commit or abort reaches the node; a failover turns those still open into ended ones, which
 * the node is asked to abort at once ({@link EndedTransactionAborts}), and each command of an ended
 * transaction that reaches the new primary goes to the real node as that transaction's
 * abortTransaction (so its writes never apply, should the abort at the failover have failed or come
 * second), and the client gets the new primary's answer in place of the abort's reply (a rule's
 * delay or other reply fate acting on that answer).
 */
final class FailoverEndedTransactions {
    /** Sessions noted at most in each map: a session that walks away mid-transaction stays until a failover. */
    static final int MAX_SESSIONS = 100_000;

    private final Map<UUID, Long> open = new ConcurrentHashMap<>();
    private final Map<UUID, Long> ended = new ConcurrentHashMap<>();

    /**
     * What the simulated primary does with {@code facts}' command: null to pass it on to the real
     * node, or the new primary's NoSuchTransaction for a command of a transaction a failover ended.
     */
    BsonDocument onPrimary(CommandFacts facts, MemberState state) {
        if (!facts.inTransaction() || facts.lsid() == null) {
            if (facts.lsid() != null && facts.hasTxnNumber()) {
                ended.remove(facts.lsid()); // a retryable write: the session moved on
            }
            return null;
        }
        UUID session = facts.lsid();
        Long endedTxn = ended.get(session);
        if (endedTxn != null) {
            if (endedTxn == facts.txnNumber()) {
                return ErrorReplies.error(251, "Transaction with { txnNumber: " + facts.txnNumber() + " } has been aborted.",
                        null, null, facts, state);
            }
            ended.remove(session, endedTxn); // the session moved on to another transaction
        }
        String name = facts.name();
        if (name.equals("commitTransaction") || name.equals("abortTransaction")) {
            open.remove(session, facts.txnNumber()); // its fate is the real node's now
        } else if (open.size() < MAX_SESSIONS || open.containsKey(session)) {
            open.put(session, facts.txnNumber());
        }
        return null;
    }

    /** The abortTransaction of the transaction {@code frame}'s command belongs to, sent in its place ({@code frame} is released). */
    static ByteBuf abortInstead(ByteBufAllocator alloc, ByteBuf frame) {
        OpMsg msg = OpMsg.parse(frame);
        BsonDocument command = BsonIo.decode(frame, msg.bodyOffset(), msg.sectionsEnd());
        BsonDocument abort = AbortTransaction.of(command.getDocument("lsid"), command.getNumber("txnNumber").longValue());
        ByteBuf instead = Messages.opMsg(alloc, Header.requestId(frame), 0, 0, abort); // its reply answers the client's request
        frame.release();
        return instead;
    }

    /** {@code answer} in place of the member's {@code reply} (released), with its header ids. */
    static ByteBuf answerInstead(ByteBufAllocator alloc, ByteBuf reply, BsonDocument answer) {
        ByteBuf instead = Messages.opMsgWithBody(alloc, reply, OpMsg.parse(reply), answer);
        reply.release();
        return instead;
    }

    /**
     * A failover (or its undoing, another election): every transaction still open on the old primary has ended.
     * Returns them (each session's txnNumber), for the node to abort.
     */
    Map<UUID, Long> failover() {
        Map<UUID, Long> endedNow = new HashMap<>();
        for (Map.Entry<UUID, Long> transaction : open.entrySet()) {
            if (open.remove(transaction.getKey(), transaction.getValue())) {
                endedNow.put(transaction.getKey(), transaction.getValue());
                if (ended.size() < MAX_SESSIONS) {
                    ended.put(transaction.getKey(), transaction.getValue());
                }
            }
        }
        return endedNow;
    }
}
