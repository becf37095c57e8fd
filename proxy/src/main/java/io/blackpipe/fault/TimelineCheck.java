package io.blackpipe.fault;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiFunction;

/**
 * A scenario's timeline as a whole, once each step is read: no step after an end, no add of a rule id in force, no
 * remove of one that is not. Every such error is reported, each step's once (a repeated step's copies share a path).
 */
final class TimelineCheck {
    private final Map<Scenario.Step, String> stepPaths;
    private final Set<String> ruleIds;
    private final Set<String> givenIds;
    private final BiFunction<String, String, ScenarioException> error;

    /**
     * @param stepPaths each step's field path ("timeline[3]"), its repeats' too
     * @param ruleIds   the ids of the rules read (those refused too), at the start or in add steps
     * @param givenIds  every id the file gives a rule
     * @param error     the error at a field path, with its message
     */
    TimelineCheck(Map<Scenario.Step, String> stepPaths, Set<String> ruleIds, Set<String> givenIds,
                  BiFunction<String, String, ScenarioException> error) {
        this.stepPaths = stepPaths;
        this.ruleIds = ruleIds;
        this.givenIds = givenIds;
        this.error = error;
    }

    /**
     * Adds to {@code errors} what is wrong with {@code steps} (in time order) after {@code rules}. Where the file had an
     * error already (a rule, an add, a remove or a clear left out), which ids are in force when is not known, and only
     * what is sure is said: a step after the end, and a remove of an id no rule of the file has ({@code everyIdKnown}:
     * its rules and timeline are lists, whose ids were all collected).
     */
    void check(List<Rule> rules, List<Scenario.Step> steps, boolean everyIdKnown, List<ScenarioException> errors) {
        boolean whole = errors.isEmpty();
        Map<String, String> inForce = new HashMap<>(); // rule id -> the field path that added it
        for (int i = 0; i < rules.size(); i++) {
            inForce.put(rules.get(i).id(), "rules[" + i + "]");
        }
        Set<String> reported = new HashSet<>(); // a repeated step's path once
        Scenario.Step end = null;
        for (Scenario.Step step : steps) {
            String path = stepPaths.get(step);
            if (end != null) {
                if (reported.add(path)) {
                    errors.add(error.apply(path, "at " + step.atMillis() + "ms it comes after the end step (" + stepPaths.get(end)
                            + ", at " + end.atMillis() + "ms) and would never run"));
                }
                continue;
            }
            switch (step.kind()) {
                case ADD -> {
                    String addedBy = inForce.put(step.rule().id(), path);
                    if (whole && addedBy != null && !addedBy.equals(path) && reported.add(path)) {
                        errors.add(error.apply(path + ".add.id", "rule id '" + step.rule().id() + "' is in force already at "
                                + step.atMillis() + "ms (added by " + addedBy + "); remove it before, or give this rule another id"));
                    }
                }
                case REMOVE -> {
                    boolean named = ruleIds.contains(step.target()) || givenIds.contains(step.target());
                    if (inForce.remove(step.target()) == null && (whole || !named && everyIdKnown) && reported.add(path)) {
                        errors.add(error.apply(path + ".remove", !named ? "no rule with id '" + step.target() + "' in this scenario"
                                : "rule '" + step.target() + "' is not in force at " + step.atMillis()
                                + "ms (not added yet, or removed or cleared before): the remove would do nothing"));
                    }
                }
                case CLEAR -> inForce.clear();
                case END -> end = step;
                default -> {
                }
            }
        }
    }
}
