package io.blackpipe.fault.action;

import io.blackpipe.fault.FaultAction;
import io.blackpipe.fault.Interception;
import java.util.SplittableRandom;

/**
 * Forward at once and hold the reply: a slow server, as the client sees it. With a jitter (Toxiproxy's
 * latency jitter), each reply is held for a time drawn evenly from delay - jitter to delay + jitter
 * (never below 0), from a seeded generator so that a run replays with the same seed.
 */
public final class DelayReply implements FaultAction {
    private final long millis;
    private final long jitterMillis;
    private final SplittableRandom random;

    public DelayReply(long millis) {
        this(millis, 0, 0);
    }

    public DelayReply(long millis, long jitterMillis, long seed) {
        this.millis = millis;
        this.jitterMillis = jitterMillis;
        this.random = jitterMillis > 0 ? new SplittableRandom(seed) : null;
    }

    @Override
    public String name() {
        return "delayReply";
    }

    @Override
    public void apply(Interception command) {
        long wait = nextDelay();
        command.forward(reply -> reply.passAfter(wait));
    }

    /** The delay of the next reply: the rule's, or one drawn around it. */
    long nextDelay() {
        if (random == null || millis > Long.MAX_VALUE - 2 * jitterMillis) {
            return millis;
        }
        long drawn;
        synchronized (random) { // one rule, every event loop: SplittableRandom is not thread-safe
            drawn = millis - jitterMillis + random.nextLong(2 * jitterMillis + 1);
        }
        return Math.max(0, drawn);
    }
}
