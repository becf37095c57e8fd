package io.blackpipe.fault;

import io.blackpipe.observe.NameSpelling;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.yaml.snakeyaml.LoaderOptions;

/**
 * Reads a scenario file (YAML; JSON is YAML too) and checks all of it — every rule, every step,
 * every member it names — before anything runs, so a bad scenario is rejected whole with
 * "file:line: field: message".
 */
public final class ScenarioLoader {
    private static final Set<String> TOP_LEVEL = Set.of("name", "description", "rules", "timeline");
    /** Sorted, so the messages that list them read the same on every run (Set.of iterates in a random order). */
    private static final Set<String> STEP_ACTIONS = Collections.unmodifiableSortedSet(new TreeSet<>(
            List.of("add", "remove", "clear", "outage", "blackhole", "latency", "bandwidth", "idleTimeout", "restart", "rollingRestart", "restore", "resetConnections",
                    "failover",
                    "end")));

    /** Timeline steps in a scenario, repeats included: a run keeps them all. */
    static final int MAX_STEPS = 10_000;

    /** Characters (bytes for a file) in a scenario; one is a few kilobytes. */
    static final int MAX_SIZE = 1 << 20;
    /** Aliases (*name) of lists and mappings; YamlTree also caps what they expand to. */
    static final int MAX_ALIASES = 50;
    /** What snakeyaml may compose: a scenario is small, and its aliases must not multiply it. */
    private static final LoaderOptions YAML_LIMITS = YamlTree.limits(MAX_ALIASES, MAX_SIZE);
    /** Ids of rules written without one: scenario-rule-1, scenario-rule-2, ... */
    static final String GENERATED_ID_PREFIX = "scenario-rule-";

    private final RuleParser parser;
    private final Predicate<String> knownMember;
    private final UnaryOperator<String> noMember;
    private final Function<Failover, String> failoverRefusal;

    public ScenarioLoader(RuleParser parser, Predicate<String> knownMember) {
        this(parser, knownMember, member -> "no member '" + member + "'" + didYouMean(member)
                + " (use primary, secondary, all, or a member's host:port)", failover -> null);
    }

    /**
     * @param noMember        why a step's member names none of the deployment's, as the rest of the proxy says it
     *                        ("no member 'x' (known: primary, all, db1:27017 / localhost:27017)")
     * @param failoverRefusal why the deployment cannot run a failover step (an election's length on a real set, any
     *                        failover on a standalone), or null when it can: refused as the scenario loads, not when the step comes
     */
    public ScenarioLoader(RuleParser parser, Predicate<String> knownMember, UnaryOperator<String> noMember,
                          Function<Failover, String> failoverRefusal) {
        this.parser = parser;
        this.knownMember = knownMember;
        this.noMember = noMember;
        this.failoverRefusal = failoverRefusal;
    }

    private static String didYouMean(String member) {
        String likely = NameSpelling.likelyMeant(member, List.of("primary", "secondary", "all"));
        return likely == null ? "" : ": did you mean '" + likely + "'?";
    }

    /**
     * A loader for checking a scenario with no proxy at hand (`scenario validate`): which host:port is a
     * member only a running proxy knows, but a name that is no role, no "all" and no host:port ("primry")
     * names none anywhere, so it is refused here as the proxy would refuse it.
     */
    public static ScenarioLoader offline(RuleParser parser) {
        return new ScenarioLoader(parser, member -> member.equals("primary") || member.equals("secondary") || member.equals("all")
                || RuleParser.isHostPort(member));
    }

    public Scenario load(Path file) throws IOException {
        return parse(file.toString(), ScenarioText.read(file, file.toString()));
    }

    /**
     * Reads a scenario to start: its rules take their places in the seeded draws, unless it is refused whole (see
     * {@link ScenarioRunner#start(ScenarioRunner.Reading)}, which gives them back when its start is refused too).
     */
    public Scenario parse(String source, String text) {
        return parser.parseTogether(() -> read(source, text));
    }

    /** Reads a scenario only to check it (validate): its rules take no place in the draws of those started after. */
    public Scenario check(String source, String text) {
        return parser.checkOnly(() -> read(source, text));
    }

    private Scenario read(String source, String text) {
        // in UTF-8 bytes, as a file and the admin API's body are counted: 600,000 'é' passed validate, and run refused them
        if (text.length() > MAX_SIZE || text.getBytes(StandardCharsets.UTF_8).length > MAX_SIZE) {
            throw new ScenarioException(source, 1, "(file)", "is larger than " + MAX_SIZE + " bytes");
        }
        YamlTree tree = new YamlTree(source);
        BsonValue value = tree.read(text, YAML_LIMITS);
        if (!value.isDocument()) {
            throw new ScenarioException(source, 1, "(file)", "must be a mapping with name, description, rules, timeline");
        }
        BsonDocument root = value.asDocument();
        return new Reading(source, tree).scenario(root);
    }

    /** One file being read: knows its name and lines, collects rule ids. */
    private final class Reading extends MemberSteps {
        private final Set<String> ruleIds = new HashSet<>();
        private final Set<String> givenIds = new HashSet<>();
        /** Each timeline step's field path ("timeline[3]"), its repeats' too. */
        private final Map<Scenario.Step, String> stepPaths = new IdentityHashMap<>();
        private int generatedIds;

        Reading(String source, YamlTree tree) {
            super(source, tree, knownMember, noMember);
        }

        /**
         * The scenario {@code root} holds. Each top-level field, rule and step is checked on its own, so that one
         * reading reports every one that is wrong; the timeline as a whole only when they are all right.
         */
        Scenario scenario(BsonDocument root) {
            List<ScenarioException> errors = new ArrayList<>();
            for (String key : root.keySet()) {
                if (!TOP_LEVEL.contains(key)) {
                    errors.add(error(key, "unknown field (expected name, description, rules, timeline)"));
                }
            }
            String name = checked(errors, () -> requiredString(root, "name", "name"));
            collectGivenIds(root);
            if (root.containsKey("description") && !root.isString("description")) {
                errors.add(error("description", "must be text, not " + FieldCondition.shown(root.get("description"))));
            }
            String description = root.isString("description") ? root.getString("description").getValue() : "";
            List<Rule> rules = new ArrayList<>();
            BsonArray ruleList = checked(errors, () -> array(root, "rules"));
            for (int i = 0; ruleList != null && i < ruleList.size(); i++) {
                BsonValue written = ruleList.get(i);
                String path = "rules[" + i + "]";
                Rule rule = checked(errors, () -> rule(written, path));
                if (rule != null) {
                    rules.add(rule);
                }
            }
            List<Scenario.Step> steps = new ArrayList<>();
            BsonArray timeline = checked(errors, () -> array(root, "timeline"));
            for (int i = 0; timeline != null && i < timeline.size(); i++) {
                String path = "timeline[" + i + "]";
                if (steps.size() >= MAX_STEPS) {
                    errors.add(error(path, "one step too many: a scenario has at most " + MAX_STEPS + " steps, repeats included"));
                    break;
                }
                BsonValue written = timeline.get(i);
                int room = MAX_STEPS - steps.size();
                List<Scenario.Step> made = checked(errors, () -> {
                    Scenario.Step step = step(written, path);
                    BsonValue repeat = written.asDocument().get("repeat");
                    return repeat == null ? List.of(step) : repeated(step, written.asDocument(), repeat, path + ".repeat", room);
                });
                if (made != null) {
                    made.forEach(each -> stepPaths.put(each, path));
                    steps.addAll(made);
                }
            }
            steps.sort(Comparator.comparingLong(Scenario.Step::atMillis)); // stable: steps at one time run in file order
            new TimelineCheck(stepPaths, ruleIds, givenIds, this::error).check(rules, steps, ruleList != null && timeline != null, errors);
            if (!errors.isEmpty()) {
                throw ScenarioException.all(source, errors);
            }
            return new Scenario(name, description, List.copyOf(rules), List.copyOf(steps));
        }

        /** Every id the file gives a rule (at the start or in an add step), so a generated one avoids them all. */
        private void collectGivenIds(BsonDocument root) {
            List<BsonValue> documents = new ArrayList<>();
            if (root.isArray("rules")) {
                documents.addAll(root.getArray("rules"));
            }
            if (root.isArray("timeline")) {
                for (BsonValue step : root.getArray("timeline")) {
                    if (step.isDocument() && step.asDocument().containsKey("add")) {
                        documents.add(step.asDocument().get("add"));
                    }
                }
            }
            for (BsonValue document : documents) {
                if (document.isDocument() && document.asDocument().isString("id")) {
                    givenIds.add(document.asDocument().getString("id").getValue());
                }
            }
        }

        private Rule rule(BsonValue value, String path) {
            if (!value.isDocument()) {
                throw error(path, "must be a failCommand document");
            }
            BsonDocument document = value.asDocument().clone();
            String id = document.isString("id") ? document.getString("id").getValue() : generatedId();
            if (!ruleIds.add(id) && path.startsWith("rules[")) { // an add's id is checked against the rules in force at its time
                throw error(path + ".id", "rule id '" + id + "' is used twice");
            }
            try {
                return parser.parse(id, document);
            } catch (RuleException e) {
                throw error(path + "." + e.field(), e.getMessage().substring(e.field().length() + 2));
            }
        }

        /**
         * An id for a rule written without one: "scenario-rule-N", apart from the ids other tools
         * generate (the Java API's rule-N, the admin API's UUIDs) and skipping any the file gives.
         */
        private String generatedId() {
            String id;
            do {
                id = GENERATED_ID_PREFIX + (++generatedIds);
            } while (givenIds.contains(id));
            return id;
        }

        private Scenario.Step step(BsonValue value, String path) {
            if (!value.isDocument()) {
                throw error(path, "must be a mapping with 'at' and one action");
            }
            BsonDocument step = value.asDocument();
            long at = duration(step.get("at"), path + ".at", true);
            List<String> actions = new ArrayList<>();
            for (String key : step.keySet()) {
                if (key.equals("at") || key.equals("repeat")) {
                    continue;
                }
                if (!STEP_ACTIONS.contains(key)) {
                    throw error(path + "." + key, "unknown step (expected one of " + STEP_ACTIONS + ")");
                }
                actions.add(key);
            }
            if (actions.size() != 1) {
                throw error(path, "needs exactly one action of " + STEP_ACTIONS + ", has " + actions);
            }
            String action = actions.get(0);
            BsonValue argument = step.get(action);
            String field = path + "." + action;
            int line = tree.line(path);
            switch (action) {
                case "add":
                    return new Scenario.Step(at, Scenario.Kind.ADD, rule(argument, field), null, 0, line);
                case "remove":
                    if (!argument.isString()) {
                        throw error(field, "must be the id of a rule");
                    }
                    return new Scenario.Step(at, Scenario.Kind.REMOVE, null, argument.asString().getValue(), 0, line);
                case "clear":
                    requireTrue(argument, field);
                    return new Scenario.Step(at, Scenario.Kind.CLEAR, null, null, 0, line);
                case "outage":
                case "blackhole":
                    return memberStep(at, action.equals("outage") ? Scenario.Kind.OUTAGE : Scenario.Kind.BLACKHOLE, argument, field, line,
                            MemberSteps.TIMED_MEMBER_FIELDS);
                case "latency":
                    return latencyStep(at, argument, field, line);
                case "bandwidth":
                    return bandwidthStep(at, argument, field, line);
                case "idleTimeout":
                    return idleTimeoutStep(at, argument, field, line);
                case "restart":
                    return restartStep(at, argument, field, line);
                case "rollingRestart":
                    return rollingRestartStep(at, argument, field, line);
                case "restore":
                    return memberStep(at, Scenario.Kind.RESTORE, argument, field, line, List.of("member"));
                case "resetConnections":
                    return memberStep(at, Scenario.Kind.RESET_CONNECTIONS, argument, field, line, List.of("member"));
                case "failover":
                    return failoverStep(at, argument, field, line);
                default:
                    requireTrue(argument, field);
                    return new Scenario.Step(at, Scenario.Kind.END, null, null, 0, line);
            }
        }

        /**
         * failover: {} (the next member primary at once), failover: {election: 5s} (no primary that long first), failover:
         * {rollback: 2s} (the old primary's last 2 s below majority rolled back), or both.
         */
        private Scenario.Step failoverStep(long at, BsonValue argument, String field, int line) {
            if (!argument.isDocument()) {
                throw error(field, "must be {}, {election: DURATION}, {rollback: DURATION} or both");
            }
            onlyFields(argument.asDocument(), field, List.of("election", "rollback"));
            BsonValue election = argument.asDocument().get("election");
            BsonValue rollback = argument.asDocument().get("rollback");
            long rollbackMillis = rollback == null ? 0 : duration(rollback, field + ".rollback", false);
            if (rollbackMillis > Failover.MAX_ROLLBACK_MILLIS) {
                throw error(field + ".rollback", "must be at most 60s (how long blackpipe remembers a primary's writes), not "
                        + rollbackMillis + "ms");
            }
            Failover failover = new Failover(election == null ? 0 : duration(election, field + ".election", false), rollbackMillis);
            String refused = failoverRefusal.apply(failover);
            if (refused != null) {
                throw error(!failover.simulatedOnly() ? field : field + (failover.electionMillis() > 0 ? ".election" : ".rollback"), refused);
            }
            return new Scenario.Step(at, Scenario.Kind.FAILOVER, null, null, 0, line).withFailover(failover);
        }

        /**
         * A step with {@code repeat: {every: 10s, times: 5}}: the step at its {@code at}, then again every
         * that long, that many times in all. A rule it adds is added afresh each time (its times anew), as
         * re-sending a rule does; an end happens once.
         */
        private List<Scenario.Step> repeated(Scenario.Step step, BsonDocument source, BsonValue repeat, String field, int room) {
            if (!repeat.isDocument()) {
                throw error(field, "must be {every: DURATION, times: N}");
            }
            onlyFields(repeat.asDocument(), field, List.of("every", "times"));
            if (step.kind() == Scenario.Kind.END) {
                throw error(field, "an end happens once: leave repeat out");
            }
            long every = duration(repeat.asDocument().get("every"), field + ".every", true);
            if (every < 1) {
                throw error(field + ".every", "must be at least 1ms");
            }
            BsonValue times = repeat.asDocument().get("times");
            if (times == null || !times.isNumber() || times.asNumber().doubleValue() % 1 != 0 || times.asNumber().longValue() < 1
                    || times.asNumber().longValue() > Math.min(room, MAX_STEPS)) {
                throw error(field + ".times", "must be a whole number from 1 to " + Math.min(room, MAX_STEPS)
                        + " (a scenario has at most " + MAX_STEPS + " steps, repeats included), not " + (times == null ? "missing"
                        : FieldCondition.shown(times)));
            }
            try {
                Math.addExact(step.atMillis(), Math.multiplyExact(every, times.asNumber().longValue() - 1));
            } catch (ArithmeticException e) {
                throw error(field + ".every", "puts the last repeat beyond any time blackpipe can wait for");
            }
            List<Scenario.Step> steps = new ArrayList<>();
            for (int k = 0; k < times.asNumber().intValue(); k++) {
                Rule rule = step.rule() == null || k == 0 ? step.rule()
                        : parser.parse(step.rule().id(), source.getDocument("add").clone()); // checked as the first copy
                steps.add(step.repeatedAt(step.atMillis() + k * every, rule));
            }
            return steps;
        }
    }
}
