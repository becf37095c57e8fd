package io.blackpipe.report;

import io.blackpipe.topology.UpstreamUri;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * An external program as the driver under test, run through {@code /bin/sh -c} as
 * {@code COMMAND <connection string> <operation>}. Its exit status and last output line are
 * shown, any URI in it masked (a program that prints its connection string would show the
 * upstream's password); the verdict comes from what the proxy saw, not from the program.
 */
final class ExternalSpecDriver implements SpecDriver {
    static final long TIMEOUT_SECONDS = 60;
    private final String command;
    private final long timeoutSeconds;

    ExternalSpecDriver(String command) {
        this(command, TIMEOUT_SECONDS);
    }

    ExternalSpecDriver(String command, long timeoutSeconds) {
        if (command == null || command.isBlank()) {
            throw new IllegalArgumentException("--driver-cmd needs a command");
        }
        this.command = command;
        this.timeoutSeconds = timeoutSeconds;
    }

    @Override
    public String name() {
        return "external: " + UpstreamUri.maskedWithin(command); // shown in the report: a URI in it may hold a password
    }

    @Override
    public String run(String uri, String operation) throws InterruptedException {
        Path output = null;
        try {
            output = Files.createTempFile("blackpipe-spec", ".out");
            ProcessBuilder builder = new ProcessBuilder("/bin/sh", "-c", command + " \"$@\"", "blackpipe-spec", uri, operation)
                    .redirectErrorStream(true).redirectOutput(output.toFile()).redirectInput(ProcessBuilder.Redirect.PIPE);
            builder.environment().put("BLACKPIPE_SPEC_COLLECTION", COLLECTION);
            Process process = builder.start();
            process.getOutputStream().close();
            if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                // the shell's children first: they are the driver, and would outlive the shell (orphans
                // piling up, sending on to whatever listens on the case's port next)
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
                return "timed out after " + timeoutSeconds + "s";
            }
            String last = lastLine(new String(Files.readAllBytes(output), StandardCharsets.UTF_8));
            return "exit " + process.exitValue() + (last.isEmpty() ? "" : ": " + last);
        } catch (IOException e) {
            throw new UncheckedIOException("could not run --driver-cmd " + command + ": " + e.getMessage(), e);
        } finally {
            if (output != null) {
                try {
                    Files.deleteIfExists(output);
                } catch (IOException ignored) {
                    // a leftover temp file is harmless
                }
            }
        }
    }

    static String lastLine(String output) {
        String[] lines = output.strip().split("\\R");
        // masked before it is cut short: a URI cut inside its password would no longer read as one
        String last = UpstreamUri.maskedWithin(lines[lines.length - 1].strip());
        return last.length() > 80 ? last.substring(0, 77) + "..." : last;
    }
}
