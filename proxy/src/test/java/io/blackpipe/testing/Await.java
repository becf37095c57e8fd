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
