package io.blackpipe.pipe;

import io.blackpipe.fault.ErrorCodes;
import io.blackpipe.fault.ErrorReplies;
import io.blackpipe.topology.MemberQuirks;
import io.blackpipe.wire.BsonIo;
import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.Header;
import io.blackpipe.wire.OpCode;
import io.blackpipe.wire.OpMsg;
import io.blackpipe.wire.ReplyFacts;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.bson.BsonDocument;

/**
 * What mongod remembers of each session's latest retryable write, kept in the place of a member that
 * runs a retried write again ({@link MemberQuirks#reappliesRetriedWrites}, jongodb): its reply to the
 * write's first run, by lsid and txnNumber. mongod answers a write that comes again with the same
 * lsid and txnNumber (a driver's retry after a lost reply, or the first attempt reaching it after its
 * retry) from that first run, without running it again; the proxy answers it with that reply. A failed
 * run (ok: 0) is not remembered, as mongod runs a failed statement again. Shared by every member, as
 * a replica set's members share the sessions' table; as on mongod, a session keeps only its latest
 * txnNumber. Bounded by sessions and bytes: past the sessions, the least recently used are forgotten; past the bytes,
 * the least recently used replies are, but not that their writes ran: a retry of one is refused with
 * IncompleteTransactionHistory, as mongod refuses a retried write whose history its oplog no longer holds, rather than
 * run again (several large findAndModify replies at once pushed out a lost reply's first run before its retry came,
 * and the write was applied twice).
 *
 * <p>A run still at the member is marked until its reply comes: mongod checks a session out to one
 * command at a time, so a retry sent meanwhile (its client gave up on a slow member, or an outage or a
 * reset cut the first attempt's connection) waits for the run and is answered from it. The member's
 * connection outlives its client until the run answered (see AfterTheClientLeft). Not
 * handled: a run the member never answers (its connection closed, or no reply within
 * {@link #SEE_THROUGH_MILLIS}) lets the retry run, which may apply the write twice.
 */
final class RetriedWrites {
    /** Sessions remembered at most; past that the least recently used are forgotten (drivers end theirs far sooner). */
    static final int MAX_SESSIONS = 10_000;
    /** Reply bytes kept at most: a findAndModify's reply holds its document, up to 16 MiB. */
    static final long MAX_BYTES = 64L << 20;

    /** How long a member's connection stays open after its client left, for the runs it holds to answer. */
    static final long SEE_THROUGH_MILLIS = 60_000;

    /** {@code reply} null: forgotten for the bytes, its write known to have run. */
    private record FirstRun(long txnNumber, BsonDocument reply, int bytes) {
        FirstRun withoutItsReply() {
            return new FirstRun(txnNumber, null, 0);
        }
    }

    private record Run(UUID lsid, long txnNumber) {
        static Run of(CommandFacts facts) {
            return new Run(facts.lsid(), facts.txnNumber());
        }
    }

    /**
     * A tracked write's turn: answered with its first run's reply ({@code ranBefore}; an IncompleteTransactionHistory
     * error when that reply was {@code forgotten}), waiting for its first run still at the member ({@link #WAITS}), or
     * sent to the member as the first run ({@link #RUNS}).
     */
    record Turn(BsonDocument ranBefore, boolean waits, boolean forgotten) {
        static final Turn WAITS = new Turn(null, true, false);
        static final Turn RUNS = new Turn(null, false, false);
    }

    /** In the order of their last use, the least recent first. */
    private final Map<UUID, FirstRun> bySession = new LinkedHashMap<>(16, 0.75f, true);
    private long keptBytes;
    /** The runs at the member, each with the wake-ups of the retries that wait for it. */
    private final Map<Run, List<Runnable>> running = new HashMap<>();

    /** Whether this command is a retryable write whose runs the proxy keeps track of for this member. */
    static boolean tracked(CommandFacts facts, MemberQuirks quirks) {
        return quirks.reappliesRetriedWrites() && isRetryableWrite(facts);
    }

    /** A write with a session and a txnNumber outside a transaction, that asks for a reply: what drivers retry. */
    private static boolean isRetryableWrite(CommandFacts facts) {
        return facts.hasTxnNumber() && !facts.inTransaction() && !facts.moreToCome() && facts.lsid() != null;
    }

    /**
     * A tracked write's turn (see {@link Turn}), decided at once for every member: a write that runs is marked running
     * until {@link #ran} or {@link #ended}; a write that waits has {@code wake} called (on the thread that ends
     * the run) once it ended, then asks again. {@code wake} may be null: nobody waits.
     */
    synchronized Turn turnOf(CommandFacts facts, Runnable wake) {
        FirstRun first = bySession.get(facts.lsid());
        if (first != null && first.txnNumber() == facts.txnNumber()) {
            return first.reply() != null ? new Turn(first.reply().clone(), false, false)
                    : new Turn(ErrorReplies.commandError(ErrorCodes.INCOMPLETE_TRANSACTION_HISTORY, "Incomplete history detected for"
                            + " transaction " + facts.txnNumber() + " on session " + facts.lsid()), false, true);
        }
        List<Runnable> waiting = running.get(Run.of(facts));
        if (waiting != null) {
            if (wake != null) {
                waiting.add(wake);
            }
            return Turn.WAITS;
        }
        running.put(Run.of(facts), new ArrayList<>(1));
        return Turn.RUNS;
    }

    /**
     * The member's reply (an OP_MSG) to a write's run, which ends the run: remembered unless it failed or is older than
     * the session's latest; the retries that waited for it go on (also when the reply cannot be read).
     */
    void ran(CommandFacts facts, ByteBuf reply) {
        try {
            remember(facts, reply);
        } finally {
            ended(facts);
        }
    }

    private void remember(CommandFacts facts, ByteBuf reply) {
        if (!ReplyFacts.of(reply).ok() || Header.opCode(reply) != OpCode.OP_MSG) {
            return;
        }
        OpMsg msg = OpMsg.parse(reply);
        BsonDocument body = BsonIo.decode(reply, msg.bodyOffset(), msg.sectionsEnd());
        int bytes = msg.sectionsEnd() - msg.bodyOffset();
        synchronized (this) {
            FirstRun known = bySession.get(facts.lsid());
            if (known == null || known.txnNumber() < facts.txnNumber()) {
                FirstRun replaced = bySession.put(facts.lsid(), new FirstRun(facts.txnNumber(), body, bytes));
                keptBytes += bytes - (replaced == null ? 0 : replaced.bytes());
                forgetTheLeastRecentPastTheBounds();
            }
        }
    }

    /**
     * A write's run ended, with a reply ({@link #ran}) or none (the member's connection closed, or it was answered in the
     * member's place): the retries that waited for it go on, and ask again.
     */
    void ended(CommandFacts facts) {
        List<Runnable> waited;
        synchronized (this) {
            waited = running.remove(Run.of(facts));
        }
        if (waited != null) {
            waited.forEach(Runnable::run);
        }
    }

    /** How many runs are at the member. */
    synchronized int running() {
        return running.size();
    }

    private void forgetTheLeastRecentPastTheBounds() {
        Iterator<Map.Entry<UUID, FirstRun>> leastRecentFirst = bySession.entrySet().iterator();
        while ((bySession.size() > MAX_SESSIONS || keptBytes > MAX_BYTES) && leastRecentFirst.hasNext()) {
            Map.Entry<UUID, FirstRun> next = leastRecentFirst.next();
            keptBytes -= next.getValue().bytes();
            if (bySession.size() > MAX_SESSIONS) {
                leastRecentFirst.remove();
            } else if (next.getValue().reply() != null) {
                next.setValue(next.getValue().withoutItsReply()); // that it ran is kept: its retry must not run again
            }
        }
    }
}
