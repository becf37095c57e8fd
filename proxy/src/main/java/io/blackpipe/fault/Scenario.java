package io.blackpipe.fault;

import java.util.List;

/**
 * A scripted fault run: rules active from the start, and a timeline of steps at offsets from it.
 * Built only by {@link ScenarioLoader}, which has already checked every rule and step.
 */
public record Scenario(String name, String description, List<Rule> rules, List<Step> timeline) {
    /** One timeline step; {@code line} is where it stands in the file, for status and errors. */
    public record Step(long atMillis, Kind kind, Rule rule, String target, long durationMillis, int line) {
        public String describe() {
            switch (kind) {
                case ADD: return "add rule " + rule.id();
                case REMOVE: return "remove rule " + target;
                case CLEAR: return "clear all rules";
                case OUTAGE: return "outage of " + target + (durationMillis > 0 ? " for " + durationMillis + " ms" : "");
                case BLACKHOLE: return "blackhole " + target + (durationMillis > 0 ? " for " + durationMillis + " ms" : "");
                case RESTORE: return "restore " + target;
                case FAILOVER: return "fail over" + (durationMillis > 0 ? " after an election of " + durationMillis + " ms" : "");
                default: return "end";
            }
        }
    }

    public enum Kind { ADD, REMOVE, CLEAR, OUTAGE, BLACKHOLE, RESTORE, FAILOVER, END }
}
