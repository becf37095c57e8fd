package io.blackpipe.upstream;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The major version a mongod or mongos binary reports ({@code --version}), read before it is started: some options
 * exist only from a version on, and an option a server does not know stops it at startup.
 */
final class BinaryVersion {
    /** Unknown: the binary said nothing a version could be read from. */
    static final int UNKNOWN = -1;
    private static final long WAIT_SECONDS = 30;
    /** "db version v7.0.14" (mongod), "mongos version v7.0.14" (mongos). */
    private static final Pattern VERSION = Pattern.compile("version v?(\\d+)\\.\\d+");

    private BinaryVersion() {
    }

    /** Runs {@code binary --version}; its major version, or {@link #UNKNOWN}. */
    static int major(Path binary) throws IOException {
        Path output = Files.createTempFile("blackpipe-version-", ".txt");
        try {
            Process process = new ProcessBuilder(binary.toString(), "--version").redirectErrorStream(true)
                    .redirectOutput(output.toFile()).start();
            process.getOutputStream().close();
            if (!process.waitFor(WAIT_SECONDS, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IOException(binary + " --version did not end within " + WAIT_SECONDS + "s");
            }
            return parseMajor(Files.readString(output, StandardCharsets.UTF_8));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while asking " + binary + " for its version", e);
        } finally {
            Files.deleteIfExists(output);
        }
    }

    /** The major version in {@code --version}'s output, or {@link #UNKNOWN}. */
    static int parseMajor(String output) {
        Matcher matcher = VERSION.matcher(output);
        return matcher.find() ? Integer.parseInt(matcher.group(1)) : UNKNOWN;
    }
}
