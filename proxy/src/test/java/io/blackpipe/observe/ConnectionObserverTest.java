package io.blackpipe.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.Meters;
import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.OpCode;
import io.blackpipe.wire.ReplyFacts;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class ConnectionObserverTest {
    private static final String MEMBER = "127.0.0.1:27017";
    private static final UUID SESSION = UUID.fromString("00112233-4455-6677-8899-aabbccddeeff");
    private static final long FIND_A = 0xA;

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final History history = History.inMemory(100);
    private final CommandObserver shared = new CommandObserver(registry, new RetryTracker(100, TimeUnit.MINUTES.toNanos(30)), history);
    private final ConnectionObserver connection = shared.forConnection(MEMBER);

    private static CommandFacts command(String name) {
        return new CommandFacts(1, OpCode.OP_MSG, name, "db", "c", 0, null, -1, false, "", false, false, null, 0);
    }

    /** A command in a session without txnNumber: a read, retried when the same is re-sent after a failure. */
    private static CommandFacts inSession(String name, String firstStage) {
        return new CommandFacts(1, OpCode.OP_MSG, name, "db", "c", 0, SESSION, -1, false, firstStage, false, false, null, 0);
    }

    private static CommandFacts handshake(String name, String appName) {
        return new CommandFacts(1, OpCode.OP_MSG, name, "admin", "", 0, null, -1, false, "", true, false, appName, 0);
    }

    private HistoryEntry last() {
        List<HistoryEntry> entries = history.recent();
        return entries.get(entries.size() - 1);
    }

    @Test
    void aClientSendingEverNewCommandNamesOnOneConnectionCannotGrowItsMeterCache() {
        // Every unknown name counts under the label "other": the connection's cache of meters must be
        // bounded by the labels, not by the names a client makes up (one long-lived connection, a fuzzer).
        for (int i = 0; i < 50_000; i++) {
            CommandFacts facts = command("madeUp" + i);
            connection.complete(connection.begin(facts, i), i, Outcome.ERROR, null, 59, false, true);
        }
        connection.complete(connection.begin(command("find"), 1), 1, Outcome.OK, null, 0, false, true);
        assertEquals(50_000, registry.find("blackpipe.command.attempts").tag("command", "other").counter().count());
        assertEquals(1, registry.find("blackpipe.command.attempts").tag("command", "find").counter().count());
        assertEquals(2, connection.cachedMeters(), "meters cached on the connection: one per label, other and find");
    }

    @Test
    void aRetryIsCountedAsAnAttemptAndAsARetry() {
        CommandFacts find = inSession("find", "");
        Attempt first = connection.begin(find, FIND_A);
        assertEquals(1, first.attemptNumber());
        assertFalse(first.isRetry());
        connection.complete(first, FIND_A, Outcome.ERROR, "errorReply", 10107, false, false);
        assertEquals(0, Meters.retries(registry, "find"), "a first attempt is no retry");
        Attempt retry = connection.begin(find, FIND_A);
        assertEquals(2, retry.attemptNumber());
        assertTrue(retry.isRetry());
        connection.complete(retry, FIND_A, Outcome.OK, null, 0, false, true);
        assertEquals(2, Meters.attempts(registry, "find"));
        assertEquals(1, Meters.retries(registry, "find"));
        assertEquals(2, last().attempt());
    }

    @Test
    void eachOutcomeIsCountedAndWrittenToTheHistoryAsJepsensOkFailOrInfo() {
        record Case(Outcome outcome, boolean writeConcernError, int code, String label, String type) {
        }
        List<Case> cases = List.of(
                new Case(Outcome.OK, false, 0, "ok", "ok"),
                new Case(Outcome.ERROR, false, 11600, "error", "fail"),
                new Case(Outcome.ERROR, true, 64, "error", "info"), // a writeConcernError: the write may have happened
                new Case(Outcome.NETWORK_ERROR, false, 0, "network_error", "info"),
                new Case(Outcome.NO_REPLY, false, 0, "no_reply", "info"));
        for (Case c : cases) {
            long before = Meters.outcomes(registry, "insert", c.label());
            Attempt attempt = connection.begin(command("insert"), 1);
            connection.complete(attempt, 1, c.outcome(), "fault", c.code(), c.writeConcernError(), true);
            HistoryEntry entry = last();
            assertEquals(c.label(), entry.outcome(), c.toString());
            assertEquals(c.type(), entry.type(), c.toString());
            assertEquals(c.code(), entry.errorCode(), c.toString());
            assertEquals(before + 1, Meters.outcomes(registry, "insert", c.label()), c.toString());
            assertEquals("insert", entry.command());
            assertEquals("db.c", entry.namespace());
            assertEquals(MEMBER, entry.member());
            assertEquals(connection.connectionId(), entry.connectionId());
            assertEquals("fault", entry.fault());
            assertEquals(attempt.invokedAtMicros(), entry.invokedAtMicros());
            assertTrue(entry.completedAtMicros() >= entry.invokedAtMicros()
                    && entry.completedAtMicros() - entry.invokedAtMicros() < TimeUnit.MINUTES.toMicros(1),
                    "completed after it was invoked, by the time it took: " + entry);
        }
        assertEquals(cases.size(), history.recent().size());
        assertTrue(Outcome.ERROR.failed() && Outcome.NETWORK_ERROR.failed());
        assertTrue(!Outcome.OK.failed() && !Outcome.NO_REPLY.failed(), "the client knows it did not fail, or does not wait");
    }

    @Test
    void theReplyTellsTheOutcomeAndTheCodeOfARefusedWrite() {
        // ok: 1 with writeErrors refusing every write: it did not happen
        connection.complete(connection.begin(command("insert"), 1), 1, new ReplyFacts(true, 0, false, false, true, 11000, 0, 0), null);
        assertEquals("ok", last().outcome());
        assertEquals("fail", last().type());
        assertEquals(11000, last().errorCode());
        // some writes applied: it partly did
        connection.complete(connection.begin(command("insert"), 1), 1, new ReplyFacts(true, 0, false, false, true, 121, 2, 0), null);
        assertEquals("info", last().type());
        assertEquals(121, last().errorCode());
        // ok: 1 with a writeConcernError: an error reply, with the writeConcernError's code
        connection.complete(connection.begin(command("insert"), 1), 1, new ReplyFacts(true, 0, true, false, false, 0, 1, 64), null);
        assertEquals("error", last().outcome());
        assertEquals("info", last().type());
        assertEquals(64, last().errorCode());
        // a command error answered in the member's place
        connection.completeAnswered(connection.begin(command("insert"), 1), 1, new ReplyFacts(false, 10107, false, false), "errorReply");
        assertEquals("error", last().outcome());
        assertEquals("fail", last().type());
        assertEquals(10107, last().errorCode());
        assertEquals("errorReply", last().fault());
        connection.complete(connection.begin(command("insert"), 1), 1, new ReplyFacts(true, 0, false, false), null);
        assertEquals("ok", last().type());
        assertEquals(0, last().errorCode());
        assertEquals(3, Meters.outcomes(registry, "insert", "ok"));
        assertEquals(2, Meters.outcomes(registry, "insert", "error"));
    }

    @Test
    void onlyARoundTripToTheMemberIsTimed() {
        PrometheusMeterRegistry prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        CommandObserver timed = new CommandObserver(prometheus, new RetryTracker(100, Long.MAX_VALUE / 4), History.inMemory(10));
        ConnectionObserver on = timed.forConnection(MEMBER);
        on.complete(on.begin(command("find"), 1), 1, new ReplyFacts(true, 0, false, false), null);
        on.completeAnswered(on.begin(command("find"), 1), 1, new ReplyFacts(false, 10107, false, false), "errorReply");
        on.complete(on.begin(command("find"), 1), 1, Outcome.NETWORK_ERROR, "closeConnection", 0, false, false);
        on.complete(on.begin(command("find"), 1), 1, Outcome.OK, null, 0, false, true);
        on.complete(on.begin(command("find"), 1), 1, Outcome.NETWORK_ERROR, "dropReply", 0, false, true);
        String scrape = prometheus.scrape();
        Matcher count = Pattern.compile("blackpipe_command_duration_seconds_count\\{command=\"find\",member=\"127\\.0\\.0\\.1:27017\"} (\\S+)")
                .matcher(scrape);
        assertTrue(count.find(), scrape);
        assertEquals(3.0, Double.parseDouble(count.group(1)), "three of the five made the round trip");
        Matcher sum = Pattern.compile("blackpipe_command_duration_seconds_sum\\{command=\"find\",member=\"127\\.0\\.0\\.1:27017\"} (\\S+)")
                .matcher(scrape);
        assertTrue(sum.find(), scrape);
        assertTrue(Double.parseDouble(sum.group(1)) >= 0 && Double.parseDouble(sum.group(1)) < 60, "each timed from its start: " + sum.group(1));
        assertEquals(5, Meters.attempts(prometheus, "find"));
    }

    @Test
    void aNamespaceNotFoundThatDriversTakeForAnAnswerIsNoFailureToRetry() {
        for (String[] command : new String[][] {{"listIndexes", ""}, {"drop", ""}, {"aggregate", CommandFacts.LIST_SEARCH_INDEXES},
                {"aggregate", CommandFacts.COLL_STATS}}) {
            CommandFacts facts = inSession(command[0], command[1]);
            connection.complete(connection.begin(facts, FIND_A), FIND_A, Outcome.ERROR, null, 26, false, true);
            Attempt next = connection.begin(facts, FIND_A);
            assertEquals(1, next.attemptNumber(), command[0] + ": an empty or done answer, the same command next is new work");
            connection.complete(next, FIND_A, Outcome.OK, null, 0, false, true);
        }
        for (String[] command : new String[][] {{"find", ""}, {"aggregate", CommandFacts.CHANGE_STREAM}}) {
            CommandFacts facts = inSession(command[0], command[1]);
            connection.complete(connection.begin(facts, FIND_A), FIND_A, Outcome.ERROR, null, 26, false, true);
            Attempt next = connection.begin(facts, FIND_A);
            assertEquals(2, next.attemptNumber(), command[0] + ": a NamespaceNotFound it fails with");
            connection.complete(next, FIND_A, Outcome.OK, null, 0, false, true);
        }
        CommandFacts listIndexes = inSession("listIndexes", "");
        connection.complete(connection.begin(listIndexes, FIND_A), FIND_A, Outcome.ERROR, null, 13, false, true);
        assertEquals(2, connection.begin(listIndexes, FIND_A).attemptNumber(), "another error of it is a failure");
    }

    @Test
    void theHandshakeNamesTheConnectionsAppAndHellosAreCountedApart() {
        connection.monitoring(command("hello"));
        assertEquals("", connection.appName(), "a hello without the handshake's client names nothing");
        connection.monitoring(handshake("hello", "shop"));
        assertEquals("shop", connection.appName());
        connection.monitoring(handshake("isMaster", null));
        assertEquals("shop", connection.appName(), "a handshake without an appName keeps the name");
        assertEquals(2, Meters.sum(registry, "blackpipe.monitoring.commands", "command", "hello", "member", MEMBER));
        assertEquals(1, Meters.sum(registry, "blackpipe.monitoring.commands", "command", "isMaster"));
        assertEquals(0, Meters.attempts(registry, "hello"), "no application attempt");

        Attempt find = connection.begin(command("find"), 1);
        assertEquals("shop", find.appName());
        connection.complete(find, 1, Outcome.OK, null, 0, false, true);
        assertEquals(1, Meters.sum(registry, "blackpipe.command.attempts", "command", "find", "app", "shop"));
        assertEquals("shop", last().app());
        Attempt hello = connection.helloForRules(handshake("hello", "shop"));
        assertEquals(1, hello.attemptNumber());
        assertEquals("hello", hello.command());
        assertEquals("shop", hello.appName());
        assertEquals(MEMBER, hello.member());
        assertEquals(connection.connectionId(), hello.connectionId());
    }

    @Test
    void authenticationIsCountedApartAndLeavesNoOutcomeOrHistory() {
        for (String name : new String[] {"saslStart", "saslContinue", "authenticate"}) {
            assertTrue(ConnectionObserver.isAuthentication(name), name);
            Attempt attempt = connection.begin(command(name), 1);
            assertEquals(1, attempt.attemptNumber());
            assertEquals(name, attempt.command());
            connection.complete(attempt, 1, Outcome.ERROR, "errorReply", 18, false, true);
            assertEquals(1, Meters.sum(registry, "blackpipe.monitoring.commands", "command", name), name);
            assertEquals(0, Meters.attempts(registry, name), name);
            assertEquals(0, Meters.outcomes(registry, name, "error"), name);
        }
        assertTrue(history.recent().isEmpty(), "no history line: " + history.recent());
        for (String name : new String[] {"find", "hello", "logout", "saslstart"}) {
            assertTrue(!ConnectionObserver.isAuthentication(name), name);
        }
    }

    @Test
    void aFaultIsCountedByFaultCommandAndMember() {
        Attempt insert = connection.begin(command("insert"), 1);
        connection.faultInjected(insert, "closeConnection");
        connection.faultInjected(insert, "closeConnection");
        connection.faultInjected(connection.begin(command("find"), 1), "errorReply");
        assertEquals(2, Meters.faults(registry, "closeConnection", "insert"));
        assertEquals(1, Meters.sum(registry, "blackpipe.faults.injected", "fault", "errorReply", "command", "find", "member", MEMBER));
        assertEquals(0, Meters.faults(registry, "errorReply", "insert"));
    }

    @Test
    void eachConnectionHasItsOwnId() {
        ConnectionObserver other = shared.forConnection(MEMBER);
        assertNotEquals(connection.connectionId(), other.connectionId());
        assertTrue(connection.connectionId() > 0 && other.connectionId() > 0);
        other.complete(other.begin(command("find"), 1), 1, Outcome.OK, null, 0, false, true);
        assertEquals(other.connectionId(), last().connectionId());
        assertEquals(registry, shared.registry());
    }
}
