package io.blackpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.blackpipe.observe.Outcome;
import io.blackpipe.testing.UpstreamLane;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * A missing or empty argument is the same IllegalArgumentException, naming the argument, from BlackPipe
 * and from RemoteBlackPipe: never a NullPointerException, BSON's "Value can not be null", a false from
 * removeRule(null), or a 404 about DELETE for an empty rule id given to PUT.
 */
class BadArgumentParityTest {
    private static final String RULE = "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['ping'], errorCode: 2}}";
    private static BlackPipe embedded;
    private static RemoteBlackPipe remote;

    @BeforeAll
    static void start() {
        embedded = BlackPipe.builder().upstream(UpstreamLane.uri()).adminPort(0).start();
        remote = RemoteBlackPipe.connect(embedded.adminUrl());
    }

    @AfterAll
    static void stop() {
        embedded.close();
    }

    private static void bothSay(String message, Executable embeddedCall, Executable remoteCall) {
        assertEquals(message, assertThrows(IllegalArgumentException.class, embeddedCall, "BlackPipe").getMessage());
        assertEquals(message, assertThrows(IllegalArgumentException.class, remoteCall, "RemoteBlackPipe").getMessage());
        assertEquals(List.of(), embedded.rules(), "nothing was added");
    }

    @Test
    void aNullOrEmptyRuleIdIsNamed() {
        bothSay("id: required, got null", () -> embedded.rule(null, RULE), () -> remote.rule(null, RULE));
        bothSay("id: must not be empty", () -> embedded.rule("", RULE), () -> remote.rule("", RULE));
        bothSay("id: must not be empty", () -> embedded.fail("ping").id("").errorCode(2), () -> remote.fail("ping").id("").errorCode(2));
        bothSay("id: required, got null", () -> embedded.removeRule(null), () -> remote.removeRule(null));
    }

    @Test
    void aNullScenarioIsNamed() {
        bothSay("name: required, e.g. \"transient-blip\"", () -> embedded.runBundledScenario(null), () -> remote.runBundledScenario(null));
        bothSay("file: required, got null", () -> embedded.runScenario((Path) null), () -> remote.runScenario((Path) null));
    }

    /** A file that is not there says so: the IOException's own message was the bare path, "cannot read scenario F: F". */
    @Test
    void aMissingOrUnreadableScenarioFileSaysWhy(@org.junit.jupiter.api.io.TempDir Path dir) {
        Path missing = dir.resolve("missing.yaml");
        for (Executable call : List.<Executable>of(() -> embedded.runScenario(missing), () -> remote.runScenario(missing))) {
            assertEquals("cannot read scenario " + missing + ": no such file",
                    assertThrows(java.io.UncheckedIOException.class, call).getMessage());
        }
        for (Executable call : List.<Executable>of(() -> embedded.runScenario(dir), () -> remote.runScenario(dir))) {
            assertEquals("cannot read scenario " + dir + ": a directory, not a file",
                    assertThrows(java.io.UncheckedIOException.class, call).getMessage());
        }
    }

    @Test
    void aNullFaultOrOutcomeIsNamedWhenCountersAreRead() {
        bothSay("fault: required, got null", () -> embedded.faultsInjected((Fault) null), () -> remote.faultsInjected((Fault) null));
        bothSay("fault: required", () -> embedded.faultsInjected((String) null), () -> remote.faultsInjected((String) null));
        bothSay("outcome: required, got null", () -> embedded.outcomes("insert", (Outcome) null),
                () -> remote.outcomes("insert", (Outcome) null));
        bothSay("outcome: required", () -> embedded.outcomes("insert", (String) null), () -> remote.outcomes("insert", (String) null));
    }

    @Test
    void aHandshakeOrMonitoringCommandIsRefusedAsItWouldReadZeroForever() throws Exception {
        try (com.mongodb.client.MongoClient client = com.mongodb.client.MongoClients.create(embedded.connectionString())) {
            client.getDatabase("admin").runCommand(new org.bson.Document("ping", 1)); // a handshake and heartbeats: hellos
        }
        for (String command : List.of("hello", "isMaster", "ismaster", "saslStart", "saslContinue", "authenticate")) {
            String message = "command: '" + command + "' is a handshake's or monitoring's command, counted apart from the"
                    + " application's: blackpipe_monitoring_commands_total on /metrics (its Micrometer name: blackpipe.monitoring.commands);"
                    + " a rule's faults on it are counted with the other faults";
            bothSay(message, () -> embedded.attempts(command), () -> remote.attempts(command));
            bothSay(message, () -> embedded.outcomes(command, "ok"), () -> remote.outcomes(command, "ok"));
        }
        assertEquals(true, embedded.registry().find("blackpipe.monitoring.commands").tag("command", "hello").counters().stream()
                .mapToDouble(c -> c.count()).sum() + embedded.registry().find("blackpipe.monitoring.commands").tag("command", "isMaster")
                .counters().stream().mapToDouble(c -> c.count()).sum() > 0, "where hellos are counted");
    }
}
