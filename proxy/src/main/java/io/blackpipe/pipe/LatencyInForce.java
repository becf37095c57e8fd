package io.blackpipe.pipe;

import io.blackpipe.fault.Latency;
import java.util.SplittableRandom;

/** A member's latency in force and its jitter's draws, which every connection of the member takes in turn. */
record LatencyInForce(Latency latency, SplittableRandom random) {
    long draw() {
        if (latency.jitterMillis() == 0) {
            return latency.delayMillis();
        }
        synchronized (random) { // every event loop draws: SplittableRandom is not thread-safe
            return latency.drawMillis(random);
        }
    }
}
