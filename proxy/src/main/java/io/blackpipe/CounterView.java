package io.blackpipe;

import io.blackpipe.fault.DeploymentFaults;
import io.blackpipe.observe.CommandNames;
import io.blackpipe.observe.ConnectionObserver;
import io.blackpipe.observe.Outcome;
import io.blackpipe.wire.CommandFacts;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.search.Search;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The registry's counters as seen since a baseline. Micrometer counters cannot be reset (and the
 * proxy caches them per connection, so removing them would orphan live counters); instead the
 * values at {@link #reset()} are remembered and subtracted. Counters created after the baseline
 * start from zero.
 */
final class CounterView {
    /** Every label blackpipe_faults_injected_total has: the rule actions' (fault/action) and the deployment faults'. */
    private static final List<String> FAULTS = List.of("resetConnection", "closeConnection", "dropReply", "hang",
            "errorReply", "writeConcernError", "delayReply", "trickleReply", "blockConnection", "cannedReply",
            DeploymentFaults.BLACKHOLE, DeploymentFaults.OUTAGE, DeploymentFaults.CONNECTIONS_RESET);
    private static final List<String> OUTCOMES = Arrays.stream(Outcome.values()).map(Outcome::label).toList();

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

    /** The command label {@code command} is counted under; a name counted as "other" is refused, as it would read 0. */
    static String command(String command) {
        if (command == null || command.isEmpty()) {
            throw new IllegalArgumentException("command: required, e.g. \"insert\"");
        }
        if (CommandFacts.isHelloName(command) || ConnectionObserver.isAuthentication(command)) {
            // never an attempt, an outcome or a retry: counted apart, so attempts("hello") would read 0 forever
            throw new IllegalArgumentException("command: '" + command + "' is a handshake's or monitoring's command, counted"
                    + " apart from the application's: read blackpipe.monitoring.commands from registry()"
                    + " (blackpipe_monitoring_commands_total on /metrics); a rule's faults on it are in faultsInjected");
        }
        String label = CommandNames.label(command);
        if (label.equals("other") && !command.equals("other")) {
            throw new IllegalArgumentException("command: '" + command + "' is not a command blackpipe counts by name"
                    + " (command names are case-sensitive); it counts it, with every command it does not know, as \"other\"");
        }
        return label;
    }

    static String outcome(String outcome) {
        return oneOf("outcome", outcome, OUTCOMES);
    }

    static String fault(String fault) {
        return oneOf("fault", fault, FAULTS);
    }

    private static String oneOf(String what, String value, List<String> known) {
        if (value == null || !known.contains(value)) { // List.of(...).contains(null) throws a NullPointerException
            throw new IllegalArgumentException(what + ": " + (value == null ? "required" : "'" + value + "' is none of " + known));
        }
        return value;
    }
}
