package io.blackpipe.cli;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * "100" or "100B", as `fault list` shows a count of bytes: a whole number of at least 1. A bad one is a usage
 * error naming the option.
 */
final class ByteCountConverter implements ITypeConverter<Long> {
    @Override
    public Long convert(String value) {
        Long bytes = parse(value);
        if (bytes == null) {
            throw new TypeConversionException("'" + value + "': the bytes must be a whole number of at least 1");
        }
        return bytes;
    }

    /** The bytes {@code value} gives, or null when it gives no whole number of at least 1. */
    static Long parse(String value) {
        String digits = value.strip();
        if (digits.endsWith("B") || digits.endsWith("b")) {
            digits = digits.substring(0, digits.length() - 1);
        }
        try {
            long bytes = Long.parseLong(digits);
            return bytes >= 1 ? bytes : null;
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
