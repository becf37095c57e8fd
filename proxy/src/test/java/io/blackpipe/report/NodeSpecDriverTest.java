package io.blackpipe.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.NodeSpecDriver;
import io.blackpipe.testing.UpstreamLane;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
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
     * server at once before the retry.
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

    @Test
    void theNodeDriverMatchesTheSpecsExceptWhereTheLaneCannotStreamHello() {
        assertEquals(SpecCase.all().size(), check.results().size());
        // On jongodb the shutdown cases' immediate heartbeat is a streamed hello, which jongodb ends
        // with a plain reply: Node fails that heartbeat and clears the pool again, so the retry's
        // checkout meets MongoPoolClearedError and the insert or find is sent once. The Java driver
        // passes the same cases here; on a server that streams hello they are expected to match.
        Set<String> expectedMismatches = UpstreamLane.streamsHello() ? Set.of() : SHUTDOWN_CASES;
        Set<String> mismatches = check.results().stream().filter(r -> !r.matches()).map(r -> r.specCase().name())
                .collect(Collectors.toSet());
        assertEquals(expectedMismatches, mismatches, check.text());
        for (SpecResult r : check.results()) {
            if (expectedMismatches.contains(r.specCase().name())) {
                assertEquals(1, r.attempts(), r.specCase().name());
                assertTrue(r.raised().startsWith("exit 1: MongoPoolClearedError"), r.specCase().name() + ": " + r.raised());
            }
        }
    }

    @Test
    void theProgramsExitStatusAndLastLineSayWhatTheApplicationSaw() {
        for (SpecResult r : check.results()) {
            SpecCase c = r.specCase();
            if (!r.matches()) {
                continue; // asserted above
            }
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
        // The same program with serverMonitoringMode=poll: its heartbeats are plain hellos, which
        // every lane answers, so the retry after 91 or 11600 goes through. This pins the mismatches
        // above on the streamed heartbeat, not on the driver's retry rules or on blackpipe's count.
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
