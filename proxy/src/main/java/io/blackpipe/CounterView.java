package io.blackpipe;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.search.Search;
import java.util.HashMap;
import java.util.Map;

/**
 * The registry's counters as seen since a baseline. Micrometer counters cannot be reset (and the
 * proxy caches them per connection, so removing them would orphan live counters); instead the
 * values at {@link #reset()} are remembered and subtracted. Counters created after the baseline
 * start from zero.
 */
final class CounterView {
    private final MeterRegistry registry;
    private volatile Map<Meter.Id, Double> baseline = Map.of();

    CounterView(MeterRegistry registry) {
        this.registry = registry;
    }

    /** The sum over every counter named {@code name} whose tags include the given key/value pairs. */
    long sum(String name, String... tagPairs) {
        Search search = registry.find(name);
        for (int i = 0; i + 1 < tagPairs.length; i += 2) {
            search = search.tag(tagPairs[i], tagPairs[i + 1]);
        }
        Map<Meter.Id, Double> base = baseline;
        double total = 0;
        for (Counter counter : search.counters()) {
            total += counter.count() - base.getOrDefault(counter.getId(), 0.0);
        }
        return Math.round(total);
    }

    synchronized void reset() {
        Map<Meter.Id, Double> now = new HashMap<>();
        for (Meter meter : registry.getMeters()) {
            if (meter instanceof Counter counter) {
                now.put(counter.getId(), counter.count());
            }
        }
        baseline = Map.copyOf(now);
    }
}
