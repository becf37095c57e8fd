package io.blackpipe.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** Durations as a scenario's YAML gives them: a number that is no duration is refused, naming the forms that are. */
class DurationsTest {

    @Test
    void notANumberAndInfinityAreNoDurations() {
        for (double value : new double[] {Double.NaN, Double.POSITIVE_INFINITY}) { // YAML's .nan and .inf
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Durations.millis(value));
            assertEquals("must be a duration such as 500ms, 5s or 2m", e.getMessage(), String.valueOf(value));
        }
        assertEquals("must not be negative", assertThrows(IllegalArgumentException.class,
                () -> Durations.millis(Double.NEGATIVE_INFINITY)).getMessage());
        assertEquals(1500, Durations.millis(1500.0));
        assertEquals(2000, Durations.millis("2s"));
    }

    @Test
    void aDurationThatNoLongHoldsIsRefused() {
        // before: Math.round capped them at Long.MAX_VALUE, and an integer's longValue() kept its low bits
        for (Object value : new Object[] {"1000000000000000h", "99999999999999999999", new java.math.BigInteger("99999999999999999999"), 1e19}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Durations.millis(value), value::toString);
            assertEquals("'" + value + "' is beyond any time blackpipe can wait for", e.getMessage());
        }
        assertEquals(9_000_000_000_000_000L, Durations.millis(9_000_000_000_000_000L), "a long that fits is kept");
    }

    /** The limits say "from 0 to 24h": an hour can be typed as one. Before, "1h" was no duration. */
    @Test
    void hoursAreADuration() {
        assertEquals(3_600_000L, Durations.millis("1h"));
        assertEquals(86_400_000L, Durations.millis("24h"));
        assertEquals(5_400_000L, Durations.millis("1.5h"));
    }
}
