package io.blackpipe.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.NodeSpecDriver;
import io.blackpipe.testing.UpstreamLane;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code report --spec --driver-cmd "node examples/spec-driver/node/spec-driver.js"}: the Node.js
 * driver (the version the example pins) through the same code path as the command line, judged
 * case by case on the local lane.
 */
class NodeSpecDriverTest {
    /**
     * The cases that need the driver's heartbeat right after the fault: on a "node is shutting
     * down" error (91, 11600) the driver marks the server Unknown, clears its pool and checks the
     * server at once before the retry, with a streamed hello by default.
     */
    private static final Set<String> SHUTDOWN_CASES = Set.of("insert: 91 ShutdownInProgress x1",
            "insert: 11600 InterruptedAtShutdown x1", "find: 91 ShutdownInProgress x1", "find: 11600 InterruptedAtShutdown x1");

    private static String command;
    private static SpecCheck check;

    @BeforeAll
    static void run() throws Exception {
        command = NodeSpecDriver.command();
        check = SpecCheck.run(UpstreamLane.uri(), UpstreamLane.description(), SpecDriver.external(command), line -> { });
    }

    /**
     * Every case matches on every lane. jongodb ends a streamed hello with one plain reply, where
     * mongod streams on; the Node driver failed that heartbeat and cleared the pool again, so the
     * shutdown cases' retry met MongoPoolClearedError and was never sent, until the proxy streamed
     * on in the member's place.
     */
    @Test
    void theNodeDriverMatchesTheSpecs() {
        assertEquals(SpecCase.all().size(), check.results().size());
        assertTrue(check.allMatch(), check.text());
        for (String shutdown : SHUTDOWN_CASES) {
            SpecResult result = check.results().stream().filter(r -> r.specCase().name().equals(shutdown)).findFirst().orElseThrow();
            assertEquals(2, result.attempts(), shutdown + " retried once, after its streamed heartbeat");
            assertEquals("exit 0: ok", result.raised(), shutdown);
        }
    }

    @Test
    void theProgramsExitStatusAndLastLineSayWhatTheApplicationSaw() {
        for (SpecResult r : check.results()) {
            SpecCase c = r.specCase();
            if ((c.retryable() && c.times() == 1) || c.operation().equals("insertW0")) {
                assertEquals("exit 0: ok", r.raised(), c.name()); // retried to success, or w:0 (no reply to fail)
            } else {
                String error = c.errorCode() == null ? "exit 1: MongoNetworkError" : "exit 1: MongoServerError " + c.errorCode();
                assertTrue(r.raised().startsWith(error), c.name() + ": " + r.raised()); // the fault surfaced
            }
        }
        assertTrue(check.text().contains("driver: external: " + command), check.text());
    }

    @Test
    void withPolledHeartbeatsTheShutdownCasesMatchOnEveryLane() throws Exception {
        // The same program with serverMonitoringMode=poll: its heartbeats are plain hellos, and the
        // retry after 91 or 11600 goes through as with the streamed ones above.
        String polling = "poll() { " + command + " \"$1&serverMonitoringMode=poll\" \"$2\"; }; poll";
        List<SpecCase> cases = SpecCase.all().stream().filter(c -> SHUTDOWN_CASES.contains(c.name())).toList();
        SpecCheck polled = SpecCheck.run(UpstreamLane.uri(), UpstreamLane.description(), SpecDriver.external(polling),
                line -> { }, cases);
        assertEquals(4, polled.results().size());
        assertTrue(polled.allMatch(), polled.text());
        polled.results().forEach(r -> assertEquals("exit 0: ok", r.raised(), r.specCase().name()));
    }

    @Test
    void theExamplePinsOneExactDriverVersion() throws Exception {
        assertTrue(NodeSpecDriver.pinnedDriverVersion().matches("\\d+\\.\\d+\\.\\d+"), NodeSpecDriver.pinnedDriverVersion());
    }
}
