package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.BlackPipe;
import io.blackpipe.testing.UpstreamLane;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The timed end of a member fault, once it is off. */
class FaultClockTest {
    /**
     * A timed fault restored, or its proxy closed, leaves the queue of timed ends at once. Before, the cancelled end
     * stayed queued until its time: an hour's outage held the closed proxy in memory for that hour.
     */
    @Test
    void aTimedFaultRestoredOrClosedLeavesNoEndQueued() {
        // the queue is every proxy's in this JVM: another's end may leave it meanwhile, none joins (tests run one at a time)
        try (BlackPipe blackPipe = BlackPipe.start(UpstreamLane.uri())) {
            blackPipe.outage("primary", Duration.ofHours(1));
            blackPipe.latency("primary", Duration.ofMillis(5), Duration.ofHours(1));
            int withBoth = FaultClock.endsQueued();
            blackPipe.restore("all");
            assertTrue(withBoth - FaultClock.endsQueued() >= 2, "restored: the outage's end and the latency's left the queue");
            blackPipe.blackhole("primary", Duration.ofHours(1));
            int withTheBlackhole = FaultClock.endsQueued();
            blackPipe.close();
            assertTrue(withTheBlackhole - FaultClock.endsQueued() >= 1, "closed: the blackhole's end left the queue");
        }
    }
}
