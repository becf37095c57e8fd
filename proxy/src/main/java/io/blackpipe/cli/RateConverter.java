package io.blackpipe.cli;

import io.blackpipe.fault.Bandwidth;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** "64KiB/s", "1MB/s", "500B/s": a member's bandwidth, as {@link Bandwidth#parse} takes it. A bad one is a usage error naming the option. */
final class RateConverter implements ITypeConverter<Bandwidth> {
    @Override
    public Bandwidth convert(String value) {
        try {
            return Bandwidth.parse(value);
        } catch (IllegalArgumentException e) {
            throw new TypeConversionException(e.getMessage());
        }
    }
}
