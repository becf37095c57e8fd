package io.blackpipe.fault;

import java.util.List;

/**
 * A scripted fault run: rules active from the start, and a timeline of steps at offsets from it.
 * Built only by {@link ScenarioLoader}, which has already checked every rule and step.
 */
public record Scenario(String name, String description, List<Rule> rules, List<Step> timeline) {
    /**
     * One timeline step; {@code line} is where it stands in the file, for status and errors; {@code latency} a latency
     * step's, {@code bandwidth} a bandwidth step's, {@code idleTimeout} an idle timeout step's, {@code restart} a restart or
     * rolling restart step's, {@code failover} a failover step's; {@code durationMillis} how long a timed fault lasts, or the
     * wait in a rolling restart between one member's return and the next one's restart.
     */
    public record Step(long atMillis, Kind kind, Rule rule, String target, long durationMillis, int line, Latency latency,
                       Bandwidth bandwidth, IdleTimeout idleTimeout, Restart restart, Failover failover) {
        public Step(long atMillis, Kind kind, Rule rule, String target, long durationMillis, int line) {
            this(atMillis, kind, rule, target, durationMillis, line, null, null, null, null, null);
        }

        Step withLatency(Latency latency) {
            return new Step(atMillis, kind, rule, target, durationMillis, line, latency, bandwidth, idleTimeout, restart, failover);
        }

        Step withBandwidth(Bandwidth bandwidth) {
            return new Step(atMillis, kind, rule, target, durationMillis, line, latency, bandwidth, idleTimeout, restart, failover);
        }

        Step withIdleTimeout(IdleTimeout idleTimeout) {
            return new Step(atMillis, kind, rule, target, durationMillis, line, latency, bandwidth, idleTimeout, restart, failover);
        }

        Step withFailover(Failover failover) {
            return new Step(atMillis, kind, rule, target, durationMillis, line, latency, bandwidth, idleTimeout, restart, failover);
        }

        Step withRestart(Restart restart) {
            return new Step(atMillis, kind, rule, target, durationMillis, line, latency, bandwidth, idleTimeout, restart, failover);
        }

        /** The same step at another time, with {@code rule} (a repeat's own copy of an add's rule). */
        Step repeatedAt(long atMillis, Rule rule) {
            return new Step(atMillis, kind, rule, target, durationMillis, line, latency, bandwidth, idleTimeout, restart, failover);
        }

        public String describe() {
            switch (kind) {
                case ADD: return "add rule " + rule.id();
                case REMOVE: return "remove rule " + target;
                case CLEAR: return "clear all rules";
                case OUTAGE: return "outage of " + target + (durationMillis > 0 ? " for " + durationMillis + " ms" : "");
                case BLACKHOLE: return "blackhole " + target + (durationMillis > 0 ? " for " + durationMillis + " ms" : "");
                case LATENCY: return "latency of " + latency.describeAndWay() + " on " + target + (durationMillis > 0 ? " for " + durationMillis + " ms" : "");
                case BANDWIDTH: return "bandwidth of " + bandwidth.describeAndWay() + " on " + target + (durationMillis > 0 ? " for " + durationMillis + " ms" : "");
                case IDLE_TIMEOUT: return "idle timeout (" + idleTimeout.describe() + ") on " + target
                        + (durationMillis > 0 ? " for " + durationMillis + " ms" : "");
                case RESTART: return "restart " + target + " (" + restart.describe() + ")";
                case ROLLING_RESTART: return "rolling restart (" + restart.describe() + ", " + durationMillis + " ms between members)";
                case RESTORE: return "restore " + target;
                case RESET_CONNECTIONS: return "reset the connections of " + target;
                case FAILOVER: return failover.describe();
                default: return "end";
            }
        }
    }

    public enum Kind { ADD, REMOVE, CLEAR, OUTAGE, BLACKHOLE, LATENCY, BANDWIDTH, IDLE_TIMEOUT, RESTART, ROLLING_RESTART, RESTORE, RESET_CONNECTIONS, FAILOVER, END }
}
