package io.blackpipe.fault;

import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Durations as scenarios write them: "500ms", "5s", "2m", "1h", or a plain number of milliseconds. blackpipe
 * keeps whole milliseconds, so one above zero but under 1ms is refused rather than rounded: 0.4ms
 * would otherwise become 0, which means "no delay" or "until restored", not a short fault.
 */
public final class Durations {
    /** Milliseconds past which a duration no longer fits a long. */
    private static final double LONGEST = 0x1p63;
    /** A number as a person writes one: digits, maybe a point and more, maybe a minus (refused as negative below). */
    private static final Pattern PLAIN_NUMBER = Pattern.compile("-?(\\d+(\\.\\d*)?|\\.\\d+)");

    private Durations() {
    }

    /** A duration above zero and under 1ms; its message quotes the value as written. */
    public static final class TooShort extends IllegalArgumentException {
        TooShort(String written) {
            super("'" + written + "' is shorter than 1ms, the shortest duration blackpipe keeps");
        }
    }

    /** @throws IllegalArgumentException naming what is wrong ({@link TooShort} for one under 1ms) */
    public static long millis(Object value) {
        if (value instanceof Number number) {
            if (number.doubleValue() < 0) {
                throw new IllegalArgumentException("must not be negative");
            }
            if (Double.isNaN(number.doubleValue()) || Double.isInfinite(number.doubleValue())) {
                throw new IllegalArgumentException("must be a duration such as 500ms, 5s or 2m");
            }
            boolean holdsALong = value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte;
            if (!holdsALong && number.doubleValue() >= LONGEST) { // longValue() of a larger integer keeps its low bits: any number
                throw beyond(String.valueOf(value));
            }
            if (value instanceof Double || value instanceof Float) {
                return rounded(number.doubleValue(), String.valueOf(value));
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
        } else if (s.endsWith("h")) { // the limits say "24h": it can be typed so
            unit = 3_600_000;
            digits = s.substring(0, s.length() - 1);
        } else {
            unit = 1;
            digits = s;
        }
        if (!PLAIN_NUMBER.matcher(digits.trim()).matches()) { // Java's own doubles take "2d" (2.0), "1e3" and hex
            throw new IllegalArgumentException("'" + text + "' is not a duration such as 500ms, 5s or 2m");
        }
        try {
            double amount = Double.parseDouble(digits.trim());
            if (amount < 0 || Double.isNaN(amount) || Double.isInfinite(amount)) {
                throw new IllegalArgumentException("'" + text + "' must not be negative");
            }
            return rounded(amount * unit, text);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + text + "' is not a duration such as 500ms, 5s or 2m");
        }
    }

    private static long rounded(double millis, String written) {
        if (millis > 0 && millis < 1) {
            throw new TooShort(written);
        }
        if (millis >= LONGEST) { // Math.round would give Long.MAX_VALUE, a step at a time that never comes
            throw beyond(written);
        }
        return Math.round(millis);
    }

    private static IllegalArgumentException beyond(String written) {
        return new IllegalArgumentException("'" + written + "' is beyond any time blackpipe can wait for");
    }
}
