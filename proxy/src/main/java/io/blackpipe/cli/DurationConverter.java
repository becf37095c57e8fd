package io.blackpipe.cli;

import io.blackpipe.fault.Durations;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** "500ms", "5s", "2m" or plain milliseconds, as scenarios write them; a bad one is a usage error naming the option. */
class DurationConverter implements ITypeConverter<Long> {
    @Override
    public Long convert(String value) {
        try {
            return Durations.millis(value);
        } catch (Durations.TooShort e) {
            throw new TypeConversionException(e.getMessage());
        } catch (IllegalArgumentException e) {
            throw new TypeConversionException("'" + value + "' is not a duration such as 500ms, 5s or 2m");
        }
    }

    /**
     * How long a member fault lasts: at least 1ms. The proxy takes 0 as "until restore", so a
     * shorter one (0s, 0.2ms) would last forever instead of not at all.
     */
    static class AtLeastOneMilli extends DurationConverter {
        @Override
        public Long convert(String value) {
            long millis = super.convert(value);
            if (millis < 1) {
                throw new TypeConversionException("'" + value + "' is shorter than 1ms" + hint());
            }
            return millis;
        }

        String hint() {
            return " (leave the option out to last until restore)";
        }
    }

    /** A length of its own, at least 1ms, that no restore ends (an idle timeout's --after, a restart's --down). */
    static final class Positive extends AtLeastOneMilli {
        @Override
        String hint() {
            return "";
        }
    }
}
