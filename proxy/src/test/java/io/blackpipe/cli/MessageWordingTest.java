package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.admin.AdminServer;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.UpstreamLane;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Messages read the same on every run and count in English: lists of choices come sorted (they were
 * printed in Set.of's per-JVM random order), and counts say "1 rule", not "1 rules" or "rule(s)".
 */
class MessageWordingTest {
    private static final String ACTIONS = "[add, bandwidth, blackhole, clear, end, failover, idleTimeout, latency, outage, remove, resetConnections, restart, restore, rollingRestart]";

    @TempDir
    Path temp;

    private CliRun validate(String yaml) throws Exception {
        Path file = temp.resolve("scenario.yaml");
        Files.writeString(file, yaml);
        return CliRun.of("scenario", "validate", file.toString());
    }

    @Test
    void theStepActionsAScenarioErrorListsAreSorted() throws Exception {
        CliRun unknown = validate("name: x\ntimeline:\n  - at: 1s\n    explode: true\n");
        assertEquals(1, unknown.exitCode(), unknown::toString);
        assertTrue(unknown.err().strip().endsWith("timeline[0].explode: unknown step (expected one of " + ACTIONS + ")"), unknown::toString);

        CliRun none = validate("name: x\ntimeline:\n  - at: 1s\n");
        assertTrue(none.err().strip().endsWith("timeline[0]: needs exactly one action of " + ACTIONS + ", has []"), none::toString);
    }

    @Test
    void theCommandsAWriteConcernErrorRuleIsRefusedForAreSorted() {
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()));
             AdminServer admin = AdminServer.start(proxy, "127.0.0.1", 0, null)) {
            CliRun run = CliRun.of("fault", "add", "--admin", "127.0.0.1:" + admin.port(), "{configureFailPoint: 'failCommand',"
                    + " mode: 'alwaysOn', data: {failCommands: ['find', 'distinct', 'count', 'ping', 'listIndexes'],"
                    + " writeConcernError: {code: 64}}}");
            assertEquals(1, run.exitCode(), run::toString);
            assertTrue(run.err().contains("data.writeConcernError: none of failCommands [count, distinct, find, listIndexes, ping]"
                    + " takes a write concern"), run::toString);
        }
    }

    @Test
    void oneRuleAndOneStepAreCountedInTheSingular() throws Exception {
        CliRun valid = validate("name: one\nrules:\n  - {configureFailPoint: failCommand, mode: alwaysOn,"
                + " data: {failCommands: [insert], hang: true}}\ntimeline:\n  - at: 60m\n    clear: true\n");
        assertEquals(0, valid.exitCode(), valid::toString);
        assertTrue(valid.out().strip().endsWith("valid (scenario 'one': 1 rule, 1 timeline step)"), valid::toString);

        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()));
             AdminServer admin = AdminServer.start(proxy, "127.0.0.1", 0, null);
             LogCapture log = LogCapture.start()) {
            CliRun run = CliRun.of("scenario", "run", temp.resolve("scenario.yaml").toString(), "--admin", "127.0.0.1:" + admin.port());
            assertEquals(0, run.exitCode(), run::toString);
            assertEquals("started scenario 'one' (running): 1 rule, 1 timeline step to come", run.out().strip());
            String started = log.awaitContaining(Duration.ofSeconds(10), "scenario 'one' started: ");
            assertEquals("scenario 'one' started: 1 rule, 1 timeline step", started);
        }
    }
}
