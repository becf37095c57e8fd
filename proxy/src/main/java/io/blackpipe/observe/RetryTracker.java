package io.blackpipe.observe;

import io.blackpipe.wire.CommandFacts;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Recognises retries across all members (a retry often reaches a new primary through another
 * listener):
 * <ul>
 * <li>a write with the lsid and txnNumber of an earlier one is a retry (so is a commit or abort
 * of the same transaction);</li>
 * <li>any other command is a retry when the same session's previous command (of any kind) had
 * the same fingerprint and failed, or has not ended yet: a client re-sends a command it gave up
 * on (socket timeout) on another connection, possibly before the proxy sees the first connection
 * close.
 * The same read repeated after a success is not (sessions are pooled).</li>
 * </ul>
 * Memory is bounded: at most {@code maxSessions} sessions (past that, the least recently active
 * sixteenth is forgotten at once, so a stream of new sessions costs no scan per command), each
 * forgotten after {@code idleNanos} without activity (the server's session timeout is 30 minutes).
 *
 * <p>Every event loop asks about every command, so nothing here is shared but the map: each
 * session is locked on its own (one global lock, and a map reordered on every access, made each
 * command of each event loop write the same cache lines).
 */
public final class RetryTracker {
    /** One session's bookkeeping; an attempt keeps its own so that its end needs no second lookup. */
    public static final class Session {
        long txnNumber = -1;
        String txnCommand = "";
        int txnAttempts;
        long fingerprint;
        boolean lastFailed;
        /** The latest command has not ended yet (as far as the proxy has seen). */
        boolean outstanding;
        int attempts;
        volatile long lastSeenNanos;

        Session(long nowNanos) {
            lastSeenNanos = nowNanos;
        }
    }

    private final int maxSessions;
    private final long idleNanos;
    private final ConcurrentHashMap<UUID, Session> sessions = new ConcurrentHashMap<>();
    /** When idle sessions are next swept out; a session found idle before then starts over anyway. */
    private final AtomicLong nextSweepNanos = new AtomicLong(Long.MIN_VALUE);

    public RetryTracker(int maxSessions, long idleNanos) {
        this.maxSessions = maxSessions;
        this.idleNanos = idleNanos;
    }

    /** The attempt number of this command: 1 for a first attempt, 2 and up for retries. */
    public int attemptNumber(CommandFacts facts, long fingerprint, long nowNanos) {
        return attemptNumber(sessionOf(facts, nowNanos), facts, fingerprint, nowNanos);
    }

    /** The bookkeeping of the command's session (null without one), to pass to the other calls. */
    public Session sessionOf(CommandFacts facts, long nowNanos) {
        if (facts.lsid() == null) {
            return null;
        }
        sweepIfDue(nowNanos);
        return session(facts.lsid(), nowNanos);
    }

    /** {@link #attemptNumber(CommandFacts, long, long)} with the session already looked up. */
    public int attemptNumber(Session session, CommandFacts facts, long fingerprint, long nowNanos) {
        if (session == null) {
            return 1;
        }
        synchronized (session) {
            session.lastSeenNanos = nowNanos;
            return attemptNumber(session, facts, fingerprint);
        }
    }

    private static int attemptNumber(Session session, CommandFacts facts, long fingerprint) {
        if (facts.hasTxnNumber()) {
            // The session moved on: a command without txnNumber that failed before this one is not
            // retried after it (a driver retries at once, a session serves one operation at a time).
            session.attempts = 0;
            session.lastFailed = false;
            session.outstanding = false;
            boolean transactionEnd = facts.name().equals("commitTransaction") || facts.name().equals("abortTransaction");
            if (facts.inTransaction() && !transactionEnd) {
                return 1; // statements inside a transaction are never retried one by one
            }
            String command = facts.inTransaction() ? facts.name() : "";
            if (session.txnNumber == facts.txnNumber() && session.txnCommand.equals(command)) {
                return ++session.txnAttempts;
            }
            session.txnNumber = facts.txnNumber();
            session.txnCommand = command;
            session.txnAttempts = 1;
            return 1;
        }
        if (session.attempts > 0 && session.fingerprint == fingerprint && (session.lastFailed || session.outstanding)) {
            session.lastFailed = false;
            session.outstanding = true;
            return ++session.attempts;
        }
        session.fingerprint = fingerprint;
        session.lastFailed = false;
        session.outstanding = true;
        session.attempts = 1;
        return 1;
    }

    /** Records how the latest attempt of a command without txnNumber ended, so that a repeat after a failure counts as a retry. */
    public void completed(CommandFacts facts, long fingerprint, boolean failed) {
        completed(facts, fingerprint, 0, failed);
    }

    /**
     * Records how attempt {@code attemptNumber} ended (0: the latest). An earlier attempt ending
     * late (a hung one whose connection the client closed after already retrying) changes nothing.
     */
    public void completed(CommandFacts facts, long fingerprint, int attemptNumber, boolean failed) {
        completed(facts.lsid() == null ? null : sessions.get(facts.lsid()), facts, fingerprint, attemptNumber, failed);
    }

    /** The same, with the session the attempt began in (a session forgotten meanwhile takes no harm). */
    public void completed(Session session, CommandFacts facts, long fingerprint, int attemptNumber, boolean failed) {
        if (session == null || facts.hasTxnNumber()) {
            return;
        }
        synchronized (session) {
            if (session.fingerprint == fingerprint && (attemptNumber == 0 || attemptNumber == session.attempts)) {
                session.lastFailed = failed;
                session.outstanding = false;
            }
        }
    }

    /**
     * Forgets every session: whatever comes next is a first attempt unless it repeats something
     * sent after this (a test's first command is no retry of the previous test's last). An attempt
     * still in flight ends in the session it began in, which nothing asks about any more.
     */
    public void forgetAll() {
        sessions.clear();
    }

    /** How many sessions are remembered (idle ones until the next sweep, due every quarter of the idle time). */
    public int trackedSessions() {
        return sessions.size();
    }

    /** The session's record; a new one when it is unknown or was idle too long (then it is new work). */
    private Session session(UUID lsid, long nowNanos) {
        Session session = sessions.get(lsid);
        if (session != null && nowNanos - session.lastSeenNanos <= idleNanos) {
            return session;
        }
        Session fresh = new Session(nowNanos);
        if (session != null && sessions.replace(lsid, session, fresh)) {
            return fresh;
        }
        Session raced = sessions.putIfAbsent(lsid, fresh);
        if (raced != null) {
            return raced; // the same session's command on another event loop got there first
        }
        if (sessions.size() > maxSessions) {
            evictLeastRecentlyActive(lsid);
        }
        return fresh;
    }

    private void sweepIfDue(long nowNanos) {
        long due = nextSweepNanos.get();
        if ((due == Long.MIN_VALUE || nowNanos - due >= 0) && nextSweepNanos.compareAndSet(due, nowNanos + Math.max(1, idleNanos / 4))) {
            sweep(nowNanos);
        }
    }

    private void sweep(long nowNanos) {
        sessions.values().removeIf(session -> nowNanos - session.lastSeenNanos > idleNanos);
    }

    /** Forgets the least recently active sixteenth of the sessions (at least one), never {@code keep}. */
    private synchronized void evictLeastRecentlyActive(UUID keep) {
        int excess = sessions.size() - maxSessions;
        if (excess <= 0) {
            return; // another thread evicted meanwhile
        }
        int count = Math.max(excess, maxSessions / 16);
        List<Map.Entry<UUID, Long>> byActivity = new ArrayList<>(sessions.size());
        sessions.forEach((lsid, session) -> byActivity.add(Map.entry(lsid, session.lastSeenNanos)));
        byActivity.sort(Map.Entry.comparingByValue());
        for (Map.Entry<UUID, Long> eldest : byActivity) {
            if (count == 0) {
                return;
            }
            if (!eldest.getKey().equals(keep)) {
                sessions.remove(eldest.getKey());
                count--;
            }
        }
    }
}
