package io.blackpipe.pipe;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;

/**
 * A log line that may come for every connection (one refused by --max-connections, or for want of file descriptors):
 * said at most once a second, with how many times it came since it was last said.
 */
final class OncePerSecond {
    private static final long INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final AtomicLong sinceLastSaid = new AtomicLong();
    private final AtomicLong lastSaid;

    OncePerSecond() {
        lastSaid = new AtomicLong(System.nanoTime() - 2 * INTERVAL_NANOS);
    }

    /** Counts one more; when a second has passed since the line was last said, has {@code say} say it with the count. */
    void count(LongConsumer say) {
        sinceLastSaid.incrementAndGet();
        long now = System.nanoTime();
        long last = lastSaid.get();
        if (now - last >= INTERVAL_NANOS && lastSaid.compareAndSet(last, now)) {
            say.accept(sinceLastSaid.getAndSet(0));
        }
    }
}
