package io.blackpipe.observe;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Counts and records every command attempt: shared by all connections, each of which gets its
 * own {@link ConnectionObserver}. What is counted is what happened: the same {@link Attempt}
 * drives the fault decision, the meters and the history.
 */
public final class CommandObserver {
    private final MeterRegistry registry;
    private final RetryTracker retries;
    private final History history;
    private final AtomicLong connectionIds = new AtomicLong();
    private final CommandDurations durations;
    private final WallClock wallClock = new WallClock();
    private final Map<String, CommandMeters> meters = new ConcurrentHashMap<>();
    private final Map<String, Counter> faults = new ConcurrentHashMap<>();
    private final Map<String, Counter> monitoring = new ConcurrentHashMap<>();
    private final CappedLabels apps = CappedLabels.apps();

    public CommandObserver(MeterRegistry registry, RetryTracker retries, History history) {
        this.registry = registry;
        this.retries = retries;
        this.history = history;
        this.durations = new CommandDurations(registry.config().clock());
        double startedSeconds = System.currentTimeMillis() / 1000.0; // counts only grow within a start: a new one tells a restart
        Gauge.builder("blackpipe.start.time", () -> startedSeconds).baseUnit("seconds")
                .description("When the proxy started, in seconds since the Unix epoch").register(registry);
        if (registry instanceof PrometheusMeterRegistry prometheus) {
            prometheus.getPrometheusRegistry().register(durations);
        } // other registries (unit tests' SimpleMeterRegistry) do without the round-trip histogram: it is a Prometheus contract
    }

    public ConnectionObserver forConnection(String member) {
        return new ConnectionObserver(this, member, connectionIds.incrementAndGet());
    }

    public MeterRegistry registry() {
        return registry;
    }

    public History history() {
        return history;
    }

    WallClock wallClock() {
        return wallClock;
    }

    RetryTracker retries() {
        return retries;
    }

    /** The meters of a command from {@code appName} (labelled as {@link CappedLabels} says, which bounds this map too). */
    CommandMeters meters(String command, String member, String appName) {
        String app = apps.label(appName);
        String key = command + '\u0000' + member + '\u0000' + app;
        return meters.computeIfAbsent(key, k -> new CommandMeters(registry, durations.histogram(command, member), command, member, app));
    }

    Counter fault(String fault, String command, String member) {
        String key = fault + '\u0000' + command + '\u0000' + member;
        return faults.computeIfAbsent(key, k -> Counter.builder("blackpipe.faults.injected")
                .description("Faults the proxy injected").tags("fault", fault, "command", command, "member", member)
                .register(registry));
    }

    Counter monitoring(String command, String member) {
        String key = command + '\u0000' + member;
        return monitoring.computeIfAbsent(key, k -> Counter.builder("blackpipe.monitoring.commands")
                .description("hello/isMaster commands (handshakes and server monitoring) and handshakes' authentication, kept apart from application commands")
                .tags("command", command, "member", member).register(registry));
    }
}
