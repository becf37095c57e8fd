package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.topology.MemberQuirks;
import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.Messages;
import io.blackpipe.wire.OpCode;
import io.blackpipe.wire.OpMsg;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

/** What RetriedWrites keeps of a session's writes, as mongod's table of sessions keeps it; the driver's side is RetriedWritesDriverTest. */
class RetriedWritesTest {
    private static final MemberQuirks REAPPLIES = new MemberQuirks(true, true, true, true, false, false, false, false, false);

    private static CommandFacts write(UUID lsid, long txnNumber) {
        return facts(lsid, txnNumber, false, 0);
    }

    private static CommandFacts facts(UUID lsid, long txnNumber, boolean inTransaction, int flags) {
        return new CommandFacts(7, OpCode.OP_MSG, "update", "shop", "counters", flags, lsid, txnNumber, inTransaction, "", false,
                false, null, 0);
    }

    private static void ran(RetriedWrites writes, CommandFacts facts, String reply) {
        ByteBuf frame = Messages.opMsg(UnpooledByteBufAllocator.DEFAULT, 1, 7, 0, BsonDocument.parse(reply));
        try {
            writes.ran(facts, frame);
        } finally {
            frame.release();
        }
    }

    /** The reply of the write's first run, which answers it, or null: it would run (asked only here, its run is ended). */
    private static BsonDocument firstRun(RetriedWrites writes, CommandFacts facts) {
        RetriedWrites.Turn turn = writes.turnOf(facts, null);
        if (turn == RetriedWrites.Turn.RUNS) {
            writes.ended(facts);
        }
        assertFalse(turn.waits(), "no run of it was at the member");
        return turn.ranBefore();
    }

    @Test
    void aWritesFirstRunAnswersItsRetryAndNoOtherWrite() {
        RetriedWrites writes = new RetriedWrites();
        UUID session = UUID.randomUUID();
        assertNull(firstRun(writes, write(session, 1)), "nothing ran yet");
        ran(writes, write(session, 1), "{n: 1, nModified: 1, ok: 1}");
        assertEquals(BsonDocument.parse("{n: 1, nModified: 1, ok: 1}"), firstRun(writes, write(session, 1)));
        assertNull(firstRun(writes, write(session, 2)), "the session's next write is new work");
        assertNull(firstRun(writes, write(UUID.randomUUID(), 1)), "another session's");
        ran(writes, write(session, 1), "{n: 1, nModified: 0, ok: 1}");
        assertEquals(1, firstRun(writes, write(session, 1)).getInt32("nModified").getValue(), "the first run's reply stays");
    }

    @Test
    void aFailedRunIsNotKeptAndASessionKeepsItsLatestWriteOnly() {
        RetriedWrites writes = new RetriedWrites();
        UUID session = UUID.randomUUID();
        ran(writes, write(session, 1), "{ok: 0, code: 91, codeName: 'ShutdownInProgress'}");
        assertNull(firstRun(writes, write(session, 1)), "a failed run is run again, as on mongod");
        ran(writes, write(session, 2), "{n: 1, ok: 1}");
        ran(writes, write(session, 1), "{n: 5, ok: 1}"); // an older txnNumber's late reply
        assertNull(firstRun(writes, write(session, 1)));
        assertEquals(1, firstRun(writes, write(session, 2)).getInt32("n").getValue());
    }

    @Test
    void onlyRetryableWritesOfAMemberThatRunsThemAgainAreTracked() {
        UUID session = UUID.randomUUID();
        assertTrue(RetriedWrites.tracked(write(session, 1), REAPPLIES));
        assertFalse(RetriedWrites.tracked(write(session, 1), MemberQuirks.NONE), "mongod keeps its own table");
        assertFalse(RetriedWrites.tracked(write(session, -1), REAPPLIES), "no txnNumber: not a retryable write");
        assertFalse(RetriedWrites.tracked(write(null, 1), REAPPLIES));
        assertFalse(RetriedWrites.tracked(facts(session, 1, true, 0), REAPPLIES), "a transaction's statement");
        assertFalse(RetriedWrites.tracked(facts(session, 1, false, OpMsg.MORE_TO_COME), REAPPLIES), "w:0: no reply to keep");
    }

    /** A findAndModify's reply holds its document: the replies kept are bounded in bytes too. */
    @Test
    void largeRepliesAreForgottenPastTheByteBound() {
        RetriedWrites writes = new RetriedWrites();
        String megabyte = "x".repeat(1 << 20);
        UUID first = UUID.randomUUID();
        ran(writes, write(first, 1), "{value: {_id: 1, blob: '" + megabyte + "'}, ok: 1}");
        UUID last = null;
        for (long kept = 1 << 20; kept <= RetriedWrites.MAX_BYTES; kept += 1 << 20) {
            last = UUID.randomUUID();
            ran(writes, write(last, 1), "{value: {_id: 1, blob: '" + megabyte + "'}, ok: 1}");
        }
        BsonDocument refused = firstRun(writes, write(first, 1));
        assertEquals(BsonDocument.parse("{ok: 0.0, errmsg: 'Incomplete history detected for transaction 1 on session " + first
                + "', code: 217, codeName: 'IncompleteTransactionHistory'}"), refused,
                "the least recently used reply was forgotten, not that its write ran: its retry is refused, never run again");
        assertTrue(writes.turnOf(write(first, 1), null).forgotten());
        assertNull(firstRun(writes, write(first, 2)), "the session's next write is new work");
        assertEquals(megabyte, firstRun(writes, write(last, 1)).getDocument("value").getString("blob").getValue());
    }

    @Test
    void theLeastRecentlyUsedSessionsAreForgottenPastTheBound() {
        RetriedWrites writes = new RetriedWrites();
        UUID first = UUID.randomUUID();
        UUID kept = UUID.randomUUID();
        ran(writes, write(first, 1), "{n: 1, ok: 1}");
        ran(writes, write(kept, 1), "{n: 1, ok: 1}");
        for (int i = 0; i < RetriedWrites.MAX_SESSIONS - 2; i++) {
            ran(writes, write(UUID.randomUUID(), 1), "{n: 1, ok: 1}");
        }
        firstRun(writes, write(kept, 1)); // used again: the most recent
        ran(writes, write(UUID.randomUUID(), 1), "{n: 1, ok: 1}"); // one past the bound
        assertNull(firstRun(writes, write(first, 1)), "the least recently used session was forgotten");
        assertEquals(BsonDocument.parse("{n: 1, ok: 1}"), firstRun(writes, write(kept, 1)));
    }

    /** As mongod checks a session out to one command: a retry sent while its first run is at the member waits for it. */
    @Test
    void aRetryWaitsForItsFirstRunAtTheMemberAndIsAnsweredFromIt() {
        RetriedWrites writes = new RetriedWrites();
        UUID session = UUID.randomUUID();
        assertEquals(RetriedWrites.Turn.RUNS, writes.turnOf(write(session, 1), null), "the first run goes to the member");
        AtomicInteger woken = new AtomicInteger();
        assertEquals(RetriedWrites.Turn.WAITS, writes.turnOf(write(session, 1), woken::incrementAndGet));
        assertEquals(RetriedWrites.Turn.WAITS, writes.turnOf(write(session, 1), woken::incrementAndGet), "a third attempt too");
        assertEquals(RetriedWrites.Turn.RUNS, writes.turnOf(write(session, 2), null), "the session's next write is another run");
        assertEquals(RetriedWrites.Turn.RUNS, writes.turnOf(write(UUID.randomUUID(), 1), null), "another session's");
        assertEquals(0, woken.get());
        assertEquals(3, writes.running());

        ran(writes, write(session, 1), "{n: 1, nModified: 1, ok: 1}");
        assertEquals(2, woken.get(), "each waiting attempt is woken once");
        assertEquals(BsonDocument.parse("{n: 1, nModified: 1, ok: 1}"), writes.turnOf(write(session, 1), null).ranBefore(),
                "and, asking again, answered from the run");
        assertEquals(2, writes.running());
    }

    @Test
    void aRetryRunsWhenItsFirstRunFailedOrWasNeverAnswered() {
        RetriedWrites writes = new RetriedWrites();
        UUID session = UUID.randomUUID();
        AtomicInteger woken = new AtomicInteger();
        writes.turnOf(write(session, 1), null);
        writes.turnOf(write(session, 1), woken::incrementAndGet);
        writes.ended(write(session, 1)); // its connection closed first
        assertEquals(1, woken.get());
        assertEquals(RetriedWrites.Turn.RUNS, writes.turnOf(write(session, 1), null), "nothing is known of the run: it runs");

        writes.turnOf(write(session, 1), woken::incrementAndGet);
        ran(writes, write(session, 1), "{ok: 0, code: 91, codeName: 'ShutdownInProgress'}");
        assertEquals(2, woken.get());
        assertEquals(RetriedWrites.Turn.RUNS, writes.turnOf(write(session, 1), null), "a failed run is run again, as on mongod");
        writes.ended(write(session, 1));
        assertEquals(0, writes.running());
    }
}
