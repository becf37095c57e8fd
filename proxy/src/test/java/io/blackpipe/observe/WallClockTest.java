package io.blackpipe.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** History times come from the monotonic clock read per command, set against the wall clock every second. */
class WallClockTest {
    private static final long START_NANOS = 7_000_000_000L;
    private static final long START_MILLIS = 1_800_000_000_000L;

    private final AtomicLong wallMillis = new AtomicLong(START_MILLIS);
    private final AtomicLong monotonicNanos = new AtomicLong(START_NANOS);
    private final WallClock clock = new WallClock(wallMillis::get, monotonicNanos::get);

    private long micros(long millis) {
        return TimeUnit.MILLISECONDS.toMicros(millis);
    }

    @Test
    void withinASecondTimesFollowTheMonotonicClockToTheMicrosecond() {
        assertEquals(micros(START_MILLIS), clock.epochMicros(START_NANOS));
        assertEquals(micros(START_MILLIS) + 250, clock.epochMicros(START_NANOS + 250_000));
        assertEquals(micros(START_MILLIS) + 999_999, clock.epochMicros(START_NANOS + 999_999_999));
        assertEquals(micros(START_MILLIS) - 3, clock.epochMicros(START_NANOS - 3_000), "a time read before the setting");
        assertEquals(micros(START_MILLIS) - 1, clock.epochMicros(START_NANOS - 1), "floored, not rounded toward the setting");
    }

    @Test
    void aStepOfTheWallClockShowsOnceASecondHasPassed() {
        wallMillis.addAndGet(TimeUnit.HOURS.toMillis(1)); // the wall clock is set an hour on
        assertEquals(micros(START_MILLIS) + 500_000, clock.epochMicros(START_NANOS + 500_000_000), "not yet");

        long twoSecondsOn = START_NANOS + TimeUnit.SECONDS.toNanos(2);
        monotonicNanos.set(twoSecondsOn);
        wallMillis.addAndGet(2_000);
        long expected = micros(START_MILLIS + TimeUnit.HOURS.toMillis(1) + 2_000);
        assertEquals(expected, clock.epochMicros(twoSecondsOn), "set again from the wall clock");
        assertEquals(expected + 10, clock.epochMicros(twoSecondsOn + 10_000), "and followed from there");
    }

    @Test
    void theSystemClocksAgreeWithinAMillisecond() {
        WallClock system = new WallClock();
        for (int i = 0; i < 5; i++) {
            long before = micros(System.currentTimeMillis());
            long micros = system.epochMicros(System.nanoTime());
            long after = micros(System.currentTimeMillis()) + 1_000;
            assertTrue(micros >= before - 1_000 && micros <= after, before + " <= " + micros + " <= " + after);
        }
    }
}
