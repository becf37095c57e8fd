package io.blackpipe.observe;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.EnumMap;
import java.util.Map;

/**
 * The meters of one (command, member, app) combination, looked up once per connection and
 * command name so the hot path only increments. Names are the public contract:
 * blackpipe_command_attempts_total, blackpipe_command_retries_total,
 * blackpipe_command_outcomes_total, blackpipe_command_duration_seconds.
 */
final class CommandMeters {
    final Counter attempts;
    final Counter retries;
    /** Shared by every app on this (command, member); see {@link CommandDurations}. */
    final DurationHistogram duration;
    private final Map<Outcome, Counter> outcomes = new EnumMap<>(Outcome.class);

    CommandMeters(MeterRegistry registry, DurationHistogram duration, String command, String member, String app) {
        attempts = Counter.builder("blackpipe.command.attempts")
                .description("Application commands that reached the proxy, first attempts and retries, forwarded or faulted")
                .tags("command", command, "member", member, "app", app).register(registry);
        retries = Counter.builder("blackpipe.command.retries")
                .description("Command attempts recognised as retries")
                .tags("command", command, "member", member, "app", app).register(registry);
        this.duration = duration;
        for (Outcome outcome : Outcome.values()) {
            outcomes.put(outcome, Counter.builder("blackpipe.command.outcomes")
                    .description("How command attempts ended")
                    .tags("command", command, "member", member, "outcome", outcome.label()).register(registry));
        }
    }

    Counter outcome(Outcome outcome) {
        return outcomes.get(outcome);
    }
}
