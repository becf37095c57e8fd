package io.blackpipe;

import io.blackpipe.fault.RuleSet;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * rule-1, rule-2, ...: the ids BlackPipe gives rules added without one, passing over any id a rule on the
 * proxy already has (a rule the test named rule-1 is not replaced). They start over at a reset, so that a test
 * gets the same ids run alone as in its class.
 */
final class GeneratedRuleIds {
    private final AtomicInteger last = new AtomicInteger();

    String next(RuleSet rules) {
        Set<String> taken = new HashSet<>();
        rules.rules().forEach(rule -> taken.add(rule.id()));
        String id;
        do {
            id = "rule-" + last.incrementAndGet();
        } while (taken.contains(id));
        return id;
    }

    /** The next is rule-1 again, or the first after it that no rule in force has. */
    void startOver() {
        last.set(0);
    }

    /** {@code id}, the last one {@link #next} gave, went to no rule (the rule was refused): the next rule gets it. */
    void unused(String id) {
        int number = Integer.parseInt(id.substring("rule-".length()));
        last.compareAndSet(number, number - 1);
    }
}
