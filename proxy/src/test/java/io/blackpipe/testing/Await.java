package io.blackpipe.testing;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Polling with a deadline, instead of sleeping for a guessed time. */
public final class Await {
    private Await() {
    }

    /** Polls {@code condition} every 10 ms until it holds; fails with {@code what} after {@code timeout}. */
    public static void until(Duration timeout, Supplier<String> what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + timeout + " waiting for " + what.get());
            }
            Thread.sleep(10);
        }
    }

    public static void until(Duration timeout, String what, BooleanSupplier condition) throws InterruptedException {
        until(timeout, () -> what, condition);
    }

    /**
     * Waits 20 s for connections to close, then, if some are still open, runs a GC and waits 20 s more, saying so. The
     * Java driver (5.14) can leak a monitor's socket: a check cancelled while its connection is still connecting (an app
     * connection's network error cancels it, and so does the client's close) closes nothing, since the connection has no
     * stream yet, and its open() then connects all the same; the socket stays open, sending nothing, until the JVM's
     * cleaner closes it after a GC. The proxy rightly keeps a connection whose client is still there: what is open after
     * the GC is the proxy's to answer for.
     */
    public static void closedOnceTheDriversLeaksAreCollected(Supplier<String> what, BooleanSupplier closed) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!closed.getAsBoolean() && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        if (!closed.getAsBoolean()) {
            System.out.println("still waiting for " + what.get() + " after 20 s: a GC, for sockets the driver leaked");
            System.gc();
            until(Duration.ofSeconds(20), what, closed);
            System.out.println("closed after the GC: the driver had leaked them");
        }
    }

    /** Runs {@code call} on another thread: completes with what it threw, or null when it returned. */
    public static CompletableFuture<Throwable> failureOf(Runnable call) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                call.run();
                return null;
            } catch (Throwable t) {
                return t;
            }
        });
    }
}
