package io.blackpipe.observe;

import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.ReplyFacts;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/** The observer of one client connection; used from that connection's event loop only. */
public final class ConnectionObserver {
    private static final int NAMESPACE_NOT_FOUND = 26;
    /**
     * Commands whose NamespaceNotFound drivers turn into a success (an empty list, nothing to drop, a
     * count of 0: estimatedDocumentCount runs count), as the Java driver's isNamespaceError callers do;
     * so do listSearchIndexes and, in drivers of 2021-22 (Go 1.8), estimatedDocumentCount as a $collStats count:
     * aggregates told apart by their first stage.
     */
    private static final Set<String> SUCCEEDS_ON_NAMESPACE_NOT_FOUND = Set.of("listIndexes", "drop", "dropIndexes", "count",
            "dropSearchIndex");
    private final CommandObserver shared;
    private final String member;
    private final long connectionId;
    /** By command label (bounded by {@link CommandNames}). */
    private final Map<String, CommandMeters> meters = new HashMap<>();
    /** The last command's meters: a connection mostly repeats one command, its name the same String. */
    private String lastCommand;
    private CommandMeters lastMeters;
    private String appName = "";

    ConnectionObserver(CommandObserver shared, String member, long connectionId) {
        this.shared = shared;
        this.member = member;
        this.connectionId = connectionId;
    }

    public long connectionId() {
        return connectionId;
    }

    public String appName() {
        return appName;
    }

    /** hello/isMaster: counted apart; the handshake also tells the connection's appName. */
    public void monitoring(CommandFacts facts) {
        if (facts.handshake() && facts.appName() != null) {
            appName = facts.appName();
        }
        shared.monitoring(CommandNames.label(facts.name()), member).increment();
    }

    /**
     * The authentication conversation of a connection's handshake (saslStart, saslContinue, and
     * MONGODB-X509's authenticate): the driver runs it on every new connection, before the app's first
     * command, and reports it to no CommandListener. Like the hellos, it is counted apart and left out
     * of the attempts, outcomes and history; rules still apply to it, and their faults are counted.
     */
    public static boolean isAuthentication(String commandName) {
        switch (commandName) {
            case "saslStart":
            case "saslContinue":
            case "authenticate":
                return true;
            default:
                return false;
        }
    }

    /** A command arrived: decide its attempt number and count it. */
    public Attempt begin(CommandFacts facts, long fingerprint) {
        long now = System.nanoTime();
        if (isAuthentication(facts.name())) {
            shared.monitoring(CommandNames.label(facts.name()), member).increment();
            return new Attempt(facts, member, appName, connectionId, 1, now, 0, null);
        }
        RetryTracker.Session session = shared.retries().sessionOf(facts, now);
        int attempt = shared.retries().attemptNumber(session, facts, fingerprint, now);
        CommandMeters m = meters(facts.name());
        m.attempts.increment();
        if (attempt > 1) {
            m.retries.increment();
        }
        return new Attempt(facts, member, appName, connectionId, attempt, now, shared.wallClock().epochMicros(now), session);
    }

    /**
     * A hello as the rules see it: the connection's first attempt of it, not counted as an
     * application command (hellos are counted apart, by {@link #monitoring}).
     */
    public Attempt helloForRules(CommandFacts facts) {
        return new Attempt(facts, member, appName, connectionId, 1, System.nanoTime(), 0, null);
    }

    public void faultInjected(Attempt attempt, String fault) {
        faultInjected(attempt.command(), fault);
    }

    /** A fault broke a command that has no attempt of its own (a monitor's awaitable hello, held before it came). */
    public void faultInjected(String command, String fault) {
        shared.fault(fault, CommandNames.label(command), member).increment();
    }

    /**
     * The attempt ended.
     *
     * @param fault     the fault applied to it, or null
     * @param errorCode the server's (or the injected) error code, 0 when none
     * @param forwarded whether the upstream answered it (only then is its round trip timed)
     */
    public void complete(Attempt attempt, long fingerprint, Outcome outcome, String fault, int errorCode,
                         boolean writeConcernError, boolean forwarded) {
        complete(attempt, fingerprint, outcome, fault, errorCode, writeConcernError, forwarded, null);
    }

    /** The attempt ended with the upstream's {@code reply} (the last one, of a stream), passed on to the client. */
    public void complete(Attempt attempt, long fingerprint, ReplyFacts reply, String fault) {
        complete(attempt, fingerprint, reply, fault, true);
    }

    /**
     * The attempt ended with a reply the proxy gave in the member's place (a rule's error or canned
     * reply), counted as the member's would be; it made no round trip to the member.
     */
    public void completeAnswered(Attempt attempt, long fingerprint, ReplyFacts reply, String fault) {
        complete(attempt, fingerprint, reply, fault, false);
    }

    /** As {@link #complete(Attempt, long, ReplyFacts, String)} when {@code forwarded}, else as {@link #completeAnswered}. */
    public void complete(Attempt attempt, long fingerprint, ReplyFacts reply, String fault, boolean forwarded) {
        complete(attempt, fingerprint, reply.isError() ? Outcome.ERROR : Outcome.OK, fault, reply.code(),
                reply.writeConcernError(), forwarded, reply);
    }

    private void complete(Attempt attempt, long fingerprint, Outcome outcome, String fault, int errorCode,
                          boolean writeConcernError, boolean forwarded, ReplyFacts reply) {
        if (isAuthentication(attempt.command())) {
            return; // counted apart when it began: no outcome, round trip or history line, as for a hello
        }
        long now = System.nanoTime();
        CommandMeters m = meters(attempt.command());
        m.outcome(outcome).increment();
        if (forwarded) {
            m.duration.record(now - attempt.startNanos(), now);
        }
        // A reply that only carries a writeConcernError (ok:1, no top-level code) is a success to the
        // driver: it never re-sends a command without txnNumber over it, so the same command next is
        // new work. So is NamespaceNotFound where drivers take it for an empty or done answer.
        boolean failed = outcome.failed() && !(writeConcernError && errorCode == 0)
                && !(errorCode == NAMESPACE_NOT_FOUND && answersNamespaceNotFound(attempt.facts()));
        shared.retries().completed(attempt.retrySession(), attempt.facts(), fingerprint, attempt.attemptNumber(), failed);
        CommandFacts facts = attempt.facts();
        long completedMicros = attempt.invokedAtMicros() + TimeUnit.NANOSECONDS.toMicros(now - attempt.startNanos());
        String type = outcome.historyType(writeConcernError);
        int code = errorCode;
        if (outcome == Outcome.OK && reply != null && reply.writeErrors()) {
            // ok: 1 with writeErrors: the driver's command succeeded, but the server refused writes of it (a
            // duplicate key, a validation failure). None applied (n: 0): it did not happen; some: it partly did.
            type = reply.n() == 0 ? "fail" : "info";
            code = reply.writeErrorCode();
        } else if (code == 0 && reply != null && reply.writeConcernError()) {
            code = reply.writeConcernErrorCode(); // ok: 1 with a writeConcernError: its code is the error's
        }
        shared.history().record(new HistoryEntry(attempt.invokedAtMicros(), completedMicros, member, appName,
                connectionId, facts.name(), facts.namespaceDatabase(), facts.namespaceCollection(), facts.lsid(), facts.txnNumber(),
                attempt.attemptNumber(), fault, outcome.label(), type, code), now);
    }

    private static boolean answersNamespaceNotFound(CommandFacts facts) {
        return SUCCEEDS_ON_NAMESPACE_NOT_FOUND.contains(facts.name()) || facts.firstStage().equals(CommandFacts.LIST_SEARCH_INDEXES)
                || facts.firstStage().equals(CommandFacts.COLL_STATS);
    }

    /** How many (command label) meters this connection holds on to. */
    int cachedMeters() {
        return meters.size();
    }

    private CommandMeters meters(String commandName) {
        if (commandName == lastCommand) { // identity: the connection's RecentStrings hands out the same instance
            return lastMeters;
        }
        // keyed by the label, not the name: every name a client makes up is "other", and a cache keyed by
        // names grew with each new one for as long as the connection lived
        String label = CommandNames.label(commandName);
        CommandMeters m = meters.get(label);
        if (m == null) {
            m = shared.meters(label, member, appName);
            meters.put(label, m);
        }
        lastCommand = commandName;
        lastMeters = m;
        return m;
    }
}
