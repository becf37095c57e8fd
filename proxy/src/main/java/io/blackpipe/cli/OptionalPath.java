package io.blackpipe.cli;

import java.nio.file.Path;
import picocli.CommandLine.ITypeConverter;

/**
 * A file option whose environment variable may be set but empty (BLACKPIPE_SCENARIO= in a compose
 * file): empty means unset, as for the other BLACKPIPE_* variables, not the path "" (the working directory).
 */
final class OptionalPath implements ITypeConverter<Path> {
    @Override
    public Path convert(String value) {
        return value == null || value.isBlank() ? null : Path.of(value);
    }
}
