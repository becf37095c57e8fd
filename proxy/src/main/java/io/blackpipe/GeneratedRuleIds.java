package io.blackpipe;

import io.blackpipe.fault.RuleSet;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * rule-1, rule-2, ...: the ids BlackPipe gives rules added without one, passing over any id a rule on the
 * proxy already has (a rule the test named rule-1 is not replaced).
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
}
