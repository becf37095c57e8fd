package io.blackpipe.cli;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * The proxy's --admin-token, which may be left out. An empty value typed on the command line (--admin-token "$TOKEN"
 * with TOKEN unset) is a usage error: taken as no token, it left the control API open and said nothing. An empty
 * BLACKPIPE_ADMIN_TOKEN is unset, as for the other variables, and never reaches this converter.
 */
final class OptionalToken implements ITypeConverter<String> {
    @Override
    public String convert(String value) {
        if (value == null || value.isEmpty()) {
            throw new TypeConversionException("an empty token would leave the control API open; give one, or leave the option out");
        }
        return value;
    }
}
