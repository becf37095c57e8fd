package io.blackpipe.fault;

import io.blackpipe.observe.Attempt;
import io.blackpipe.topology.MemberState;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.bson.BsonDocument;

/**
 * The active rules. Readers (every command) see an immutable snapshot indexed by command name,
 * so a command no rule names costs one map lookup however many rules are loaded; writers
 * replace the snapshot whole, so a batch of rules is applied all or nothing.
 */
public final class RuleSet {
    /**
     * @param byCommand the rules naming a command, with the rules on every command among them in
     *                  the order added
     * @param forAll    the rules on every command (failAllCommands), for a command no rule names; null when none
     */
    private record Snapshot(List<Rule> ordered, Map<String, Rule[]> byCommand, Rule[] forAll) {
        static Snapshot of(List<Rule> rules) {
            Map<String, List<Rule>> index = new HashMap<>();
            for (Rule rule : rules) {
                if (!rule.matcher().allCommands()) {
                    for (String command : rule.matcher().commands()) {
                        index.put(command, new ArrayList<>());
                    }
                }
            }
            List<Rule> forAll = new ArrayList<>();
            for (Rule rule : rules) {
                if (rule.matcher().allCommands()) {
                    forAll.add(rule);
                    index.values().forEach(list -> list.add(rule));
                } else {
                    rule.matcher().commands().forEach(command -> index.get(command).add(rule));
                }
            }
            Map<String, Rule[]> byCommand = new HashMap<>();
            index.forEach((command, list) -> byCommand.put(command, list.toArray(new Rule[0])));
            return new Snapshot(List.copyOf(rules), byCommand, forAll.isEmpty() ? null : forAll.toArray(new Rule[0]));
        }
    }

    /** The fault chosen for one attempt, and the rule that chose it. */
    public record Decision(Rule rule, FaultAction action) {
    }

    private volatile Snapshot snapshot = Snapshot.of(List.of());
    /**
     * How many commands each rule id has faulted, kept when the rule is replaced or removed: the
     * server's failpoint count (configureFailPoint's {@code count}, waitForFailPoint's
     * {@code timesEntered}) never goes back either. Only a rule's firing touches it: a fault, or a rule of
     * errorCode 0 that fires and forwards, as mongod's failpoint counts it; never a command no rule fired on.
     */
    private final Map<String, AtomicLong> firedById = new ConcurrentHashMap<>();
    /**
     * The ids counted at most: past it, the counts of ids no rule in force has are forgotten, those counted first
     * first. A chaos controller that gives every rule a fresh id kept one more count a rule, for as long as the proxy
     * ran (some 400 bytes each, 86,000 a day at one a second).
     */
    static final int MOST_IDS_COUNTED = 10_000;
    /** The ids {@link #firedById} holds, in the order first counted (an id forgotten and counted again comes last). */
    private final Queue<String> countedFirstFirst = new ConcurrentLinkedQueue<>();

    /** The first rule (in the order added) that matches and whose mode fires, or null. */
    public Decision decide(Attempt attempt, MemberState state, String advertisedMember) {
        return decide(attempt, () -> state, advertisedMember, () -> null);
    }

    /**
     * The same, reading the member's state only when a rule names the command, and the command's document
     * only when such a rule looks into it (commandMatches): most commands match no rule, and the proxy asks for
     * every one.
     */
    public Decision decide(Attempt attempt, Supplier<MemberState> state, String advertisedMember, Supplier<BsonDocument> command) {
        Snapshot rules = snapshot;
        Rule[] candidates = rules.byCommand.get(attempt.command());
        if (candidates == null) {
            candidates = rules.forAll;
            if (candidates == null) {
                return null;
            }
        }
        MemberState current = state.get();
        for (Rule rule : candidates) {
            if (!rule.mode().spent() && rule.matcher().matches(attempt, current, advertisedMember, command) && rule.mode().fire()) {
                counted(rule.id()).incrementAndGet();
                return new Decision(rule, rule.action());
            }
        }
        return null;
    }

    private AtomicLong counted(String id) {
        AtomicLong count = firedById.get(id);
        if (count == null) { // a rule's first firing under this id: the rare path
            count = firedById.computeIfAbsent(id, first -> {
                countedFirstFirst.add(first);
                return new AtomicLong();
            });
            if (firedById.size() > MOST_IDS_COUNTED) {
                forgetTheOldestCountsOfRulesGone();
            }
        }
        return count;
    }

    private synchronized void forgetTheOldestCountsOfRulesGone() {
        Set<String> inForce = new HashSet<>();
        snapshot.ordered.forEach(rule -> inForce.add(rule.id()));
        for (int looked = countedFirstFirst.size(); looked > 0 && firedById.size() > MOST_IDS_COUNTED; looked--) {
            String id = countedFirstFirst.poll();
            if (id == null) {
                return;
            }
            if (inForce.contains(id)) {
                countedFirstFirst.add(id); // its rule still fires: its count stays, as the server's failpoint's
            } else {
                firedById.remove(id);
            }
        }
    }

    /** How many commands rules under {@code id} have faulted so far (0 for an id never seen). */
    public long fired(String id) {
        AtomicLong fired = firedById.get(id);
        return fired == null ? 0 : fired.get();
    }

    /** Starts every id's count from 0 again (a fresh start for the next test; the server has none). */
    public synchronized void forgetFired() {
        countedFirstFirst.clear(); // first: an id counted meanwhile may stay queued without a count (harmless), never the reverse
        firedById.clear();
    }

    public List<Rule> rules() {
        return snapshot.ordered;
    }

    /**
     * Adds a rule; one with the same id is replaced where it stands, so re-sending a rule (a
     * changed mode or error, or the same again) keeps its precedence among the others.
     */
    public synchronized void put(Rule rule) {
        putAll(List.of(rule));
    }

    /** Adds several rules at once (same ids replaced in place, new ones last): all become active together. */
    public synchronized void putAll(List<Rule> added) {
        List<Rule> rules = new ArrayList<>(snapshot.ordered);
        // each id's place looked up, not searched for: a scenario's thousands of rules went in in quadratic time,
        // and an app's configureFailPoint, put on its event loop, waited for them
        Map<String, Integer> places = new HashMap<>();
        for (int i = 0; i < rules.size(); i++) {
            places.putIfAbsent(rules.get(i).id(), i); // the first, as a search found it
        }
        for (Rule rule : added) {
            Integer existing = places.putIfAbsent(rule.id(), rules.size());
            if (existing != null) {
                rules.set(existing, rule);
            } else {
                rules.add(rule);
            }
        }
        snapshot = Snapshot.of(rules);
    }

    /**
     * Adds {@code added} as {@link #putAll} does, unless a rule in force that {@code others} takes for another's has one
     * of their ids: then adds nothing, and gives those ids. Checked and put under one lock, so a rule put in between
     * (an operator's, an app's configureFailPoint) is never replaced.
     */
    public synchronized List<String> putAllUnlessTaken(List<Rule> added, Predicate<Rule> others) {
        Set<String> ids = new HashSet<>();
        added.forEach(rule -> ids.add(rule.id()));
        List<String> taken = snapshot.ordered.stream().filter(rule -> ids.contains(rule.id()) && others.test(rule))
                .map(Rule::id).distinct().toList();
        if (taken.isEmpty()) {
            putAll(added);
        }
        return taken;
    }

    /** Replaces every rule at once. */
    public synchronized void replaceAll(List<Rule> rules) {
        snapshot = Snapshot.of(rules);
    }

    public synchronized boolean remove(String id) {
        return removeIf(r -> r.id().equals(id));
    }

    public synchronized boolean removeIf(Predicate<Rule> condition) {
        List<Rule> rules = new ArrayList<>(snapshot.ordered);
        boolean removed = rules.removeIf(condition);
        if (removed) {
            snapshot = Snapshot.of(rules);
        }
        return removed;
    }

    public synchronized void clear() {
        snapshot = Snapshot.of(List.of());
    }
}
