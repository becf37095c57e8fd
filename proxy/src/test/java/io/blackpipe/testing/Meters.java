package io.blackpipe.testing;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.search.Search;

/** Reads the proxy's counters the way a CI assertion would: summed over the labels not given. */
public final class Meters {
    private Meters() {
    }

    /** The sum of every counter named {@code name} whose tags include the given key/value pairs. */
    public static double sum(MeterRegistry registry, String name, String... tagPairs) {
        Search search = registry.find(name);
        for (int i = 0; i + 1 < tagPairs.length; i += 2) {
            search = search.tag(tagPairs[i], tagPairs[i + 1]);
        }
        return search.counters().stream().mapToDouble(Counter::count).sum();
    }

    public static long attempts(MeterRegistry registry, String command) {
        return (long) sum(registry, "blackpipe.command.attempts", "command", command);
    }

    public static long retries(MeterRegistry registry, String command) {
        return (long) sum(registry, "blackpipe.command.retries", "command", command);
    }

    public static long outcomes(MeterRegistry registry, String command, String outcome) {
        return (long) sum(registry, "blackpipe.command.outcomes", "command", command, "outcome", outcome);
    }

    public static long faults(MeterRegistry registry, String fault, String command) {
        return (long) sum(registry, "blackpipe.faults.injected", "fault", fault, "command", command);
    }
}
