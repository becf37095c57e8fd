package io.blackpipe.observe;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The largest value lately, kept as Micrometer's TimeWindowMax keeps it (a ring of maxima, the
 * oldest cleared at every rotation, so a value counts for up to ring-length rotations) but rotated
 * by the monotonic time the caller has already read. TimeWindowMax reads the wall clock on every
 * record; clock reads were a third of the counting's time per command (issue #7).
 */
final class RollingMax {
    private final AtomicLong[] ring;
    private final long rotateEveryNanos;
    private final AtomicBoolean rotating = new AtomicBoolean();
    private volatile long lastRotateNanos;
    private int current; // changed under the monitor, by one rotating thread at a time

    RollingMax(long rotateEveryNanos, int ringLength, long nowNanos) {
        ring = new AtomicLong[ringLength];
        for (int i = 0; i < ringLength; i++) {
            ring[i] = new AtomicLong();
        }
        this.rotateEveryNanos = rotateEveryNanos;
        lastRotateNanos = nowNanos;
    }

    void record(long value, long nowNanos) {
        rotate(nowNanos);
        for (AtomicLong slot : ring) {
            long seen;
            while (value > (seen = slot.get()) && !slot.compareAndSet(seen, value)) {
                // another thread raised it meanwhile: compare again
            }
        }
    }

    long poll(long nowNanos) {
        rotate(nowNanos);
        synchronized (this) {
            return ring[current].get();
        }
    }

    private void rotate(long nowNanos) {
        long sinceLastRotate = nowNanos - lastRotateNanos;
        if (sinceLastRotate < rotateEveryNanos || !rotating.compareAndSet(false, true)) {
            return;
        }
        try {
            synchronized (this) {
                if (sinceLastRotate >= rotateEveryNanos * ring.length) { // the whole ring is out of date
                    for (AtomicLong slot : ring) {
                        slot.set(0);
                    }
                    current = 0;
                    lastRotateNanos = nowNanos - sinceLastRotate % rotateEveryNanos;
                    return;
                }
                int rotations = 0;
                do {
                    ring[current].set(0);
                    current = (current + 1) % ring.length;
                    sinceLastRotate -= rotateEveryNanos;
                    lastRotateNanos += rotateEveryNanos;
                } while (sinceLastRotate >= rotateEveryNanos && ++rotations < ring.length);
            }
        } finally {
            rotating.set(false);
        }
    }
}
