package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * Two commands taking signals in one JVM (runs inside a test's, side by side) share the process's handlers. Before,
 * each put back the handler it had found: the first to return put back the JVM's, the second its neighbour's, spent,
 * and the JVM ignored Ctrl-C and SIGTERM from then on.
 */
class StopSignalsTest {
    private static final Signal TERM = new Signal("TERM");

    @Test
    void theJvmsHandlerIsBackWhicheverOrderOverlappingCommandsReturnIn() {
        String jvms = current(TERM);
        StopSignals first = StopSignals.install(new PrintWriter(new StringWriter()));
        StopSignals second = StopSignals.install(new PrintWriter(new StringWriter()));
        assertNotEquals(jvms, current(TERM), "taken while they run");
        first.close();
        assertNotEquals(jvms, current(TERM), "still taken: the second still runs");
        second.close();
        assertEquals(jvms, current(TERM), "the JVM's own, not the first command's");
    }

    @Test
    void aSignalAsksEveryCommandTakingSignalsToStopAndTheNextEndsTheJvm() throws Exception {
        String jvms = current(TERM);
        StringWriter firstSaid = new StringWriter();
        try (StopSignals first = StopSignals.install(new PrintWriter(firstSaid));
             StopSignals second = StopSignals.install(new PrintWriter(new StringWriter()))) {
            assumeTrue(!jvms.equals(current(TERM)), "the JVM lets signals be taken (not -Xrs): raising one would end it");
            Signal.raise(TERM);
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (!(first.requested() && second.requested()) && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertTrue(first.requested() && second.requested(), "both asked to stop");
            assertEquals("blackpipe: stopping once the start is done (SIGTERM again to end it now)", firstSaid.toString().strip(),
                    "said by a command still starting");
            assertEquals(jvms, current(TERM), "a second signal ends the JVM as the JVM's handler does");
            try (StopSignals third = StopSignals.install(new PrintWriter(new StringWriter()))) {
                assertEquals(jvms, current(TERM), "a command started while the others stop takes none: the next signal ends the JVM");
            }
        }
        assertEquals(jvms, current(TERM));
    }

    /**
     * The handler in force, read by putting a stand-in (a Java one: after SIG_IGN the JVM hands a Java handler put back
     * no more signals) and it back at once; named by what it wraps, as the JVM's own comes back in a new wrapper each time.
     */
    private static String current(Signal signal) {
        SignalHandler inForce = Signal.handle(signal, ignored -> { });
        Signal.handle(signal, inForce);
        String named = inForce.toString();
        return named.contains("<") ? named.substring(named.indexOf('<')) : named;
    }
}
