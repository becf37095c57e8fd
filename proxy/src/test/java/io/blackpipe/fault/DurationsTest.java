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

    /** The limits say "from 0 to 24h": an hour can be typed as one. Before, "1h" was no duration. */
    @Test
    void hoursAreADuration() {
        assertEquals(3_600_000L, Durations.millis("1h"));
        assertEquals(86_400_000L, Durations.millis("24h"));
        assertEquals(5_400_000L, Durations.millis("1.5h"));
    }
}
