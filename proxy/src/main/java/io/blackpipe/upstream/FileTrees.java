package io.blackpipe.upstream;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/** Small file helpers shared by the local upstreams (temp dir removal, log tails). */
final class FileTrees {
    private FileTrees() {
    }

    /** Deletes {@code root} and everything under it; a missing root is fine. */
    static void deleteRecursively(Path root) throws IOException {
        if (root == null || !Files.exists(root)) {
            return;
        }
        List<Path> paths;
        try (Stream<Path> walk = Files.walk(root)) {
            paths = walk.sorted(Comparator.reverseOrder()).collect(Collectors.toList());
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
        for (Path path : paths) {
            try {
                Files.deleteIfExists(path);
            } catch (NoSuchFileException ignored) {
                // Someone else removed it first; the goal is reached either way.
            }
        }
    }

    /** Best-effort variant for close paths, where a leftover temp file must not mask the real outcome. */
    static void deleteQuietly(Path root) {
        try {
            deleteRecursively(root);
        } catch (IOException | RuntimeException e) {
            System.err.println("[blackpipe] could not delete " + root + ": " + e);
        }
    }

    /** The last {@code maxLines} lines of a text file, or a note saying why there are none. */
    static String tail(Path file, int maxLines) {
        try {
            if (file == null || !Files.exists(file)) {
                return "(no output file " + file + ")";
            }
            String text = new String(Files.readAllBytes(file), StandardCharsets.UTF_8);
            String[] lines = text.split("\\R");
            int from = Math.max(0, lines.length - maxLines);
            String joined = String.join(System.lineSeparator(), List.of(lines).subList(from, lines.length));
            return joined.isBlank() ? "(output was empty)" : joined;
        } catch (IOException e) {
            return "(could not read " + file + ": " + e + ")";
        }
    }
}
