package io.blackpipe.report;

import java.util.Random;
import org.bson.types.ObjectId;

/** A retry strategy from the article (rows of the report): how one increment is attempted. */
abstract class Strategy {
    abstract String name();

    /** Whether the driver's own retryable writes are on (retryWrites=true) for this strategy. */
    boolean driverRetries() {
        return false;
    }

    /** Performs one increment; throws what the application finally sees when it gives up. */
    abstract void increment(CounterWorkload counter) throws InterruptedException;

    static Strategy[] all(long seed) {
        return new Strategy[] {new NoRetry(), new AlwaysRetry(), new RetryNetworkOnce(), new IdempotentTwoStep(),
                new DriverRetryableWrites(), new BackoffWithJitter(seed)};
    }

    static final class NoRetry extends Strategy {
        String name() {
            return "no retry";
        }

        void increment(CounterWorkload counter) {
            counter.increment();
        }
    }

    /** Retries any error, five times: the strategy Sam inherited. */
    static final class AlwaysRetry extends Strategy {
        static final int ATTEMPTS = 5;

        String name() {
            return "always retry (5x)";
        }

        void increment(CounterWorkload counter) {
            for (int attempt = 1; ; attempt++) {
                try {
                    counter.increment();
                    return;
                } catch (RuntimeException e) {
                    if (attempt == ATTEMPTS) {
                        throw e;
                    }
                }
            }
        }
    }

    static final class RetryNetworkOnce extends Strategy {
        String name() {
            return "retry network errors once";
        }

        void increment(CounterWorkload counter) {
            try {
                counter.increment();
            } catch (RuntimeException e) {
                if (!Failures.isTransient(e)) {
                    throw e;
                }
                counter.increment();
            }
        }
    }

    /** The article's answer: two idempotent steps, each retried once on a network error. */
    static final class IdempotentTwoStep extends Strategy {
        String name() {
            return "retry once, idempotent ops";
        }

        void increment(CounterWorkload counter) {
            ObjectId token = new ObjectId();
            retryOnce(() -> counter.addToken(token));
            retryOnce(() -> counter.applyToken(token));
        }

        private static void retryOnce(Runnable step) {
            try {
                step.run();
            } catch (RuntimeException e) {
                if (!Failures.isTransient(e)) {
                    throw e;
                }
                step.run();
            }
        }
    }

    /** No application retries: the driver's retryable writes (same lsid + txnNumber) do it. */
    static final class DriverRetryableWrites extends Strategy {
        String name() {
            return "driver retryable writes";
        }

        @Override
        boolean driverRetries() {
            return true;
        }

        void increment(CounterWorkload counter) {
            counter.increment();
        }
    }

    /** The DocumentDB guide: capped exponential backoff with jitter, transient errors only. */
    static final class BackoffWithJitter extends Strategy {
        static final int MAX_RETRIES = 5;
        static final long BASE_MILLIS = 50;
        static final long CAP_MILLIS = 800;
        private final Random random;

        BackoffWithJitter(long seed) {
            this.random = new Random(seed);
        }

        String name() {
            return "backoff + jitter (5x)";
        }

        void increment(CounterWorkload counter) throws InterruptedException {
            for (int retry = 0; ; retry++) {
                try {
                    counter.increment();
                    return;
                } catch (RuntimeException e) {
                    if (!Failures.isTransient(e) || retry == MAX_RETRIES) {
                        throw e;
                    }
                    long ceiling = Math.min(CAP_MILLIS, (long) Math.pow(2, retry) * BASE_MILLIS);
                    Thread.sleep(BASE_MILLIS + (long) (random.nextDouble() * Math.max(0, ceiling - BASE_MILLIS)));
                }
            }
        }
    }
}
