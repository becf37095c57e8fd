package io.blackpipe.upstream;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Optional;

/** Finds executables the way a shell would, so "is mongod installed?" has one answer everywhere. */
public final class PathLookup {
    private PathLookup() {
    }

    /** The first executable regular file called {@code name} in the directories of this process's PATH. */
    public static Optional<Path> find(String name) {
        return find(name, System.getenv("PATH"));
    }

    /** As {@link #find(String)}, for what cannot go on without it. */
    static Path require(String name) throws IOException {
        return find(name).orElseThrow(() -> new IOException(name + " was not found on PATH"));
    }

    /** Same, against an explicit PATH value (entries separated by {@link File#pathSeparator}). */
    public static Optional<Path> find(String name, String pathValue) {
        if (pathValue == null || pathValue.isEmpty()) {
            return Optional.empty();
        }
        for (String entry : pathValue.split(File.pathSeparator)) {
            // An empty PATH entry means the current directory in POSIX shells.
            String dir = entry.isEmpty() ? "." : entry;
            try {
                Path candidate = Path.of(dir, name);
                if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                    return Optional.of(candidate.toAbsolutePath());
                }
            } catch (InvalidPathException ignored) {
                // A malformed PATH entry cannot hold the executable; keep looking.
            }
        }
        return Optional.empty();
    }
}
