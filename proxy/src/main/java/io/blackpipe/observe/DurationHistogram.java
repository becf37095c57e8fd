package io.blackpipe.observe;

import io.micrometer.core.instrument.Clock;
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;
import io.micrometer.core.instrument.util.TimeUtils;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * The upstream round trips of one (command, member): the buckets, sum and max of the Micrometer
 * Timer this replaces, but with a LongAdder per bucket. That Timer kept its buckets in one
 * AtomicLongArray, so event loops recording at the same time fought over its cache lines (issue #7);
 * adders give each thread its own cell.
 */
final class DurationHistogram {
    /** The replaced Timer's settings: a percentile histogram from 50 µs to 60 s, _max over the default step. */
    static final DistributionStatisticConfig CONFIG = DistributionStatisticConfig.builder()
            .percentilesHistogram(true)
            .minimumExpectedValue((double) TimeUnit.MICROSECONDS.toNanos(50))
            .maximumExpectedValue((double) TimeUnit.SECONDS.toNanos(60))
            .expiry(PrometheusConfig.DEFAULT.step())
            .build()
            .merge(DistributionStatisticConfig.DEFAULT);
    /** Upper bounds in nanoseconds, ascending, derived as Micrometer derives its Prometheus buckets. */
    static final double[] BOUNDS = CONFIG.getHistogramBuckets(true).stream().mapToDouble(Double::doubleValue).toArray();

    /** Per bucket, not cumulative: a value counts in the first bound it does not exceed; the last is +Inf. */
    private final LongAdder[] counts = new LongAdder[BOUNDS.length + 1];
    private final LongAdder totalNanos = new LongAdder();
    private final Clock clock;
    private final RollingMax max;
    private final long createdMillis;

    DurationHistogram(Clock clock) {
        for (int i = 0; i < counts.length; i++) {
            counts[i] = new LongAdder();
        }
        this.clock = clock;
        max = new RollingMax(CONFIG.getExpiry().toNanos(), CONFIG.getBufferLength(), clock.monotonicTime()); // as TimeWindowMax reads them
        createdMillis = clock.wallTime();
    }

    void record(long nanos) {
        record(nanos, clock.monotonicTime());
    }

    /** Records a round trip that ended at {@code nowNanos} (System.nanoTime, as the clock's monotonic time). */
    void record(long nanos, long nowNanos) {
        if (nanos < 0) {
            return; // as Timer.record does
        }
        int i = Arrays.binarySearch(BOUNDS, nanos);
        counts[i >= 0 ? i : -i - 1].increment();
        totalNanos.add(nanos);
        max.record(nanos, nowNanos);
    }

    /** Counts per bucket (not cumulative), +Inf last: one bound more than {@link #BOUNDS}. */
    long[] counts() {
        long[] snapshot = new long[counts.length];
        for (int i = 0; i < counts.length; i++) {
            snapshot[i] = counts[i].sum();
        }
        return snapshot;
    }

    double totalSeconds() {
        return TimeUtils.nanosToUnit(totalNanos.doubleValue(), TimeUnit.SECONDS);
    }

    double maxSeconds() {
        return TimeUtils.nanosToUnit(max.poll(clock.monotonicTime()), TimeUnit.SECONDS);
    }

    long createdMillis() {
        return createdMillis;
    }
}
