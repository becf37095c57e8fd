package io.blackpipe.pipe;

import io.blackpipe.topology.MemberAddress;
import io.blackpipe.topology.MemberQuirks;
import io.blackpipe.topology.MemberStates;
import io.blackpipe.wire.AbortTransaction;
import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.Messages;
import io.blackpipe.wire.ReplyFacts;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.bson.BsonDocument;

/**
 * The transactions a session left open at a member that keeps them when the session goes on ({@link
 * MemberQuirks#keepsSupersededTransactions}, jongodb). mongod aborts a session's open transaction when a command of
 * that session comes with a newer txnNumber; jongodb keeps it and refuses the newer transaction ("transaction already in
 * progress for this session"). A transaction whose commit never reached the member (a reset or an outage cut it, its
 * retry found no member) then held its session for good: drivers pool sessions, and each later transaction the pool
 * gave that session failed. So the txnNumber of each session's transaction is noted as its commands pass, until its
 * commit or abort is answered ok; a command of the session with a newer txnNumber goes behind the open one's
 * abortTransaction, on the same connection (a member answers one connection's requests in turn), whose reply is the
 * proxy's. An abort of one that had ended after all is answered NoSuchTransaction, and changes nothing.
 */
final class SupersededTransactions {
    /** Sessions noted at most: a session that walks away mid-transaction stays until it comes back. */
    static final int MAX_SESSIONS = 100_000;

    private final Map<UUID, Long> open = new ConcurrentHashMap<>();
    private final MemberStates states;
    private final ProxyLog log;

    SupersededTransactions(MemberStates states, ProxyLog log) {
        this.states = states;
        this.log = log;
    }

    /**
     * The abortTransaction that goes to the member before {@code facts}' command, or null: where the member keeps a
     * session's transaction open, and the command is the session's with a newer txnNumber.
     */
    BsonDocument abortBefore(CommandFacts facts, MemberQuirks quirks) {
        UUID session = facts.lsid();
        if (!quirks.keepsSupersededTransactions() || session == null || !facts.hasTxnNumber()) {
            return null;
        }
        long txnNumber = facts.txnNumber();
        Long before = open.get(session);
        boolean ends = facts.name().equals("commitTransaction") || facts.name().equals("abortTransaction");
        if (facts.inTransaction() && !ends && (before != null || open.size() < MAX_SESSIONS)) {
            open.put(session, txnNumber);
        } else if (before != null && before < txnNumber) {
            open.remove(session, before); // a retryable write of the session: mongod aborted the open transaction
        }
        return before != null && before < txnNumber ? AbortTransaction.of(session, before) : null;
    }

    /** The member answered {@code facts}' command: a commit or abort answered ok ended its transaction. */
    void answered(CommandFacts facts, ReplyFacts reply) {
        if (facts.inTransaction() && !reply.isError() && !open.isEmpty() && facts.lsid() != null
                && (facts.name().equals("commitTransaction") || facts.name().equals("abortTransaction"))) {
            open.remove(facts.lsid(), facts.txnNumber());
        }
    }

    /**
     * Sends the abort {@link #abortBefore} asks for, if any, to {@code member} on {@code connection}, ahead of {@code
     * facts}' command; its reply is the proxy's ({@code awaited} drops it).
     */
    void abortFirst(CommandFacts facts, MemberAddress member, ClientConnection connection, AwaitedReplies awaited) {
        BsonDocument abort = abortBefore(facts, states.quirks(member));
        if (abort != null) {
            int requestId = awaited.ownRequestId(facts.requestId());
            awaited.sentByTheProxy(requestId);
            connection.sendUpstream(Messages.opMsg(connection.alloc(), requestId, 0, 0, abort));
            log.info("aborted transaction " + abort.getInt64("txnNumber").getValue() + " of a session at member " + member
                    + " before its newer one (txnNumber " + facts.txnNumber() + "), as mongod aborts it itself");
        }
    }
}
