package io.blackpipe.cli;

import io.blackpipe.fault.Durations;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** "500ms", "5s", "2m" or plain milliseconds, as scenarios write them; a bad one is a usage error naming the option. */
final class DurationConverter implements ITypeConverter<Long> {
    @Override
    public Long convert(String value) {
        try {
            return Durations.millis(value);
        } catch (IllegalArgumentException e) {
            throw new TypeConversionException("'" + value + "' is not a duration such as 500ms, 5s or 2m");
        }
    }
}
