package io.blackpipe.observe;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Clock;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MockClock;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.CountAtBucket;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The striped histogram behind blackpipe_command_duration_seconds must scrape exactly as the
 * Micrometer Timer it replaced: same buckets, counts, sum, _max, help text and line formats.
 */
class DurationHistogramTest {
    private static final String OPEN_METRICS = "application/openmetrics-text; version=1.0.0; charset=utf-8";
    /** Zero, the first and last bounds and either side of them, an exact inner bound, and far beyond 60 s. */
    private static final long[] SAMPLES = {0, 1, 49_999, 50_000, 50_001, 1_000_000, 1_398_101, 1_398_102, 123_456_789,
            59_999_999_999L, 60_000_000_000L, 60_000_000_001L, 3_600_000_000_000L};

    /** The Timer CommandMeters registered before (issue #7). */
    private static Timer micrometerTimer(MeterRegistry registry, String command, String member) {
        return Timer.builder("blackpipe.command.duration")
                .description("Round trip of commands the upstream answered, from their arrival to their last reply, a rule delay included")
                .tags("command", command, "member", member)
                .publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofNanos(50_000))
                .maximumExpectedValue(Duration.ofSeconds(60))
                .register(registry);
    }

    private static PrometheusMeterRegistry registry(Clock clock) {
        return new PrometheusMeterRegistry(PrometheusConfig.DEFAULT, new PrometheusRegistry(), clock);
    }

    /** Two registries on one clock: Micrometer's Timers in one, blackpipe's collector in the other. */
    private record SideBySide(PrometheusMeterRegistry timers, PrometheusMeterRegistry histograms, CommandDurations durations) {
        static SideBySide on(Clock clock) {
            PrometheusMeterRegistry histograms = registry(clock);
            CommandDurations durations = new CommandDurations(clock);
            histograms.getPrometheusRegistry().register(durations);
            return new SideBySide(registry(clock), histograms, durations);
        }
    }

    /** One series (find on h:1) recorded on both sides: a Timer and blackpipe's histogram. */
    private record FindOnBothSides(SideBySide sides, Timer timer, DurationHistogram histogram) {
        static FindOnBothSides on(Clock clock) {
            SideBySide sides = SideBySide.on(clock);
            return new FindOnBothSides(sides, micrometerTimer(sides.timers(), "find", "h:1"), sides.durations().histogram("find", "h:1"));
        }

        void record(long nanos) {
            timer.record(nanos, TimeUnit.NANOSECONDS);
            histogram.record(nanos);
        }

        void assertScrapesEqual(String when) {
            assertEquals(sides.timers().scrape(), sides.histograms().scrape(), when);
        }
    }

    @Test
    void theBucketBoundsAreTheOnesMicrometerGaveTheTimer() {
        CountAtBucket[] timerBuckets = micrometerTimer(registry(Clock.SYSTEM), "find", "m").takeSnapshot().histogramCounts();
        assertArrayEquals(Arrays.stream(timerBuckets).mapToDouble(CountAtBucket::bucket).toArray(), DurationHistogram.BOUNDS);
        assertEquals(50_000.0, DurationHistogram.BOUNDS[0]);
        assertEquals(60e9, DurationHistogram.BOUNDS[DurationHistogram.BOUNDS.length - 1]);
    }

    @Test
    void theScrapeIsByteForByteTheTimers() {
        MockClock clock = new MockClock();
        SideBySide sides = SideBySide.on(clock);
        PrometheusMeterRegistry timers = sides.timers();
        PrometheusMeterRegistry histograms = sides.histograms();
        CommandDurations durations = sides.durations();
        assertEquals(timers.scrape(), histograms.scrape(), "nothing before the first command");

        String[][] series = {{"insert", "h1:27017"}, {"find", "h1:27017"}, {"find", "h2:27018"}, {"aggregate", "h2:27018"}};
        for (int s = 0; s < series.length; s++) {
            Timer timer = micrometerTimer(timers, series[s][0], series[s][1]);
            DurationHistogram histogram = durations.histogram(series[s][0], series[s][1]);
            for (int repeat = 0; repeat <= s; repeat++) {
                for (long sample : SAMPLES) {
                    timer.record(sample + repeat * 7, TimeUnit.NANOSECONDS);
                    histogram.record(sample + repeat * 7);
                }
            }
        }
        micrometerTimer(timers, "delete", "h3:1"); // created, never recorded
        durations.histogram("delete", "h3:1");

        String scrape = histograms.scrape();
        assertTrue(scrape.contains("# HELP blackpipe_command_duration_seconds Round trip of commands the upstream answered, from their arrival to their last reply, a rule delay included\n"
                + "# TYPE blackpipe_command_duration_seconds histogram\n"), scrape);
        assertEquals(timers.scrape(), scrape);
        assertEquals(timers.scrape(OPEN_METRICS), histograms.scrape(OPEN_METRICS));

        // _max is Micrometer's time-window max: a new sample a minute on, then nothing for minutes
        clock.add(Duration.ofSeconds(70));
        micrometerTimer(timers, "find", "h1:27017").record(5, TimeUnit.MILLISECONDS);
        durations.histogram("find", "h1:27017").record(5_000_000);
        assertEquals(timers.scrape(), histograms.scrape());
        clock.add(Duration.ofMinutes(3));
        assertEquals(timers.scrape(), histograms.scrape());
    }

    /**
     * _max is kept by blackpipe's own rolling max (rotated by the monotonic time the proxy already
     * read, issue #7): at every step of a timeline that crosses the rotations (one a minute, a value
     * kept for three) one and several at a time, it must read as Micrometer's TimeWindowMax.
     */
    @Test
    void theMaxRotatesAsMicrometersTimeWindowMax() {
        MockClock clock = new MockClock();
        FindOnBothSides find = FindOnBothSides.on(clock);
        long[] millisBefore = {0, 5_000, 44_666, 1, 19_000, 60_000, 1_000, 39_000, 40_000, 119_999, 61_000, 121_000, 7, 250_000,
            20_000, 20_000, 20_000, 20_000, 20_000, 20_000, 20_000, 20_000, 20_000};
        for (int step = 0; step < millisBefore.length; step++) {
            clock.add(Duration.ofMillis(millisBefore[step]));
            long sample = (step * 7_919L % 13 + 1) * 1_000_000; // up and down, so older maxima matter
            find.record(sample);
            find.assertScrapesEqual("after step " + step);
            clock.add(Duration.ofMillis(10_333)); // and read between records
            find.assertScrapesEqual("between steps " + step + " and " + (step + 1));
        }
    }

    /**
     * The same, read every second, so that reads land on the rotations exactly (one a minute), with
     * silences (no read, no record) of exactly two rotations, of two and a half, and of more than the
     * three the ring keeps a value for: the first read after each (a read alone, nothing recorded with it)
     * finds the ring rotated as many times as were due, and after the longest one the rotations go on
     * from where its schedule left them, not from the first read.
     */
    @Test
    void theMaxRotatesOnItsScheduleAsMicrometersTimeWindowMaxWhenReadEverySecond() {
        MockClock clock = new MockClock();
        FindOnBothSides find = FindOnBothSides.on(clock);
        long[] recordAtSecond = {0, 7, 20, 41, 60, 95, 100, 239, 240, 245, 421, 430, 631, 640, 950, 980, 1100};
        long[] millis = {9, 4, 6, 2, 8, 1, 3, 5, 7, 2, 3, 1, 6, 2, 9, 3, 5};
        int next = 0;
        for (int second = 0; second <= 1300; second++) {
            if (next < recordAtSecond.length && recordAtSecond[next] == second) {
                find.record(TimeUnit.MILLISECONDS.toNanos(millis[next]));
                next++;
            }
            boolean silent = second > 300 && second < 420 || second > 480 && second < 630 || second > 700 && second < 950;
            if (!silent) {
                find.assertScrapesEqual("at second " + second);
            }
            clock.add(Duration.ofSeconds(1));
        }
    }

    @Test
    void bucketsAreCumulativeUpToInfWithCountAndSumInSeconds() {
        PrometheusMeterRegistry registry = registry(new MockClock());
        CommandDurations durations = new CommandDurations(registry.config().clock());
        registry.getPrometheusRegistry().register(durations);
        DurationHistogram histogram = durations.histogram("find", "h:1");
        for (long nanos : new long[] {50_000, 50_001, 60_000_000_000L, 61_000_000_000L, 3_600_000_000_000L, -1}) {
            histogram.record(nanos);
        }
        String scrape = registry.scrape();
        String series = "blackpipe_command_duration_seconds_bucket{command=\"find\",member=\"h:1\",le=";
        assertTrue(scrape.contains(series + "\"5.0E-5\"} 1\n"), scrape); // a bound is inclusive
        assertTrue(scrape.contains(series + "\"5.4611E-5\"} 2\n"), scrape);
        assertTrue(scrape.contains(series + "\"60.0\"} 3\n"), scrape);
        assertTrue(scrape.contains(series + "\"+Inf\"} 5\n"), scrape); // above 60 s: only +Inf
        assertTrue(scrape.contains("blackpipe_command_duration_seconds_count{command=\"find\",member=\"h:1\"} 5\n"), scrape);
        assertTrue(scrape.contains("blackpipe_command_duration_seconds_sum{command=\"find\",member=\"h:1\"} 3721.000100001\n"), scrape);
        assertTrue(scrape.contains("blackpipe_command_duration_seconds_max{command=\"find\",member=\"h:1\"} 3600.0\n"), scrape);

        List<Long> cumulative = new ArrayList<>();
        for (String line : scrape.split("\n")) {
            if (line.startsWith(series)) {
                cumulative.add(Long.parseLong(line.substring(line.lastIndexOf(' ') + 1)));
            }
        }
        assertEquals(DurationHistogram.BOUNDS.length + 1, cumulative.size());
        for (int i = 1; i < cumulative.size(); i++) {
            assertTrue(cumulative.get(i) >= cumulative.get(i - 1), "cumulative at " + i + ": " + cumulative);
        }
    }

    @Test
    void recordsFromSeveralThreadsAddUpExactly() throws Exception {
        int threads = 4;
        int perThread = 200_000;
        DurationHistogram shared = new DurationHistogram(Clock.SYSTEM);
        DurationHistogram alone = new DurationHistogram(Clock.SYSTEM);
        CyclicBarrier start = new CyclicBarrier(threads);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int thread = t;
            Thread worker = new Thread(() -> {
                try {
                    start.await();
                    for (int i = 0; i < perThread; i++) {
                        shared.record(sample(thread, i));
                    }
                } catch (Throwable e) {
                    failure.set(e);
                }
            });
            workers.add(worker);
            worker.start();
        }
        for (Thread worker : workers) {
            worker.join();
        }
        assertEquals(null, failure.get());
        for (int t = 0; t < threads; t++) {
            for (int i = 0; i < perThread; i++) {
                alone.record(sample(t, i));
            }
        }
        assertArrayEquals(alone.counts(), shared.counts());
        assertEquals((long) threads * perThread, Arrays.stream(shared.counts()).sum());
        assertEquals(alone.totalSeconds(), shared.totalSeconds());
        assertEquals(alone.maxSeconds(), shared.maxSeconds());
    }

    /** Spread from 0 to about 70 s, so every bucket and +Inf get some. */
    private static long sample(int thread, int i) {
        long x = (thread * 1_000_003L + i) * 0x9E3779B97F4A7C15L;
        return (x >>> 1) % (1L << (16 + i % 21));
    }

    @Test
    void theObserverExportsItOnPrometheusOnly() {
        PrometheusMeterRegistry prometheus = registry(Clock.SYSTEM);
        CommandObserver observer = new CommandObserver(prometheus, new RetryTracker(10, 1_000_000_000L), History.inMemory(10));
        observer.meters("find", "h:1", "app-a").duration.record(2_000_000);
        observer.meters("find", "h:1", "app-b").duration.record(3_000_000); // one series per (command, member)
        assertTrue(prometheus.scrape().contains("blackpipe_command_duration_seconds_count{command=\"find\",member=\"h:1\"} 2\n"),
                prometheus.scrape());

        SimpleMeterRegistry simple = new SimpleMeterRegistry();
        new CommandObserver(simple, new RetryTracker(10, 1_000_000_000L), History.inMemory(10))
                .meters("find", "h:1", "app").duration.record(2_000_000);
        assertFalse(simple.getMeters().stream().anyMatch(m -> m.getId().getName().contains("duration")));
    }

    @Test
    void theCollectorDeclaresItsNamesSoTheRegistryRefusesASecondOneByThem() {
        PrometheusMeterRegistry prometheus = registry(Clock.SYSTEM);
        new CommandObserver(prometheus, new RetryTracker(10, 1_000_000_000L), History.inMemory(10));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> prometheus.getPrometheusRegistry().register(new CommandDurations(Clock.SYSTEM)));
        assertTrue(e.getMessage().contains("blackpipe_command_duration_seconds"), e.getMessage());
    }
}
