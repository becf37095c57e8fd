package io.blackpipe.upstream;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/** Finds executables the way a shell would, so "is mongod installed?" has one answer everywhere. */
public final class PathLookup {
    /** Where mongod is mongod.exe, and has no Unix domain socket to turn off. */
    static final boolean WINDOWS = System.getProperty("os.name", "").startsWith("Windows");

    private PathLookup() {
    }

    /** The first executable regular file called {@code name} (on Windows, with a PATHEXT suffix: mongod.exe) on this process's PATH. */
    public static Optional<Path> find(String name) {
        return find(name, System.getenv("PATH"), WINDOWS ? windowsSuffixes(System.getenv("PATHEXT")) : List.of(""));
    }

    /** As {@link #find(String)}, for what cannot go on without it. */
    static Path require(String name) throws IOException {
        return find(name).orElseThrow(() -> new IOException(name + " was not found on PATH"));
    }

    /** Same, against an explicit PATH value (entries separated by {@link File#pathSeparator}). */
    public static Optional<Path> find(String name, String pathValue) {
        return find(name, pathValue, List.of(""));
    }

    /** Same, trying {@code name} with each of {@code suffixes} in each directory, in order, as cmd.exe tries PATHEXT's. */
    static Optional<Path> find(String name, String pathValue, List<String> suffixes) {
        if (pathValue == null || pathValue.isEmpty()) {
            return Optional.empty();
        }
        for (String entry : pathValue.split(File.pathSeparator)) {
            // An empty PATH entry means the current directory in POSIX shells.
            String dir = entry.isEmpty() ? "." : entry;
            for (String suffix : suffixes) {
                try {
                    Path candidate = Path.of(dir, name + suffix);
                    if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                        return Optional.of(candidate.toAbsolutePath());
                    }
                } catch (InvalidPathException ignored) {
                    // A malformed PATH entry cannot hold the executable; keep looking.
                }
            }
        }
        return Optional.empty();
    }

    /** The suffixes cmd.exe tries, from PATHEXT (its default when unset), lower-cased: Windows matches names in any case. */
    static List<String> windowsSuffixes(String pathext) {
        String value = pathext == null || pathext.isBlank() ? ".COM;.EXE;.BAT;.CMD" : pathext;
        return Arrays.stream(value.split(";")).map(String::strip).filter(suffix -> !suffix.isEmpty())
                .map(suffix -> suffix.toLowerCase(Locale.ROOT)).toList();
    }
}
