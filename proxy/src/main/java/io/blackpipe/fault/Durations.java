package io.blackpipe.fault;

import java.util.Locale;

/** Durations as scenarios write them: "500ms", "5s", "2m", or a plain number of milliseconds. */
public final class Durations {
    private Durations() {
    }

    /** @throws IllegalArgumentException naming what is wrong */
    public static long millis(Object value) {
        if (value instanceof Number number) {
            if (number.doubleValue() < 0) {
                throw new IllegalArgumentException("must not be negative");
            }
            return number.longValue();
        }
        if (!(value instanceof String text) || text.isBlank()) {
            throw new IllegalArgumentException("must be a duration such as 500ms, 5s or 2m");
        }
        String s = text.trim().toLowerCase(Locale.ROOT);
        long unit;
        String digits;
        if (s.endsWith("ms")) {
            unit = 1;
            digits = s.substring(0, s.length() - 2);
        } else if (s.endsWith("s")) {
            unit = 1000;
            digits = s.substring(0, s.length() - 1);
        } else if (s.endsWith("m")) {
            unit = 60_000;
            digits = s.substring(0, s.length() - 1);
        } else {
            unit = 1;
            digits = s;
        }
        try {
            double amount = Double.parseDouble(digits.trim());
            if (amount < 0 || Double.isNaN(amount) || Double.isInfinite(amount)) {
                throw new IllegalArgumentException("'" + text + "' must not be negative");
            }
            return Math.round(amount * unit);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + text + "' is not a duration such as 500ms, 5s or 2m");
        }
    }
}
