package io.blackpipe.observe;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** History times come from the monotonic clock read per command, set against the wall clock every second. */
class WallClockTest {
    private static final long MILLI_MICROS = 1_000;

    @Test
    void aTimeReadNowIsTheWallClocksWithinAMillisecond() {
        WallClock clock = new WallClock();
        for (int i = 0; i < 5; i++) {
            long before = TimeUnit.MILLISECONDS.toMicros(System.currentTimeMillis());
            long micros = clock.epochMicros(System.nanoTime());
            long after = TimeUnit.MILLISECONDS.toMicros(System.currentTimeMillis()) + MILLI_MICROS;
            assertTrue(micros >= before - MILLI_MICROS && micros <= after, before + " <= " + micros + " <= " + after);
        }
    }

    @Test
    void timesKeepTheirDistancesAndOrder() {
        WallClock clock = new WallClock();
        long nanos = System.nanoTime();
        long first = clock.epochMicros(nanos);
        long later = clock.epochMicros(nanos + 250_000);
        long earlier = clock.epochMicros(nanos - 3_000);
        assertTrue(later - first == 250, first + " then " + later);
        assertTrue(first - earlier == 3, earlier + " then " + first);
    }

    @Test
    void aStepOfTheWallClockShowsWithinASecond() {
        AtomicLong wallMillis = new AtomicLong(1_000_000);
        WallClock clock = new WallClock(wallMillis::get);
        long nanos = System.nanoTime();
        long before = clock.epochMicros(nanos);
        wallMillis.addAndGet(3_600_000); // the wall clock is set an hour on
        long halfASecondOn = clock.epochMicros(nanos + TimeUnit.MILLISECONDS.toNanos(500));
        assertTrue(halfASecondOn - before == 500 * MILLI_MICROS, "within the second: " + (halfASecondOn - before));
        long twoSecondsOn = clock.epochMicros(System.nanoTime() + TimeUnit.SECONDS.toNanos(2));
        assertTrue(twoSecondsOn - before >= TimeUnit.HOURS.toMicros(1), "set again: " + (twoSecondsOn - before));
        assertTrue(twoSecondsOn - before < TimeUnit.HOURS.toMicros(1) + TimeUnit.SECONDS.toMicros(10), "set again: " + (twoSecondsOn - before));
    }
}
