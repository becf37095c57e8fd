package io.blackpipe.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.OpCode;
import io.blackpipe.wire.OpMsg;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Retry recognition from message sequences alone, the way the proxy sees them: each command is a
 * {@link CommandFacts} (built directly, as the wire scan would produce it) plus the fingerprint of
 * its body; the connection or member a command arrives on plays no part, so it does not appear.
 */
class RetryTrackerTest {
    private static final long IDLE = TimeUnit.MINUTES.toNanos(30);
    private static final long FIND_A = 0xA;
    private static final long FIND_B = 0xB;

    private final RetryTracker tracker = new RetryTracker(1000, IDLE);
    private final UUID session = UUID.randomUUID();
    private long now = 1_000_000_000L;
    private int requestIds;

    // ---------------------------------------------------------------- fixtures

    private CommandFacts command(String name, UUID lsid, long txnNumber, boolean inTransaction, int flags) {
        return new CommandFacts(++requestIds, OpCode.OP_MSG, name, "db", name.equals("commitTransaction")
                || name.equals("abortTransaction") ? "" : "c", flags, lsid, txnNumber, inTransaction,
                "", false, false, null, 0);
    }

    /** A retryable write: lsid + txnNumber, outside a transaction. */
    private CommandFacts write(String name, UUID lsid, long txnNumber) {
        return command(name, lsid, txnNumber, false, 0);
    }

    /** A statement of a multi-document transaction (autocommit: false). */
    private CommandFacts inTransaction(String name, UUID lsid, long txnNumber) {
        return command(name, lsid, txnNumber, true, 0);
    }

    /** A read (or any other command without txnNumber) in a session. */
    private CommandFacts read(String name, UUID lsid) {
        return command(name, lsid, -1, false, 0);
    }

    /** Begins an attempt the way ConnectionObserver does, a millisecond after the previous one. */
    private int attempt(CommandFacts facts, long fingerprint) {
        now += TimeUnit.MILLISECONDS.toNanos(1);
        return tracker.attemptNumber(facts, fingerprint, now);
    }

    private int attemptThatEnds(CommandFacts facts, long fingerprint, boolean failed) {
        int n = attempt(facts, fingerprint);
        tracker.completed(facts, fingerprint, failed);
        return n;
    }

    // ---------------------------------------------------------------- writes

    @Test
    void aWriteWithTheLsidAndTxnNumberOfAnEarlierOneIsARetryWhateverItsFateAndWhereverItArrives() {
        CommandFacts insert = write("insert", session, 1);
        assertEquals(1, attempt(insert, 0));
        // ended or not, forwarded or faulted: the same lsid + txnNumber again is the retry. The
        // tracker is shared by every listener, so this holds for an attempt that reaches another
        // member (a new primary) too: nothing in the decision depends on the connection.
        assertEquals(2, attempt(write("insert", session, 1), 0));
        assertEquals(3, attempt(write("insert", session, 1), 0), "a driver with timeoutMS may retry again");
    }

    @Test
    void aWriteRetryIsRecognisedEvenIfTheFirstAttemptSucceeded() {
        // dropReply: the upstream applied and answered the write, the client never saw it.
        assertEquals(1, attemptThatEnds(write("update", session, 5), 0, false));
        assertEquals(2, attemptThatEnds(write("update", session, 5), 0, false));
    }

    @Test
    void aNewTxnNumberIsAFirstAttempt() {
        assertEquals(1, attempt(write("insert", session, 1), 0));
        assertEquals(2, attempt(write("insert", session, 1), 0));
        assertEquals(1, attempt(write("insert", session, 2), 0), "the next operation of the session");
        assertEquals(1, attempt(write("update", session, 3), 0));
        assertEquals(2, attempt(write("update", session, 3), 0));
    }

    @Test
    void theSameTxnNumberInAnotherSessionIsAnotherWrite() {
        UUID other = UUID.randomUUID();
        assertEquals(1, attempt(write("insert", session, 1), 0));
        assertEquals(1, attempt(write("insert", other, 1), 0));
        assertEquals(2, attempt(write("insert", other, 1), 0));
        assertEquals(2, attempt(write("insert", session, 1), 0));
    }

    @Test
    void statementsInsideATransactionAreNotRetriesButItsCommitAndAbortAre() {
        assertEquals(1, attempt(inTransaction("insert", session, 7), 0));
        assertEquals(1, attempt(inTransaction("insert", session, 7), 0), "the second statement");
        assertEquals(1, attempt(inTransaction("update", session, 7), 0));
        assertEquals(1, attempt(inTransaction("find", session, 7), 0), "reads inside the transaction too");
        assertEquals(1, attempt(inTransaction("commitTransaction", session, 7), 0));
        assertEquals(2, attempt(inTransaction("commitTransaction", session, 7), 0), "commit retried");
        assertEquals(3, attempt(inTransaction("commitTransaction", session, 7), 0));

        assertEquals(1, attempt(inTransaction("insert", session, 8), 0), "the next transaction");
        assertEquals(1, attempt(inTransaction("abortTransaction", session, 8), 0));
        assertEquals(2, attempt(inTransaction("abortTransaction", session, 8), 0), "abort retried");
        assertEquals(1, attempt(inTransaction("commitTransaction", session, 9), 0), "a commit of a new txnNumber");
    }

    @Test
    void commitAndAbortOfTheSameTransactionAreNotRetriesOfEachOther() {
        assertEquals(1, attempt(inTransaction("commitTransaction", session, 4), 0));
        assertEquals(1, attempt(inTransaction("abortTransaction", session, 4), 0));
    }

    // ---------------------------------------------------------------- reads and other commands without txnNumber

    @Test
    void theSameReadAfterAFailureIsARetry() {
        assertEquals(1, attemptThatEnds(read("find", session), FIND_A, true));
        assertEquals(2, attemptThatEnds(read("find", session), FIND_A, false));
    }

    @Test
    void eachFailureInARowMakesTheNextSameReadTheNextAttempt() {
        assertEquals(1, attemptThatEnds(read("aggregate", session), FIND_A, true));
        assertEquals(2, attemptThatEnds(read("aggregate", session), FIND_A, true));
        assertEquals(3, attemptThatEnds(read("aggregate", session), FIND_A, false));
        assertEquals(1, attemptThatEnds(read("aggregate", session), FIND_A, false), "after the success it is new work");
    }

    @Test
    void theSameReadAfterASuccessIsNotARetry() {
        // drivers pool sessions: the same read of the next request reuses the lsid
        assertEquals(1, attemptThatEnds(read("find", session), FIND_A, false));
        assertEquals(1, attemptThatEnds(read("find", session), FIND_A, false));
        assertEquals(1, attemptThatEnds(read("find", session), FIND_A, false));
    }

    @Test
    void aDifferentReadAfterAFailureIsNotARetry() {
        assertEquals(1, attemptThatEnds(read("find", session), FIND_A, true));
        assertEquals(1, attemptThatEnds(read("find", session), FIND_B, false));
        assertEquals(1, attemptThatEnds(read("find", session), FIND_A, false), "A's failure is no longer the last word");
    }

    @Test
    void theSameReadInAnotherSessionAfterAFailureIsNotARetry() {
        assertEquals(1, attemptThatEnds(read("find", session), FIND_A, true));
        assertEquals(1, attemptThatEnds(read("find", UUID.randomUUID()), FIND_A, false));
        assertEquals(2, attemptThatEnds(read("find", session), FIND_A, false), "the failed session's retry is still one");
    }

    @Test
    void aWriteBetweenAFailedReadAndTheSameReadMakesTheReadNewWork() {
        assertEquals(1, attemptThatEnds(read("find", session), FIND_A, true));
        assertEquals(1, attempt(write("insert", session, 3), 0), "the session moved on: the failed read was not retried");
        assertEquals(1, attemptThatEnds(read("find", session), FIND_A, true), "the same read later is new work");
        assertEquals(2, attempt(write("insert", session, 3), 0), "the write's own retry is still one");
        assertEquals(1, attempt(read("find", session), FIND_A), "after a write again");
    }

    @Test
    void aStatementOfATransactionAlsoEndsTheReadsChain() {
        assertEquals(1, attemptThatEnds(read("find", session), FIND_A, true));
        assertEquals(1, attempt(inTransaction("find", session, 7), 0));
        assertEquals(1, attempt(read("find", session), FIND_A));
    }

    @Test
    void aReadReSentWhileItsPreviousAttemptIsStillOutstandingIsARetry() {
        // socket timeout: the driver closes the connection and re-sends on an idle pooled one, which
        // may reach the proxy before it has seen the first connection close
        assertEquals(1, attempt(read("find", session), FIND_A));
        assertEquals(2, attempt(read("find", session), FIND_A));
        tracker.completed(read("find", session), FIND_A, 2, false);
        tracker.completed(read("find", session), FIND_A, 1, true); // the hung attempt ends late, when its connection closes
        assertEquals(1, attemptThatEnds(read("find", session), FIND_A, false), "the late failure of attempt 1 is not the last word");
    }

    @Test
    void aLateEndOfAnEarlierAttemptDoesNotEndTheOutstandingRetry() {
        assertEquals(1, attempt(read("find", session), FIND_A));
        assertEquals(2, attempt(read("find", session), FIND_A));
        tracker.completed(read("find", session), FIND_A, 1, true);
        assertEquals(3, attempt(read("find", session), FIND_A), "attempt 2 is still outstanding: this re-sends it");
    }

    @Test
    void aLateCompletionOfAnotherCommandDoesNotMarkTheSessionFailed() {
        assertEquals(1, attempt(read("find", session), FIND_A));
        tracker.completed(read("find", session), FIND_B, true); // not the session's latest command
        tracker.completed(read("find", session), FIND_A, false);
        assertEquals(1, attemptThatEnds(read("find", session), FIND_A, false));
    }

    /**
     * As ConnectionObserver reports ends (with the attempt's number): B hung and the client gave up on it, the session's
     * next command A succeeded, then B's connection closed. That late failure is B's, not A's: A sent again (the next
     * request of a pooled session) is new work, not A's retry.
     */
    @Test
    void aLateFailureOfAnotherCommandDoesNotMakeTheNextSameReadARetry() {
        CommandFacts find = read("find", session);
        assertEquals(1, attempt(find, FIND_B));
        assertEquals(1, attempt(find, FIND_A), "another command: new work");
        tracker.completed(find, FIND_A, 1, false);
        tracker.completed(find, FIND_B, 1, true); // B's attempt 1 ends late; A's attempt 1 is the session's latest
        assertEquals(1, attempt(find, FIND_A));
    }

    @Test
    void throughTheConnectionObserverOnlyARealFailureMakesTheSameCommandNextARetry() {
        CommandObserver shared = new CommandObserver(new SimpleMeterRegistry(), new RetryTracker(100, IDLE), History.inMemory(10));
        ConnectionObserver connection = shared.forConnection("127.0.0.1:27017");
        CommandFacts find = read("find", session);
        // ok:1 with only a writeConcernError: the driver took the reply, it will not re-send
        connection.complete(connection.begin(find, FIND_A), FIND_A, Outcome.ERROR, "writeConcernError", 0, true, true);
        Attempt again = connection.begin(find, FIND_A);
        assertEquals(1, again.attemptNumber());
        connection.complete(again, FIND_A, Outcome.ERROR, "errorReply", 10107, false, false);
        Attempt retry = connection.begin(find, FIND_A);
        assertEquals(2, retry.attemptNumber(), "after a server error reply the same command is a retry");
        connection.complete(retry, FIND_A, Outcome.NETWORK_ERROR, "dropReply", 0, false, true);
        assertEquals(3, connection.begin(find, FIND_A).attemptNumber(), "after a network error too");
    }

    @Test
    void eventLoopsAskingAtOnceKeepEachSessionsCountExact() throws InterruptedException {
        RetryTracker shared = new RetryTracker(1000, IDLE);
        int threads = 4;
        List<AssertionError> failures = new CopyOnWriteArrayList<>();
        List<Thread> loops = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread loop = new Thread(() -> {
                try {
                    for (int round = 0; round < 2_000; round++) {
                        // pooled sessions: every loop uses the same ones, one command at a time per session
                        UUID lsid = new UUID(0, (round * 7L + Thread.currentThread().getId()) % 50);
                        CommandFacts find = read("find", lsid);
                        synchronized (lsid.toString().intern()) {
                            long fingerprint = round;
                            assertEquals(1, shared.attemptNumber(find, fingerprint, System.nanoTime()));
                            shared.completed(find, fingerprint, true);
                            assertEquals(2, shared.attemptNumber(find, fingerprint, System.nanoTime()));
                            shared.completed(find, fingerprint, false);
                        }
                    }
                } catch (AssertionError e) {
                    failures.add(e);
                }
            });
            loops.add(loop);
            loop.start();
        }
        for (Thread loop : loops) {
            loop.join();
        }
        assertEquals(List.of(), failures);
        assertEquals(50, shared.trackedSessions());
    }

    // ---------------------------------------------------------------- no session

    @Test
    void commandsWithoutLsidAreAlwaysFirstAttempts() {
        CommandFacts w0 = command("insert", null, -1, false, OpMsg.MORE_TO_COME);
        assertEquals(1, attemptThatEnds(w0, 0, true));
        assertEquals(1, attemptThatEnds(w0, 0, true));
        CommandFacts withTxnNumberButNoSession = write("insert", null, 1);
        assertEquals(1, attempt(withTxnNumberButNoSession, 0));
        assertEquals(1, attempt(withTxnNumberButNoSession, 0));
        CommandFacts read = read("find", null);
        assertEquals(1, attemptThatEnds(read, FIND_A, true));
        assertEquals(1, attemptThatEnds(read, FIND_A, true));
        assertEquals(0, tracker.trackedSessions(), "nothing is remembered without a session");
    }

    // ---------------------------------------------------------------- bounded memory

    @Test
    void maxSessionsEvictsTheLeastRecentlyUsedSession() {
        RetryTracker small = new RetryTracker(2, IDLE);
        UUID a = UUID.randomUUID();
        UUID b = UUID.randomUUID();
        UUID c = UUID.randomUUID();
        assertEquals(1, small.attemptNumber(write("insert", a, 1), 0, 10));
        assertEquals(1, small.attemptNumber(write("insert", b, 1), 0, 20));
        assertEquals(2, small.attemptNumber(write("insert", a, 1), 0, 30), "a is now the most recently used");
        assertEquals(1, small.attemptNumber(write("insert", c, 1), 0, 40), "c evicts b, the least recently used");
        assertEquals(2, small.trackedSessions());
        assertEquals(3, small.attemptNumber(write("insert", a, 1), 0, 50), "a survived");
        assertEquals(2, small.attemptNumber(write("insert", c, 1), 0, 60), "c survived");
        assertEquals(1, small.attemptNumber(write("insert", b, 1), 0, 70), "b was forgotten: its retry looks new");
        assertEquals(2, small.trackedSessions());
        assertEquals(1, small.attemptNumber(write("insert", a, 1), 0, 80), "b's return evicted a, then least recently used");
    }

    @Test
    void maxSessionsHoldsUnderManySessionsAndKeepsTheMostRecent() {
        RetryTracker small = new RetryTracker(100, IDLE);
        UUID[] lsids = new UUID[10_000];
        for (int i = 0; i < lsids.length; i++) {
            lsids[i] = UUID.randomUUID();
            small.attemptNumber(write("insert", lsids[i], 1), 0, i);
            assertTrue(small.trackedSessions() <= 100);
        }
        // past the limit the least recently active sixteenth goes at once (no scan per new session)
        assertTrue(small.trackedSessions() >= 100 - 100 / 16, "at most a sixteenth below the limit: " + small.trackedSessions());
        for (int i = lsids.length - (100 - 100 / 16); i < lsids.length; i++) {
            assertEquals(2, small.attemptNumber(write("insert", lsids[i], 1), 0, lsids.length + i), "recent session " + i + " kept");
        }
    }

    /**
     * Event loops read the clock before they reach the map, so the session just added may look older than one another
     * loop touched a moment later; past maxSessions it is still the other that goes, or the new session's retry would look
     * new.
     */
    @Test
    void theSessionJustAddedIsNeverTheOneEvictedEvenWithAnEarlierClock() {
        RetryTracker one = new RetryTracker(1, IDLE);
        UUID a = UUID.randomUUID();
        UUID b = UUID.randomUUID();
        assertEquals(1, one.attemptNumber(write("insert", a, 1), 0, 100));
        assertEquals(1, one.attemptNumber(write("insert", b, 1), 0, 50), "b's loop read its clock before a's command");
        assertEquals(1, one.trackedSessions());
        assertEquals(2, one.attemptNumber(write("insert", b, 1), 0, 60), "b was kept: its retry is one");
        assertEquals(1, one.attemptNumber(write("insert", a, 1), 0, 70), "a was evicted: its retry looks new");
    }

    @Test
    void idleSessionsAreForgottenAfterIdleNanos() {
        long idle = 1_000;
        RetryTracker tracker = new RetryTracker(100, idle);
        UUID a = UUID.randomUUID();
        UUID b = UUID.randomUUID();
        assertEquals(1, tracker.attemptNumber(write("insert", a, 1), 0, 0));
        assertEquals(1, tracker.attemptNumber(write("insert", b, 1), 0, 500));
        assertEquals(2, tracker.attemptNumber(write("insert", a, 1), 0, 1_000), "idle exactly idleNanos: still known");
        assertEquals(2, tracker.trackedSessions());

        // b last active at 500: at 1_501 it has been idle longer than idleNanos
        assertEquals(1, tracker.attemptNumber(write("insert", b, 1), 0, 1_501), "b was forgotten");
        assertEquals(2, tracker.trackedSessions());

        // any activity expires every session idle for too long, not just the one asked about
        UUID c = UUID.randomUUID();
        tracker.attemptNumber(write("insert", c, 1), 0, 10_000);
        assertEquals(1, tracker.trackedSessions(), "a and b expired when c arrived");
        assertEquals(1, tracker.attemptNumber(write("insert", a, 1), 0, 10_001), "a was forgotten");
    }

    @Test
    void aSessionIdleTooLongIsNewWorkEvenBeforeTheNextSweep() {
        RetryTracker tracker = new RetryTracker(100, 100);
        UUID a = UUID.randomUUID();
        assertEquals(1, tracker.attemptNumber(write("insert", a, 1), 0, 0)); // a sweep, the next one due at 25
        tracker.attemptNumber(write("insert", UUID.randomUUID(), 1), 0, 90); // a sweep, the next one due at 115
        assertEquals(1, tracker.attemptNumber(write("insert", a, 1), 0, 101), "idle 101ns of 100: its retry looks new");
        assertEquals(2, tracker.attemptNumber(write("insert", a, 1), 0, 102), "and the session starts over from there");
        assertEquals(2, tracker.trackedSessions());
    }

    @Test
    void idleSessionsAreSweptEveryQuarterOfTheIdleTime() {
        RetryTracker tracker = new RetryTracker(100, 100);
        tracker.attemptNumber(write("insert", UUID.randomUUID(), 1), 0, 0); // swept at once; the next sweep is due at 25
        tracker.attemptNumber(write("insert", UUID.randomUUID(), 1), 0, 90); // due: nothing idle yet; the next is due at 115
        tracker.attemptNumber(write("insert", UUID.randomUUID(), 1), 0, 110);
        assertEquals(3, tracker.trackedSessions(), "the first, idle since 0, stays until the sweep due at 115");
        tracker.attemptNumber(write("insert", UUID.randomUUID(), 1), 0, 115);
        assertEquals(3, tracker.trackedSessions(), "swept at 115 exactly");
    }

    @Test
    void forgetAllMakesWhatComesNextAFirstAttempt() {
        CommandFacts find = read("find", session);
        assertEquals(1, attemptThatEnds(find, FIND_A, true));
        assertEquals(1, attempt(write("insert", UUID.randomUUID(), 3), 0));
        tracker.forgetAll();
        assertEquals(0, tracker.trackedSessions());
        assertEquals(1, attempt(find, FIND_A), "the failed read is no longer remembered: the next test's first command is no retry");
    }

    @Test
    void anIdleReadFailureIsForgottenToo() {
        RetryTracker tracker = new RetryTracker(100, 1_000);
        CommandFacts find = read("find", session);
        assertEquals(1, tracker.attemptNumber(find, FIND_A, 0));
        tracker.completed(find, FIND_A, true);
        assertEquals(1, tracker.attemptNumber(find, FIND_A, 5_000), "after the session timeout the same read is new work");
        tracker.completed(find, FIND_A, true);
        assertEquals(2, tracker.attemptNumber(find, FIND_A, 5_500));
    }
}
