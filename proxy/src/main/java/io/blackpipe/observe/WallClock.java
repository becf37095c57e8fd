package io.blackpipe.observe;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Wall-clock time in microseconds, derived from the monotonic time a command's counting has
 * already read: one clock read per command instead of two (each costs as much as a counter
 * update). Set again from the wall clock once a second, so it follows the wall clock's steps.
 */
final class WallClock {
    private static final long RESYNC_NANOS = TimeUnit.SECONDS.toNanos(1);

    private record Sync(long nanos, long epochMicros) {
    }

    private final LongSupplier wallMillis;
    private final LongSupplier monotonicNanos;
    private volatile Sync sync;

    WallClock() {
        this(System::currentTimeMillis, System::nanoTime);
    }

    WallClock(LongSupplier wallMillis, LongSupplier monotonicNanos) {
        this.wallMillis = wallMillis;
        this.monotonicNanos = monotonicNanos;
        this.sync = now();
    }

    /** The wall-clock time, in microseconds since the epoch, at the monotonic time {@code nanos}. */
    long epochMicros(long nanos) {
        Sync last = sync;
        long elapsed = nanos - last.nanos();
        if (elapsed > RESYNC_NANOS || elapsed < -RESYNC_NANOS) {
            last = now();
            sync = last;
            elapsed = nanos - last.nanos();
        }
        return last.epochMicros() + Math.floorDiv(elapsed, 1000); // floor: a time just before the setting too
    }

    private Sync now() {
        return new Sync(monotonicNanos.getAsLong(), TimeUnit.MILLISECONDS.toMicros(wallMillis.getAsLong()));
    }
}
