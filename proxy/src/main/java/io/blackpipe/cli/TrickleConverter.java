package io.blackpipe.cli;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * "64/250ms": the bytes of each piece of a trickled reply and the pause between pieces, a duration
 * as --delay takes it; "64B/250ms", as `fault list` shows it, too. A bad one is a usage error naming
 * the option.
 */
final class TrickleConverter implements ITypeConverter<TrickleConverter.Trickle> {
    /** trickleReplyBytes and trickleReplyIntervalMS. */
    record Trickle(long bytes, long intervalMillis) {
    }

    @Override
    public Trickle convert(String value) {
        int slash = value.indexOf('/');
        if (slash < 0) {
            throw new TypeConversionException("'" + value + "' is not BYTES/INTERVAL such as 64/250ms");
        }
        Long pieces = ByteCountConverter.parse(value.substring(0, slash));
        if (pieces == null) {
            throw new TypeConversionException("'" + value + "': the bytes of a piece must be a whole number of at least 1");
        }
        long interval = new DurationConverter().convert(value.substring(slash + 1));
        if (interval < 1) {
            throw new TypeConversionException("'" + value + "': the interval between pieces must be at least 1ms");
        }
        return new Trickle(pieces, interval);
    }
}
