package io.blackpipe.testing;

import java.net.BindException;

/**
 * A whole setup run again when a port it had to bind by number was taken meanwhile: for a test whose server must come
 * back on the port it had before (a restart), where no socket can hold the port across the server's own start. Any
 * other failure is the test's and is thrown at once.
 */
public final class BindRetry {
    private BindRetry() {
    }

    /** A test's setup and body, run from the start each time. */
    @FunctionalInterface
    public interface Attempt {
        void run() throws Exception;
    }

    /** Runs {@code attempt} up to {@code attempts} times while it fails for a port in use; then throws the last failure. */
    public static void upTo(int attempts, Attempt attempt) throws Exception {
        if (attempts < 1) {
            throw new IllegalArgumentException("attempts must be 1 or more, got " + attempts);
        }
        for (int tried = 1; ; tried++) {
            try {
                attempt.run();
                return;
            } catch (Exception e) {
                if (tried >= attempts || !portInUse(e)) {
                    throw e;
                }
                System.out.println("a port the test binds by number was taken meanwhile (" + e + "): attempt " + (tried + 1));
            }
        }
    }

    /**
     * Throws a BindException when {@code errorOutput}, what a proxy run as a command (a child JVM, a CLI run) wrote,
     * says it could not listen on one of {@code ports} because the port was in use: a port the test let go for it was
     * given to another process first. Such a run reports its failed bind as text and an exit code, not as an exception
     * {@link #upTo} could see; any other failure is left to the test's own assertions.
     */
    public static void throwIfTaken(String errorOutput, int... ports) throws BindException {
        for (String line : errorOutput.split("\n")) {
            for (int port : ports) {
                if (line.contains("cannot listen on port " + port + " ") && line.contains("Address already in use")) {
                    throw new BindException(line.strip());
                }
            }
        }
    }

    /** Whether a BindException is among {@code e}'s causes (Netty and the proxy wrap it). */
    static boolean portInUse(Throwable e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof BindException) {
                return true;
            }
        }
        return false;
    }
}
