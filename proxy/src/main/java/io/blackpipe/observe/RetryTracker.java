package io.blackpipe.observe;

import io.blackpipe.wire.CommandFacts;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

/**
 * Recognises retries across all members (a retry often reaches a new primary through another
 * listener):
 * <ul>
 * <li>a write with the lsid and txnNumber of an earlier one is a retry (so is a commit or abort
 * of the same transaction);</li>
 * <li>any other command is a retry when the same session's previous command had the same
 * fingerprint and failed, or has not ended yet: a client re-sends a command it gave up on (socket
 * timeout) on another connection, possibly before the proxy sees the first connection close.
 * The same read repeated after a success is not (sessions are pooled).</li>
 * </ul>
 * Memory is bounded: at most {@code maxSessions} sessions, each forgotten after {@code idleNanos}
 * without activity (the server's session timeout is 30 minutes).
 */
public final class RetryTracker {
    private static final class Session {
        long txnNumber = -1;
        String txnCommand = "";
        int txnAttempts;
        long fingerprint;
        boolean lastFailed;
        /** The latest command has not ended yet (as far as the proxy has seen). */
        boolean outstanding;
        int attempts;
        long lastSeenNanos;
    }

    private final int maxSessions;
    private final long idleNanos;
    private final Map<UUID, Session> sessions;

    public RetryTracker(int maxSessions, long idleNanos) {
        this.maxSessions = maxSessions;
        this.idleNanos = idleNanos;
        this.sessions = new LinkedHashMap<>(256, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<UUID, Session> eldest) {
                return size() > RetryTracker.this.maxSessions;
            }
        };
    }

    /** The attempt number of this command: 1 for a first attempt, 2 and up for retries. */
    public synchronized int attemptNumber(CommandFacts facts, long fingerprint, long nowNanos) {
        if (facts.lsid() == null) {
            return 1;
        }
        expireIdle(nowNanos);
        Session session = sessions.computeIfAbsent(facts.lsid(), id -> new Session());
        session.lastSeenNanos = nowNanos;
        if (facts.hasTxnNumber()) {
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
    public synchronized void completed(CommandFacts facts, long fingerprint, boolean failed) {
        completed(facts, fingerprint, 0, failed);
    }

    /**
     * Records how attempt {@code attemptNumber} ended (0: the latest). An earlier attempt ending
     * late (a hung one whose connection the client closed after already retrying) changes nothing.
     */
    public synchronized void completed(CommandFacts facts, long fingerprint, int attemptNumber, boolean failed) {
        if (facts.lsid() == null || facts.hasTxnNumber()) {
            return;
        }
        Session session = sessions.get(facts.lsid());
        if (session != null && session.fingerprint == fingerprint && (attemptNumber == 0 || attemptNumber == session.attempts)) {
            session.lastFailed = failed;
            session.outstanding = false;
        }
    }

    public synchronized int trackedSessions() {
        return sessions.size();
    }

    private void expireIdle(long nowNanos) {
        Iterator<Session> eldestFirst = sessions.values().iterator();
        while (eldestFirst.hasNext()) {
            if (nowNanos - eldestFirst.next().lastSeenNanos <= idleNanos) {
                return;
            }
            eldestFirst.remove();
        }
    }
}
