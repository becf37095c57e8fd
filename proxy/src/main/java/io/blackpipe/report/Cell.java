package io.blackpipe.report;

import java.util.Map;

/**
 * One strategy under one fault: what the counter ended at against the increments attempted,
 * what the application saw, how long it took, and what the proxy counted.
 */
record Cell(String fault, String strategy, int expected, long counter, int errors, Map<String, Integer> errorKinds,
            long millis, long attempts, long retries) {

    /** correct / undercount by k / overcount by k. */
    String verdict() {
        if (counter == expected) {
            return "correct";
        }
        return counter < expected ? "undercount by " + (expected - counter) : "overcount by " + (counter - expected);
    }
}
