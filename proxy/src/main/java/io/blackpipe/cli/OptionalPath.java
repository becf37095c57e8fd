package io.blackpipe.cli;

import java.nio.file.Path;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * A file option that may be left out. Its environment variable, where it has one, may be set but empty
 * (BLACKPIPE_SCENARIO= in a compose file): that is unset, as for the other BLACKPIPE_* variables, and never reaches
 * this converter ({@link EnvironmentDefaults}). An empty value typed on the command line (--tls-cert "$CERT" with
 * CERT unset) is a usage error: taken as unset, the proxy started without TLS, or without its scenario, and said
 * nothing; read as a path (--baseline), it was the working directory.
 */
final class OptionalPath implements ITypeConverter<Path> {
    @Override
    public Path convert(String value) {
        if (value == null || value.isBlank()) {
            throw new TypeConversionException("an empty path; give a file, or leave the option out");
        }
        return Path.of(value);
    }
}
