package io.blackpipe.fault;

import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

/**
 * failCommand's mode: when a matching command actually fires the fault. "alwaysOn", {times: n}
 * (then the rule is spent), {skip: n} (the first n matches pass), {activationProbability: p}
 * (drawn from a seeded generator, so a run replays with the same seed).
 */
public abstract class Mode {
    /** Whether this match fires; called once per matching command. */
    public abstract boolean fire();

    /** A spent {times: n} rule no longer matches anything. */
    public boolean spent() {
        return false;
    }

    public abstract String describe();

    public static Mode alwaysOn() {
        return new Mode() {
            @Override
            public boolean fire() {
                return true;
            }

            @Override
            public String describe() {
                return "alwaysOn";
            }
        };
    }

    /** {times: 0} fires once, as on mongod: its failpoint counts down on each match and turns off only below 1. */
    public static Mode times(long n) {
        AtomicLong left = new AtomicLong(Math.max(n, 1));
        return new Mode() {
            @Override
            public boolean fire() {
                return left.getAndUpdate(v -> v > 0 ? v - 1 : 0) > 0;
            }

            @Override
            public boolean spent() {
                return left.get() <= 0;
            }

            @Override
            public String describe() {
                return "{times: " + n + "} (" + left.get() + " left)";
            }
        };
    }

    public static Mode skip(long n) {
        AtomicLong toSkip = new AtomicLong(n);
        return new Mode() {
            @Override
            public boolean fire() {
                return toSkip.getAndUpdate(v -> v > 0 ? v - 1 : 0) <= 0;
            }

            @Override
            public String describe() {
                return "{skip: " + n + "} (" + toSkip.get() + " to skip)";
            }
        };
    }

    public static Mode probability(double p, long seed) {
        Random random = new Random(seed);
        return new Mode() {
            @Override
            public boolean fire() {
                synchronized (random) {
                    return random.nextDouble() < p;
                }
            }

            @Override
            public String describe() {
                return "{activationProbability: " + p + "}";
            }
        };
    }
}
