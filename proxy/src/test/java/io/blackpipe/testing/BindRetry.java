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
