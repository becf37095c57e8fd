package io.blackpipe.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.fault.action.DelayReply;
import io.blackpipe.fault.action.TrickleReply;
import io.blackpipe.fault.action.TruncateReply;
import io.blackpipe.fault.action.DropReply;
import io.blackpipe.fault.action.ErrorReply;
import io.blackpipe.fault.action.Hang;
import io.blackpipe.fault.action.ResetConnection;
import io.blackpipe.fault.action.WriteConcernError;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.IntFunction;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The scenario file format: YAML and the same scenario as JSON read alike, every step kind,
 * steps in time order, every duration form; and every bad file rejected whole with
 * "source:line: field: message", where the line is the line of the offending field in the text.
 */
class ScenarioLoaderTest {
    /** What a replica set in front of which scenarios are checked knows: roles, "all", and one member by address. */
    private static final Predicate<String> MEMBERS = Set.of("primary", "secondary", "all", "db1:27017")::contains;

    private final ScenarioLoader loader = new ScenarioLoader(new RuleParser(42), MEMBERS);

    /** The repository's fault-scripts/ directory, found from the working directory (proxy/ under Maven) upwards. */
    static Path scriptsDir() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null) {
            Path candidate = dir.resolve("fault-scripts");
            if (Files.isRegularFile(candidate.resolve("README.md"))) {
                return candidate;
            }
            dir = dir.getParent();
        }
        throw new AssertionError("no fault-scripts/ directory above " + Path.of("").toAbsolutePath());
    }

    static Path script(String name) {
        Path file = scriptsDir().resolve(name + ".yaml");
        assertTrue(Files.isRegularFile(file), () -> file + " is missing");
        return file;
    }

    private ScenarioException rejected(String text) {
        return assertThrows(ScenarioException.class, () -> loader.parse("bad.yaml", text), text);
    }

    /** A scenario of one alwaysOn rule on {@code command}, its further data fields to be added as lines 8 on (6 spaces in). */
    private static String oneRuleOn(String command) {
        return """
                name: x
                rules:
                  - id: a
                    configureFailPoint: failCommand
                    mode: alwaysOn
                    data:
                      failCommands: [%s]
                """.formatted(command);
    }

    private void assertRejected(String text, int line, String field, String messagePart) {
        ScenarioException e = rejected(text);
        String prefix = "bad.yaml:" + line + ": " + field + ": ";
        assertTrue(e.getMessage().startsWith(prefix), () -> "expected '" + prefix + "...', got: " + e.getMessage());
        assertTrue(e.getMessage().contains(messagePart), () -> "expected '" + messagePart + "' in: " + e.getMessage());
    }

    // ------------------------------------------------------------------ valid scenarios

    private static final String EVERY_STEP_YAML = """
            # every step kind, written out of order on purpose
            name: everything
            description: One of each step.
            rules:
              - id: blip
                configureFailPoint: failCommand
                mode: {times: 1}
                data: {failCommands: [insert], resetConnection: true}
              - configureFailPoint: failCommand
                mode: alwaysOn
                data:
                  failCommands: [find]
                  delayReplyMS: 250
            timeline:
              - at: 2m
                end: true
              - at: 5s
                add: {id: later, configureFailPoint: failCommand, mode: alwaysOn, data: {failCommands: [find], errorCode: 91}}
              - at: 10s
                remove: later
              - at: 500ms
                outage: {member: primary, duration: 10s}
              - at: 30s
                blackhole: {member: secondary, duration: 1500}
              - at: 35s
                latency: {member: secondary, delay: 200ms, jitter: 50ms, duration: 5s}
              - at: 37s
                bandwidth: {member: primary, rate: 64KiB/s, duration: 2s}
              - at: 38s
                idleTimeout: {member: primary, after: 4m, then: reset, duration: 10m}
              - at: 39s
                restart: {member: secondary, quiesce: 2s, down: 3s}
              - at: 39500ms
                rollingRestart: {down: 4s, between: 1s}
              - at: 40s
                restore: all
              - at: 42s
                resetConnections: {member: secondary}
              - at: 45s
                failover: {}
              - at: 60s
                clear: true
              - at: 750
                outage: "db1:27017"
            """;

    private static final String EVERY_STEP_JSON = """
            {
              "name": "everything",
              "description": "One of each step.",
              "rules": [
                {"id": "blip", "configureFailPoint": "failCommand", "mode": {"times": 1},
                 "data": {"failCommands": ["insert"], "resetConnection": true}},
                {"configureFailPoint": "failCommand", "mode": "alwaysOn",
                 "data": {"failCommands": ["find"], "delayReplyMS": 250}}
              ],
              "timeline": [
                {"at": "2m", "end": true},
                {"at": "5s", "add": {"id": "later", "configureFailPoint": "failCommand", "mode": "alwaysOn",
                                     "data": {"failCommands": ["find"], "errorCode": 91}}},
                {"at": "10s", "remove": "later"},
                {"at": "500ms", "outage": {"member": "primary", "duration": "10s"}},
                {"at": "30s", "blackhole": {"member": "secondary", "duration": 1500}},
                {"at": "35s", "latency": {"member": "secondary", "delay": "200ms", "jitter": 50, "duration": "5s"}},
                {"at": "37s", "bandwidth": {"member": "primary", "rate": 65536, "duration": 2000}},
                {"at": "38s", "idleTimeout": {"member": "primary", "after": "240s", "then": "RESET", "duration": "10m"}},
                {"at": "39s", "restart": {"member": "secondary", "quiesce": 2000, "down": "3s"}},
                {"at": 39500, "rollingRestart": {"down": 4000, "between": "1s"}},
                {"at": "40s", "restore": "all"},
                {"at": "42s", "resetConnections": {"member": "secondary"}},
                {"at": "45s", "failover": {}},
                {"at": "60s", "clear": true},
                {"at": 750, "outage": "db1:27017"}
              ]
            }
            """;

    /** The scenario reduced to what matters, so two readings can be compared. */
    private static List<String> shape(Scenario scenario) {
        Stream<String> head = Stream.of(scenario.name(), scenario.description());
        Stream<String> rules = scenario.rules().stream()
                .map(r -> "rule " + r.id() + " " + r.matcher().commands() + " " + r.mode().describe() + " " + r.action().name());
        Stream<String> steps = scenario.timeline().stream()
                .map(s -> s.atMillis() + " " + s.kind() + " " + (s.rule() == null ? "-" : s.rule().id()) + " " + s.target()
                        + " " + s.durationMillis() + " " + s.latency() + " " + s.bandwidth() + " " + s.idleTimeout() + " " + s.restart());
        return Stream.of(head, rules, steps).flatMap(s -> s).collect(Collectors.toList());
    }

    @Test
    void aYamlScenarioWithEveryStepKindLoadsInTimeOrder() {
        Scenario scenario = loader.parse("every.yaml", EVERY_STEP_YAML);
        assertEquals("everything", scenario.name());
        assertEquals("One of each step.", scenario.description());

        assertEquals(2, scenario.rules().size());
        Rule blip = scenario.rules().get(0);
        assertEquals("blip", blip.id());
        assertEquals(Set.of("insert"), blip.matcher().commands());
        assertInstanceOf(ResetConnection.class, blip.action());
        Rule unnamed = scenario.rules().get(1);
        assertFalse(unnamed.id().isBlank(), "a rule without id gets one");
        assertInstanceOf(DelayReply.class, unnamed.action());

        List<Scenario.Step> steps = scenario.timeline();
        assertEquals(List.of(500L, 750L, 5_000L, 10_000L, 30_000L, 35_000L, 37_000L, 38_000L, 39_000L, 39_500L, 40_000L, 42_000L, 45_000L,
                        60_000L, 120_000L),
                steps.stream().map(Scenario.Step::atMillis).toList(), "steps are sorted by 'at'");
        assertEquals(List.of(Scenario.Kind.OUTAGE, Scenario.Kind.OUTAGE, Scenario.Kind.ADD, Scenario.Kind.REMOVE,
                        Scenario.Kind.BLACKHOLE, Scenario.Kind.LATENCY, Scenario.Kind.BANDWIDTH, Scenario.Kind.IDLE_TIMEOUT,
                        Scenario.Kind.RESTART, Scenario.Kind.ROLLING_RESTART, Scenario.Kind.RESTORE, Scenario.Kind.RESET_CONNECTIONS, Scenario.Kind.FAILOVER, Scenario.Kind.CLEAR,
                        Scenario.Kind.END),
                steps.stream().map(Scenario.Step::kind).toList());
        assertEquals(Set.copyOf(List.of(Scenario.Kind.values())), steps.stream().map(Scenario.Step::kind).collect(Collectors.toSet()),
                "every step kind is covered");

        Scenario.Step outage = steps.get(0);
        assertEquals("primary", outage.target());
        assertEquals(10_000, outage.durationMillis());
        assertEquals(21, outage.line(), "a step remembers its line in the file (the line of its first key)");
        Scenario.Step byAddress = steps.get(1);
        assertEquals("db1:27017", byAddress.target());
        assertEquals(0, byAddress.durationMillis(), "an outage without duration lasts until restored");
        Scenario.Step add = steps.get(2);
        assertEquals("later", add.rule().id());
        assertEquals(91, assertInstanceOf(ErrorReply.class, add.rule().action()).code());
        assertEquals("later", steps.get(3).target());
        assertEquals("secondary", steps.get(4).target());
        assertEquals(1_500, steps.get(4).durationMillis(), "a plain number is milliseconds");
        Scenario.Step latency = steps.get(5);
        assertEquals(new Latency(200, 50), latency.latency());
        assertEquals(5_000, latency.durationMillis());
        assertEquals("latency of 200 ms +/- 50 ms towards the clients on secondary for 5000 ms", latency.describe());
        Scenario.Step bandwidth = steps.get(6);
        assertEquals(new Bandwidth(64 * 1024), bandwidth.bandwidth());
        assertEquals(2_000, bandwidth.durationMillis());
        assertEquals("bandwidth of 64 KiB/s each way on primary for 2000 ms", bandwidth.describe());
        Scenario.Step idle = steps.get(7);
        assertEquals(new IdleTimeout(240_000, IdleTimeout.Then.RESET), idle.idleTimeout());
        assertEquals("idle timeout (idle 240000 ms, then reset) on primary for 600000 ms", idle.describe());
        Scenario.Step restart = steps.get(8);
        assertEquals(new Restart(2_000, 3_000), restart.restart());
        assertEquals("restart secondary (quiesce 2000 ms, down 3000 ms)", restart.describe());
        Scenario.Step rolling = steps.get(9);
        assertEquals(new Restart(Restart.DEFAULT_QUIESCE_MILLIS, 4_000), rolling.restart());
        assertEquals("rolling restart (quiesce 15000 ms, down 4000 ms, 1000 ms between members)", rolling.describe());
        assertEquals("all", steps.get(10).target());
        assertEquals("secondary", steps.get(11).target());
        assertEquals("reset the connections of secondary", steps.get(11).describe());
        assertEquals(15, steps.get(14).line());
        assertEquals("outage of primary for 10000 ms", outage.describe());
    }

    @Test
    void theSameScenarioAsJsonReadsTheSame() {
        Scenario yaml = loader.parse("every.yaml", EVERY_STEP_YAML);
        Scenario json = loader.parse("every.json", EVERY_STEP_JSON);
        List<String> yamlShape = shape(yaml);
        List<String> jsonShape = shape(json);
        // generated ids may differ between readings; everything else may not
        assertEquals(yamlShape.size(), jsonShape.size());
        for (int i = 0; i < yamlShape.size(); i++) {
            assertEquals(yamlShape.get(i).replaceAll("rule-\\d+", "rule-N"), jsonShape.get(i).replaceAll("rule-\\d+", "rule-N"));
        }
        assertEquals(yaml.rules().get(0).source(), json.rules().get(0).source(), "the rule documents are the same BSON");
        assertEquals(yaml.timeline().get(2).rule().source(), json.timeline().get(2).rule().source());
    }

    @ParameterizedTest(name = "at: {0} is {1} ms")
    @CsvSource({
            "500ms, 500",
            "5s, 5000",
            "2m, 120000",
            "1.5s, 1500",
            "0s, 0",
            "1500, 1500",
            "2.6, 3",
            "'\"2500\"', 2500",
            "0, 0"})
    void durationsAreMillisecondsSecondsMinutesOrPlainNumbers(String written, long millis) {
        Scenario scenario = loader.parse("d.yaml", "name: d\ntimeline:\n  - at: " + written + "\n    clear: true\n"
                + (millis == 0 ? "" : "  - at: 1s\n    outage: {member: primary, duration: " + written + "}\n"));
        assertEquals(millis, scenario.timeline().stream().filter(s -> s.kind() == Scenario.Kind.CLEAR).findFirst().orElseThrow().atMillis());
        if (millis > 0) {
            assertEquals(millis, scenario.timeline().stream().filter(s -> s.kind() == Scenario.Kind.OUTAGE).findFirst().orElseThrow()
                    .durationMillis());
        }
    }

    /** The proxy takes 0 as "until restored": a duration written as zero must not silently mean forever. */
    @ParameterizedTest(name = "{0} for {1}")
    @CsvSource({"outage, 0s", "outage, 0", "blackhole, 0ms", "blackhole, 0.0s", "outage, 0m"})
    void aZeroOutageOrBlackholeDurationIsRejected(String action, String written) {
        // (one above zero and under 1ms is refused for every duration: NoOpInputsTest)
        assertRejected("name: d\ntimeline:\n  - at: 1s\n    " + action + ": {member: primary, duration: " + written + "}\n",
                4, "timeline[0]." + action + ".duration", "must be at least 1ms (leave it out for until restored)");
        assertEquals(1, loader.parse("d.yaml", "name: d\ntimeline:\n  - at: 1s\n    " + action + ": {member: primary, duration: 1ms}\n")
                .timeline().get(0).durationMillis());
    }

    @Test
    void durationsDirectly() {
        assertEquals(500, Durations.millis("500ms"));
        assertEquals(5_000, Durations.millis("5s"));
        assertEquals(120_000, Durations.millis("2m"));
        assertEquals(42, Durations.millis(42));
        assertEquals(42, Durations.millis("42"));
        assertEquals(1_000, Durations.millis(" 1S "));
        assertEquals(3, Durations.millis(2.6), "a fractional number of milliseconds is rounded");
        assertEquals(3, Durations.millis(2.6f));
        assertThrows(Durations.TooShort.class, () -> Durations.millis(0.4), "not rounded down to 0: under 1ms is refused");
        for (Object bad : new Object[] {"soon", "5d", "", "-5s", -1, "ms", "h", null}) {
            assertThrows(IllegalArgumentException.class, () -> Durations.millis(bad), String.valueOf(bad));
        }
        assertEquals(1_500, Durations.millis("1.5s"));
        assertEquals(500, Durations.millis(".5s"));
        // Java reads "2d" as the double 2.0, and takes exponents and hex: two days would have been 2 ms
        for (String notWrittenByAPerson : List.of("2d", "2D", "3f", "1e3", "1e3ms", "0x10", "0x1p3", "+5s", "1_000")) {
            assertEquals("'" + notWrittenByAPerson + "' is not a duration such as 500ms, 5s or 2m",
                    assertThrows(IllegalArgumentException.class, () -> Durations.millis(notWrittenByAPerson)).getMessage());
        }
    }

    /** YAML 1.1 reads these unquoted as numbers (0x10 as 16): they are refused as durations, rates and counts, as quoted. */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
            "at: 0x10                                        | 3 | timeline[0].at              | '0x10' is not a duration",
            "at: 1_000                                       | 3 | timeline[0].at              | '1_000' is not a duration",
            "at: 1:30                                        | 3 | timeline[0].at              | '1:30' is not a duration",
            "at: 1.5e+3                                      | 3 | timeline[0].at              | '1.5e+3' is not a duration",
            "at: 1s/    outage: {member: primary, duration: 0x10} | 4 | timeline[0].outage.duration | '0x10' is not a duration",
            "at: 1s/    bandwidth: {member: primary, rate: 0x40}  | 4 | timeline[0].bandwidth.rate  | 0x40"})
    void numbersWrittenAsOnlyYamlOnePointOneReadsThemAreRefused(String step, int line, String field, String message) {
        String written = step.replace("/", "\n");
        assertRejected("name: x\ntimeline:\n  - " + written + (written.contains("\n") ? "" : "\n    clear: true") + "\n", line, field,
                message);
    }

    /** Plain digits are what they say: 010 is ten, not YAML 1.1's octal eight. */
    @Test
    void plainDecimalNumbersStillRead() {
        Scenario scenario = loader.parse("plain.yaml", "name: x\ntimeline:\n  - at: 1500\n    clear: true\n  - at: 2.5\n    clear: true\n"
                + "  - at: 010\n    clear: true\n  - at: 0\n    clear: true\n");
        assertEquals(List.of(0L, 3L, 10L, 1_500L), scenario.timeline().stream().map(Scenario.Step::atMillis).sorted().toList());
    }

    @Test
    void aTrickleTakesTheRuleFieldsTheApiTakesAndAFieldWithoutTheOtherIsNamed() {
        Scenario scenario = loader.parse("trickle.yaml", """
                name: slow-link
                rules:
                  - id: trickle
                    configureFailPoint: failCommand
                    mode: {times: 1}
                    data: {failCommands: [find], trickleReplyBytes: 64, trickleReplyIntervalMS: 250}
                """);
        assertInstanceOf(TrickleReply.class, scenario.rules().get(0).action());
        String piecesAlone = oneRuleOn("find") + "      trickleReplyBytes: 64\n";
        // the line of data, which lacks it
        assertRejected(piecesAlone, 6, "rules[0].data.trickleReplyIntervalMS", "required with trickleReplyBytes");
        assertRejected(piecesAlone + "      trickleReplyIntervalMS: 0.5\n", 9, "rules[0].data.trickleReplyIntervalMS",
                "must be a whole number of at least 1");
    }

    @Test
    void aTruncationTakesTheRuleFieldTheApiTakesAndABadOneIsNamedWithItsLine() {
        Scenario scenario = loader.parse("cut.yaml", """
                name: cut-reply
                rules:
                  - id: cut
                    configureFailPoint: failCommand
                    mode: {times: 1}
                    data: {failCommands: [insert], truncateReplyBytes: 20}
                """);
        assertInstanceOf(TruncateReply.class, scenario.rules().get(0).action());
        String cut = oneRuleOn("insert");
        assertRejected(cut + "      truncateReplyBytes: 0\n", 8, "rules[0].data.truncateReplyBytes", "must be a whole number of at least 1");
        assertRejected(cut + "      truncateReplyBytes: 20\n      dropReply: true\n", 8, "rules[0].data.truncateReplyBytes",
                "give dropReply or truncateReplyBytes, not both");
    }

    /** Whether the scenario's first rule holds this update command (commandMatches), its other fields matching. */
    private static boolean firstRuleHolds(Scenario scenario, String updateJson) {
        return scenario.rules().get(0).matcher().matches(FakeInterception.Facts.command("update").attempt("", 1),
                FakeInterception.primary(17), "x:1", () -> BsonDocument.parse(updateJson));
    }

    /** A scenario of one dropReply rule on update, its commandMatches fields to be added as lines 10 on (8 spaces in). */
    private static final String UPDATE_RULE = oneRuleOn("update") + "      dropReply: true\n      commandMatches:\n";

    @Test
    void commandMatchesTakesDottedPathsAsYamlKeysAndOperatorsAndABadOneIsNamedWithItsLine() {
        Scenario scenario = loader.parse("one-order.yaml", UPDATE_RULE + "        \"updates.q._id\": 42\n");
        assertTrue(firstRuleHolds(scenario, "{update: 'c', updates: [{q: {_id: {$numberLong: '42'}}, u: {x: 1}}]}"));
        assertFalse(firstRuleHolds(scenario, "{update: 'c', updates: [{q: {_id: 41}, u: {x: 1}}]}"));
        assertRejected(UPDATE_RULE + "        updates.q.qty: {$gt: [5]}\n", 10, "rules[0].data.commandMatches.updates.q.qty.$gt",
                "$gt orders numbers, strings, ObjectIds, booleans, dates and timestamps; not an array");
        Scenario ranged = loader.parse("big-orders.yaml", UPDATE_RULE + "        updates.q.qty: {$gte: 100}\n"
                + "        updates.u.$set.note: {$regex: '^rush', $options: i}\n");
        assertTrue(firstRuleHolds(ranged, "{update: 'c', updates: [{q: {qty: 100}, u: {$set: {note: 'RUSH order'}}}]}"));
        assertFalse(firstRuleHolds(ranged, "{update: 'c', updates: [{q: {qty: 99}, u: {$set: {note: 'rush'}}}]}"));
        assertFalse(firstRuleHolds(ranged, "{update: 'c', updates: [{q: {qty: 100}, u: {$set: {note: 'slow'}}}]}"));
    }

    @Test
    void extendedJsonTypeWrappersNameAnObjectIdOrADecimalInAScenarioAsTheApisJsonDoes() {
        Scenario scenario = loader.parse("one-order.yaml", UPDATE_RULE
                + "        updates.q._id: {$oid: 65a1b2c3d4e5f60718293a4b}\n        updates.u.$set.price: {$numberDecimal: \"9.90\"}\n");
        assertTrue(firstRuleHolds(scenario,
                "{update: 'c', updates: [{q: {_id: {$oid: '65a1b2c3d4e5f60718293a4b'}}, u: {$set: {price: {$numberDecimal: '9.9'}}}}]}"));
        assertFalse(firstRuleHolds(scenario,
                "{update: 'c', updates: [{q: {_id: '65a1b2c3d4e5f60718293a4b'}, u: {$set: {price: {$numberDecimal: '9.9'}}}}]}"),
                "the string is not the ObjectId");
        assertRejected(UPDATE_RULE + "        updates.q._id: {$oid: not-an-id}\n", 10, "rules[0].data.commandMatches.updates.q._id",
                "not a valid Extended JSON $oid");
    }

    @Test
    void aScenarioWithoutRulesOrTimelineIsValid() {
        Scenario scenario = loader.parse("min.yaml", "name: minimal\n");
        assertEquals("minimal", scenario.name());
        assertEquals("", scenario.description());
        assertTrue(scenario.rules().isEmpty());
        assertTrue(scenario.timeline().isEmpty());
    }

    @Test
    void aRuleIdMayBeRemovedWhenItWasAddedInTheTimelineOrGivenAtTheStart() {
        Scenario scenario = loader.parse("rm.yaml", """
                name: rm
                rules:
                  - {id: first, configureFailPoint: failCommand, mode: alwaysOn, data: {failCommands: [ping], errorCode: 2}}
                timeline:
                  - {at: 1s, remove: first}
                  - {at: 3s, remove: second}
                  - {at: 2s, add: {id: second, configureFailPoint: failCommand, mode: alwaysOn, data: {failCommands: [ping], hang: true}}}
                """);
        assertEquals(List.of(Scenario.Kind.REMOVE, Scenario.Kind.ADD, Scenario.Kind.REMOVE),
                scenario.timeline().stream().map(Scenario.Step::kind).toList());
        assertInstanceOf(Hang.class, scenario.timeline().get(1).rule().action());
    }

    // ------------------------------------------------------------------ rejected whole, with source:line: field

    @Test
    void anUnknownTopLevelFieldIsNamedWithItsLine() {
        assertRejected("""
                name: x
                description: y
                rulez:
                  - id: a
                """, 3, "rulez", "unknown field");
        assertRejected("""
                name: x
                flavour: strawberry
                """, 2, "flavour", "unknown field");
    }

    @Test
    void aMissingNameIsReportedAtTheTopOfTheDocument() {
        assertRejected("""
                description: no name here
                rules: []
                """, 1, "name", "required");
        assertRejected("""
                # a comment first
                description: no name here
                """, 2, "name", "required");
        assertRejected("name: \"\"\n", 1, "name", "required");
        assertRejected("name: [a, b]\n", 1, "name", "required");
    }

    @Test
    void aBadRuleDataFieldIsNamedWithTheLineOfThatField() {
        assertRejected("""
                name: x
                rules:
                  - id: ok
                    configureFailPoint: failCommand
                    mode: alwaysOn
                    data: {failCommands: [find], errorCode: 2}
                  - id: broken
                    configureFailPoint: failCommand
                    mode: alwaysOn
                    data:
                      failCommands: [insert]
                      errorCode: "x"
                """, 12, "rules[1].data.errorCode", "must be an integer");
        assertRejected("""
                name: x
                rules:
                  - id: a
                    configureFailPoint: failCommand
                    mode: {times: -1}
                    data: {failCommands: [find], errorCode: 2}
                """, 5, "rules[0].mode.times", "non-negative");
        assertRejected(oneRuleOn("find") + "      hang: true\n      color: blue\n", 9, "rules[0].data.color", "unknown field");
        assertRejected("""
                name: x
                timeline:
                  - at: 1s
                    add:
                      id: late
                      configureFailPoint: failCommand
                      mode: alwaysOn
                      data:
                        failCommands: [find]
                        member: nowhere
                """, 10, "timeline[0].add.data.member", "must be");
    }

    @Test
    void aGeneratedRuleIdNeverTakesAnIdTheFileGives() {
        Scenario scenario = loader.parse("ids.yaml", """
                name: ids
                rules:
                  - {configureFailPoint: failCommand, mode: alwaysOn, data: {failCommands: [insert], resetConnection: true}}
                  - {id: scenario-rule-1, configureFailPoint: failCommand, mode: alwaysOn, data: {failCommands: [find], hang: true}}
                  - {id: rule-1, configureFailPoint: failCommand, mode: alwaysOn, data: {failCommands: [update], hang: true}}
                  - {configureFailPoint: failCommand, mode: alwaysOn, data: {failCommands: [delete], hang: true}}
                timeline:
                  - at: 1s
                    add: {configureFailPoint: failCommand, mode: alwaysOn, data: {failCommands: [count], hang: true}}
                  - at: 2s
                    add: {id: scenario-rule-3, configureFailPoint: failCommand, mode: alwaysOn, data: {failCommands: [aggregate], hang: true}}
                """);
        assertEquals(List.of("scenario-rule-2", "scenario-rule-1", "rule-1", "scenario-rule-4"),
                scenario.rules().stream().map(Rule::id).toList(), "rule-N is the Java API's; ids the file gives are skipped");
        assertEquals(List.of("scenario-rule-5", "scenario-rule-3"), scenario.timeline().stream().map(s -> s.rule().id()).toList());
    }

    @Test
    void aDuplicateRuleIdIsRejectedAtTheSecondUse() {
        assertRejected("""
                name: x
                rules:
                  - id: same
                    configureFailPoint: failCommand
                    mode: alwaysOn
                    data: {failCommands: [find], errorCode: 2}
                  - id: same
                    configureFailPoint: failCommand
                    mode: alwaysOn
                    data: {failCommands: [insert], errorCode: 2}
                """, 7, "rules[1].id", "used twice");
        assertRejected("""
                name: x
                rules:
                  - {id: same, configureFailPoint: failCommand, mode: alwaysOn, data: {failCommands: [find], errorCode: 2}}
                timeline:
                  - at: 1s
                    add:
                      id: same
                      configureFailPoint: failCommand
                      mode: alwaysOn
                      data: {failCommands: [find], errorCode: 2}
                """, 7, "timeline[0].add.id", "rule id 'same' is in force already at 1000ms (added by rules[0]); remove it before,"
                + " or give this rule another id");
    }

    @Test
    void anUnknownStepIsNamedWithItsLine() {
        assertRejected("""
                name: x
                timeline:
                  - at: 1s
                    clear: true
                  - at: 2s
                    explode: true
                """, 6, "timeline[1].explode", "unknown step");
    }

    @Test
    void twoActionsInOneStepAreRejectedAtTheStep() {
        assertRejected("""
                name: x
                timeline:
                  - at: 1s
                    clear: true
                  - at: 2s
                    clear: true
                    end: true
                """, 5, "timeline[1]", "exactly one action");
        assertRejected("""
                name: x
                timeline:
                  - at: 2s
                """, 3, "timeline[0]", "exactly one action");
    }

    @ParameterizedTest(name = "{0}: {1}")
    @CsvSource(delimiter = '|', value = {
            "clear | false | must be true",
            "clear | no | must be true",
            "clear | 'null' | must be true",
            "clear | '\"true\"' | must be true",
            "clear | 1 | must be true",
            "end | false | must be true",
            "end | '{}' | must be true",
            "failover | false | 'must be {}, {election: DURATION}, {rollback: DURATION} or both'",
            "failover | true | 'must be {}, {election: DURATION}, {rollback: DURATION} or both'",
            "failover | '[]' | 'must be {}, {election: DURATION}, {rollback: DURATION} or both'"})
    void aStepThatTakesNoArgumentAcceptsOnlyItsDocumentedForm(String action, String value, String message) {
        assertRejected("name: x\ntimeline:\n  - at: 1s\n    " + action + ": " + value + "\n", 4, "timeline[0]." + action, message);
    }

    @Test
    void aFailoverMayGiveItsElectionsLengthAndRollbackAndNothingElse() {
        Scenario scenario = loader.parse("election.yaml", "name: x\ntimeline:\n  - at: 1s\n    failover: {election: 2s}\n"
                + "  - at: 9s\n    failover: {}\n  - at: 12s\n    failover: {rollback: 3s}\n"
                + "  - at: 20s\n    failover: {election: 1s, rollback: 60s}\n");
        assertEquals(List.of(new Failover(2_000, 0), Failover.AT_ONCE, new Failover(0, 3_000), new Failover(1_000, 60_000)),
                scenario.timeline().stream().map(Scenario.Step::failover).toList());
        assertEquals(List.of("fail over after an election of 2000 ms", "fail over",
                        "fail over rolling back the old primary's last 3000 ms",
                        "fail over after an election of 1000 ms, rolling back the old primary's last 60000 ms"),
                scenario.timeline().stream().map(Scenario.Step::describe).toList());
        assertRejected("name: x\ntimeline:\n  - at: 1s\n    failover: {member: primary}\n", 4, "timeline[0].failover.member",
                "unknown field (expected election, rollback)");
        assertRejected("name: x\ntimeline:\n  - at: 1s\n    failover: {election: soon}\n", 4, "timeline[0].failover.election", "soon");
        assertRejected("name: x\ntimeline:\n  - at: 1s\n    failover: {rollback: 61s}\n", 4, "timeline[0].failover.rollback",
                "must be at most 60s (how long blackpipe remembers a primary's writes), not 61000ms");
        assertRejected("name: x\ntimeline:\n  - at: 1s\n    failover: {rollback: -1s}\n", 4, "timeline[0].failover.rollback", "-1s");
    }

    @Test
    void aRepeatedStepRunsAgainEveryThatLongAndAnAddedRuleIsAFreshCopyEachTime() {
        Scenario scenario = loader.parse("repeat.yaml", """
                name: x
                timeline:
                  - at: 1s
                    outage: {member: primary, duration: 500ms}
                    repeat: {every: 10s, times: 3}
                  - at: 2s
                    add: {id: blip, configureFailPoint: failCommand, mode: {times: 1}, data: {failCommands: [insert], closeConnection: true}}
                    repeat: {every: 10s, times: 2}
                  - at: 40s
                    end: true
                """);
        assertEquals(List.of(1_000L, 2_000L, 11_000L, 12_000L, 21_000L, 40_000L),
                scenario.timeline().stream().map(Scenario.Step::atMillis).toList());
        assertEquals(List.of("outage of primary for 500 ms", "add rule blip", "outage of primary for 500 ms", "add rule blip",
                "outage of primary for 500 ms", "end"), scenario.timeline().stream().map(Scenario.Step::describe).toList());
        assertEquals(List.of(3, 6, 3, 6, 3, 9), scenario.timeline().stream().map(Scenario.Step::line).toList(), "each copy has its step's line");
        assertFalse(scenario.timeline().get(1).rule() == scenario.timeline().get(3).rule(), "each add brings a rule of its own, its times anew");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "5                           | timeline[0].repeat       | must be {every: DURATION, times: N}",
            "{every: 1s}                 | timeline[0].repeat.times | must be a whole number from 1 to 10000 (a scenario has at most 10000 steps, repeats included), not missing",
            "{every: 1s, times: 0}       | timeline[0].repeat.times | must be a whole number from 1 to 10000",
            "{every: 1s, times: 1.5}     | timeline[0].repeat.times | not 1.5",
            "{every: 1s, times: 10001}   | timeline[0].repeat.times | must be a whole number from 1 to 10000",
            "{every: 1s, times: '3'}     | timeline[0].repeat.times | not \"3\"",
            "{times: 3}                  | timeline[0].repeat.every | required",
            "{every: 0s, times: 3}       | timeline[0].repeat.every | must be at least 1ms",
            "{every: soon, times: 3}     | timeline[0].repeat.every | soon",
            "{every: 1s, times: 3, x: 1} | timeline[0].repeat.x     | unknown field (expected every, times)",
            "{every: 9223372036854775807, times: 3} | timeline[0].repeat.every | puts the last repeat beyond any time"})
    void aBadRepeatIsRejectedAtItsField(String repeat, String field, String message) {
        assertRejected("name: x\ntimeline:\n  - at: 1s\n    clear: true\n    repeat: " + repeat + "\n", 5, field, message);
    }

    @Test
    void anEndIsNotRepeated() {
        assertRejected("name: x\ntimeline:\n  - at: 1s\n    end: true\n    repeat: {every: 1s, times: 2}\n", 5, "timeline[0].repeat",
                "an end happens once");
    }

    @Test
    void aStepWithoutAtIsRejectedAtTheStep() {
        assertRejected("""
                name: x
                timeline:
                  - at: 1s
                    clear: true
                  - clear: true
                """, 5, "timeline[1].at", "required");
    }

    @Test
    void aBadDurationIsNamedWithItsLine() {
        assertRejected("""
                name: x
                timeline:
                  - at: soon
                    clear: true
                """, 3, "timeline[0].at", "not a duration");
        assertRejected("""
                name: x
                timeline:
                  - at: -5s
                    clear: true
                """, 3, "timeline[0].at", "negative");
        assertRejected("""
                name: x
                timeline:
                  - at: 1s
                    clear: true
                  - at: 2s
                    outage:
                      member: primary
                      duration: forever
                """, 8, "timeline[1].outage.duration", "not a duration");
        assertRejected("""
                name: x
                timeline:
                  - at: 2s
                    restore: {member: all, duration: 5s}
                """, 4, "timeline[0].restore.duration", "unknown field");
    }

    /**
     * The timeline is checked in the order it runs. Before, a remove written before its add was valid, did nothing,
     * and the rule then stayed on; a rule removed could not be added again; and steps after an end were valid but
     * never ran.
     */
    @Test
    void aRemoveFindsItsRuleInForceAndAnAddItsIdFree() {
        String rule = "{id: r, configureFailPoint: failCommand, mode: alwaysOn, data: {failCommands: [find], errorCode: 91}}";
        assertRejected("name: x\ntimeline:\n  - at: 1s\n    remove: r\n  - at: 2s\n    add: " + rule + "\n", 4, "timeline[0].remove",
                "rule 'r' is not in force at 1000ms (not added yet, or removed or cleared before): the remove would do nothing");
        assertRejected("name: x\nrules: [" + rule + "]\ntimeline:\n  - at: 1s\n    remove: r\n  - at: 2s\n    remove: r\n", 7,
                "timeline[1].remove", "rule 'r' is not in force at 2000ms");
        assertRejected("name: x\nrules: [" + rule + "]\ntimeline:\n  - at: 1s\n    clear: true\n  - at: 2s\n    remove: r\n", 7,
                "timeline[1].remove", "rule 'r' is not in force at 2000ms");

        Scenario again = loader.parse("again.yaml", "name: x\nrules: [" + rule + "]\ntimeline:\n  - at: 5s\n    remove: r\n"
                + "  - at: 10s\n    add: " + rule + "\n  - at: 15s\n    remove: r\n");
        assertEquals(List.of(Scenario.Kind.REMOVE, Scenario.Kind.ADD, Scenario.Kind.REMOVE), again.timeline().stream().map(Scenario.Step::kind).toList(),
                "a rule removed may come again, and go again");
        Scenario sameTime = loader.parse("same-time.yaml", "name: x\ntimeline:\n  - at: 1s\n    add: " + rule
                + "\n  - at: 1s\n    remove: r\n");
        assertEquals(2, sameTime.timeline().size(), "steps at one time run in file order: the add, then the remove");
        Scenario repeated = loader.parse("repeated.yaml", "name: x\ntimeline:\n  - at: 0s\n    add: " + rule
                + "\n    repeat: {every: 10s, times: 3}\n  - at: 5s\n    remove: r\n    repeat: {every: 10s, times: 3}\n");
        assertEquals(6, repeated.timeline().size(), "each remove finds the add before it");
    }

    @Test
    void aStepAfterTheEndIsRejected() {
        assertRejected("""
                name: x
                timeline:
                  - at: 500ms
                    end: true
                  - at: 2s
                    outage: {member: primary, duration: 1s}
                """, 5, "timeline[1]", "at 2000ms it comes after the end step (timeline[0], at 500ms) and would never run");
        assertRejected("""
                name: x
                timeline:
                  - at: 0s
                    outage: {member: primary, duration: 1s}
                    repeat: {every: 1s, times: 5}
                  - at: 3s
                    end: true
                """, 3, "timeline[0]", "at 4000ms it comes after the end step (timeline[1], at 3000ms)");
    }

    /** Before, Java's own "Input length = 1", without the line or what was wrong. */
    @Test
    void aFileThatIsNotUtf8IsRefusedAtTheLineOfItsFirstStrayByte(@org.junit.jupiter.api.io.TempDir Path dir) throws IOException {
        Path latin1 = dir.resolve("latin1.yaml");
        Files.write(latin1, "name: x\ndescription: caf\u00e9\n".getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
        assertEquals(latin1 + ":2: (file): is not UTF-8 text (the byte 0xE9 on this line); save it as UTF-8",
                assertThrows(ScenarioException.class, () -> loader.load(latin1)).getMessage());
        Path utf16 = dir.resolve("utf16.yaml");
        Files.write(utf16, "name: x\n".getBytes(java.nio.charset.StandardCharsets.UTF_16)); // its byte order mark first
        assertEquals(utf16 + ":1: (file): is not UTF-8 text (the byte 0xFE on this line); save it as UTF-8",
                assertThrows(ScenarioException.class, () -> loader.load(utf16)).getMessage());
        Path utf8 = dir.resolve("utf8.yaml");
        Files.writeString(utf8, "name: x\ndescription: caf\u00e9\n");
        assertEquals("caf\u00e9", loader.load(utf8).description());
    }

    @Test
    void aDescriptionThatIsNotTextIsRejected() {
        assertRejected("name: x\ndescription: [not, text]\n", 2, "description", "must be text, not [\"not\", \"text\"]");
        assertRejected("name: x\ndescription: 42\n", 2, "description", "must be text, not 42");
    }

    @Test
    void theSizeLimitCountsBytesAsTheAdminApiDoes() {
        String wide = "name: x\ndescription: " + "\u00e9".repeat(600_000) + "\n"; // 1.2 MB in UTF-8, 600,000 characters
        assertRejected(wide, 1, "(file)", "is larger than 1048576 bytes");
    }

    @Test
    void removingAnIdNoRuleHasIsRejectedAtTheRemove() {
        assertRejected("""
                name: x
                rules:
                  - {id: real, configureFailPoint: failCommand, mode: alwaysOn, data: {failCommands: [find], errorCode: 2}}
                timeline:
                  - at: 1s
                    remove: real
                  - at: 2s
                    remove: imaginary
                """, 8, "timeline[1].remove", "no rule with id 'imaginary'");
        assertRejected("""
                name: x
                timeline:
                  - at: 2s
                    remove: {id: a}
                """, 4, "timeline[0].remove", "must be the id of a rule");
    }

    @Test
    void aMemberTheDeploymentDoesNotKnowIsRejected() {
        assertRejected("""
                name: x
                timeline:
                  - at: 1s
                    outage:
                      member: "db9:27017"
                      duration: 5s
                """, 5, "timeline[0].outage.member", "no member 'db9:27017'");
        assertRejected("""
                name: x
                timeline:
                  - at: 1s
                    blackhole: arbiter
                """, 4, "timeline[0].blackhole.member", "no member 'arbiter'");
        assertRejected("""
                name: x
                timeline:
                  - at: 1s
                    restore: {}
                """, 4, "timeline[0].restore.member", "required");
        // the same file is fine where the member exists
        Scenario known = new ScenarioLoader(new RuleParser(1), MEMBERS.or("db9:27017"::equals))
                .parse("ok.yaml", "name: x\ntimeline:\n  - at: 1s\n    outage: {member: \"db9:27017\", duration: 5s}\n");
        assertEquals("db9:27017", known.timeline().get(0).target());
    }

    @Test
    void offlineAMemberIsARoleAllOrAHostPortAndAnythingElseNamesNone() {
        ScenarioLoader offline = ScenarioLoader.offline(new RuleParser(1));
        for (String member : new String[] {"primary", "secondary", "all", "db9:27017", "[::1]:27018"}) {
            assertEquals(member, offline.parse("ok.yaml", "name: x\ntimeline:\n  - at: 1s\n    restore: \"" + member + "\"\n")
                    .timeline().get(0).target());
        }
        Map<String, String> likely = Map.of("primry", ": did you mean 'primary'?", "db9", "", "db9:0", "", "All", ": did you mean 'all'?",
                "PRIMARY", ": did you mean 'primary'?");
        likely.forEach((member, guess) -> {
            ScenarioException e = assertThrows(ScenarioException.class, () -> offline.parse("bad.yaml",
                    "name: x\ntimeline:\n  - at: 1s\n    outage: {member: \"" + member + "\", duration: 5s}\n"), member);
            assertEquals("bad.yaml:4: timeline[0].outage.member: no member '" + member + "'" + guess
                    + " (use primary, secondary, all, or a member's host:port)", e.getMessage());
        });
    }

    @Test
    void aMemberStepTakesOnlyItsOwnFields() {
        assertRejected("""
                name: x
                timeline:
                  - at: 1s
                    outage: {member: primary, for: 5s}
                """, 4, "timeline[0].outage.for", "unknown field (expected member, duration)");
        assertRejected("""
                name: x
                timeline:
                  - at: 1s
                    restore: {member: primary, duration: 5s}
                """, 4, "timeline[0].restore.duration", "unknown field (expected member)");
    }

    @Test
    void aLatencyStepNeedsItsDelayAndTakesAJitterAndADuration() {
        Scenario.Step plain = loader.parse("l.yaml", "name: l\ntimeline:\n  - at: 1s\n    latency: {member: primary, delay: 1s}\n")
                .timeline().get(0);
        assertEquals(new Latency(1_000, 0), plain.latency());
        assertEquals(0, plain.durationMillis(), "without a duration, until restored");
        assertEquals("latency of 1000 ms towards the clients on primary", plain.describe());
        assertEquals(new Latency(0, 30), loader.parse("l.yaml", "name: l\ntimeline:\n  - at: 1s\n    latency: {member: primary, delay: 0,"
                + " jitter: 30ms}\n").timeline().get(0).latency(), "a jitter alone: each message 0 to 60 ms late");
        Scenario.Step both = loader.parse("l.yaml", "name: l\ntimeline:\n  - at: 1s\n    latency: {member: primary, delay: 1s,"
                + " direction: both}\n").timeline().get(0);
        assertEquals(new Latency(1_000, 0, Direction.BOTH), both.latency());
        assertEquals("latency of 1000 ms each way on primary", both.describe());
        String step = "name: x\ntimeline:\n  - at: 1s\n    latency: ";
        assertRejected(step + "primary\n", 4, "timeline[0].latency", "must be {member: ..., delay: DURATION} (jitter, direction and duration optional)");
        assertRejected(step + "{member: primary, delay: 1s, direction: upstream}\n", 4, "timeline[0].latency.direction",
                "must be both, replies or requests");
        assertRejected(step + "{member: primary}\n", 4, "timeline[0].latency.delay", "required (e.g. 200ms)");
        assertRejected(step + "{member: primary, dealy: 1s}\n", 4, "timeline[0].latency.dealy",
                "unknown field (expected member, delay, jitter, direction, duration)");
        assertRejected(step + "{member: primary, delay: 0}\n", 4, "timeline[0].latency.delay",
                "a latency of 0 without a jitter slows nothing (to end one, restore the member)");
        assertRejected(step + "{member: primary, delay: -5ms}\n", 4, "timeline[0].latency.delay", "'-5ms' must not be negative");
        assertRejected(step + "{member: primary, delay: 2d}\n", 4, "timeline[0].latency.delay", "'2d' is not a duration such as 500ms, 5s or 2m");
        assertRejected(step + "{member: primary, delay: 25h}\n", 4, "timeline[0].latency.delay",
                "must be from 0 to 24h, got 90000000ms");
        assertRejected(step + "{member: primary, delay: 1500m}\n", 4, "timeline[0].latency.delay", "must be from 0 to 24h, got 90000000ms");
        assertRejected(step + "{member: primary, delay: 1s, jitter: 1500m}\n", 4, "timeline[0].latency.jitter",
                "must be from 0 to 24h, got 90000000ms");
        assertRejected(step + "{member: primary, delay: 1s, duration: 0}\n", 4, "timeline[0].latency.duration",
                "must be at least 1ms (leave it out for until restored)");
        assertRejected(step + "{member: primary, delay: 1s, for: 5s}\n", 4, "timeline[0].latency.for",
                "unknown field (expected member, delay, jitter, direction, duration)");
        assertRejected(step + "{member: primry, delay: 1s}\n", 4, "timeline[0].latency.member",
                "no member 'primry': did you mean 'primary'? (use primary, secondary, all, or a member's host:port)");
    }

    @Test
    void anIdleTimeoutStepNeedsItsAfterAndTakesThenAndADuration() {
        Scenario.Step plain = loader.parse("i.yaml", "name: i\ntimeline:\n  - at: 1s\n    idleTimeout: {member: all, after: 30s}\n")
                .timeline().get(0);
        assertEquals(new IdleTimeout(30_000, IdleTimeout.Then.DROP), plain.idleTimeout(), "drop unless then says otherwise");
        assertEquals(0, plain.durationMillis(), "without a duration, until restored");
        assertEquals("idle timeout (idle 30000 ms, then drop) on all", plain.describe());
        String step = "name: x\ntimeline:\n  - at: 1s\n    idleTimeout: ";
        assertRejected(step + "primary\n", 4, "timeline[0].idleTimeout", "must be {member: ..., after: DURATION} (then and duration optional)");
        assertRejected(step + "{member: primary}\n", 4, "timeline[0].idleTimeout.after", "required (e.g. 5s)");
        assertRejected(step + "{member: primary, after: 0}\n", 4, "timeline[0].idleTimeout.after", "must be at least 1ms");
        assertRejected(step + "{member: primary, after: 1500m}\n", 4, "timeline[0].idleTimeout.after", "must be from 1ms to 24h, got 90000000ms");
        assertRejected(step + "{member: primary, after: soon}\n", 4, "timeline[0].idleTimeout.after", "'soon' is not a duration such as 500ms, 5s or 2m");
        assertRejected(step + "{member: primary, after: 30s, then: close}\n", 4, "timeline[0].idleTimeout.then", "must be drop or reset");
        assertRejected(step + "{member: primary, after: 30s, then: 1}\n", 4, "timeline[0].idleTimeout.then", "must be drop or reset");
        assertRejected(step + "{member: primary, after: 30s, rate: 1}\n", 4, "timeline[0].idleTimeout.rate",
                "unknown field (expected member, after, then, duration)");
        assertRejected(step + "{member: primry, after: 30s}\n", 4, "timeline[0].idleTimeout.member",
                "no member 'primry': did you mean 'primary'? (use primary, secondary, all, or a member's host:port)");
    }

    @Test
    void aRestartStepTakesAMemberAndOptionallyItsQuiesceAndTimeDown() {
        Scenario.Step plain = loader.parse("r.yaml", "name: r\ntimeline:\n  - at: 1s\n    restart: secondary\n").timeline().get(0);
        assertEquals(new Restart(Restart.DEFAULT_QUIESCE_MILLIS, Restart.DEFAULT_DOWN_MILLIS), plain.restart(), "mongod's 15 s, and 10 s");
        assertEquals("restart secondary (quiesce 15000 ms, down 10000 ms)", plain.describe());
        Scenario.Step none = loader.parse("r.yaml", "name: r\ntimeline:\n  - at: 1s\n    restart: {member: primary, quiesce: 0}\n")
                .timeline().get(0);
        assertEquals(new Restart(0, Restart.DEFAULT_DOWN_MILLIS), none.restart(), "no quiesce, as before MongoDB 5.0");
        String step = "name: x\ntimeline:\n  - at: 1s\n    restart: ";
        assertRejected(step + "{member: primary, down: 0}\n", 4, "timeline[0].restart.down", "must be from 1ms to 24h, got 0ms");
        assertRejected(step + "{member: primary, quiesce: 1500m}\n", 4, "timeline[0].restart.quiesce", "must be from 0 to 24h, got 90000000ms");
        assertRejected(step + "{member: primary, quiesce: soon}\n", 4, "timeline[0].restart.quiesce",
                "'soon' is not a duration such as 500ms, 5s or 2m");
        assertRejected(step + "{member: primary, duration: 5s}\n", 4, "timeline[0].restart.duration",
                "unknown field (expected member, quiesce, down)");
        assertRejected(step + "{member: primry}\n", 4, "timeline[0].restart.member",
                "no member 'primry': did you mean 'primary'? (use primary, secondary, all, or a member's host:port)");
        assertRejected(step + "[primary]\n", 4, "timeline[0].restart", "must be a member name or {member: ..., quiesce: ..., down: ...}");
    }

    @Test
    void aRollingRestartStepTakesItsQuiesceDownAndWaitBetweenMembersEachWithADefault() {
        Scenario.Step plain = loader.parse("r.yaml", "name: r\ntimeline:\n  - at: 1s\n    rollingRestart: {}\n").timeline().get(0);
        assertEquals(new Restart(Restart.DEFAULT_QUIESCE_MILLIS, Restart.DEFAULT_DOWN_MILLIS), plain.restart());
        assertEquals(10_000, plain.durationMillis(), "10 s between one member's return and the next one's restart");
        String step = "name: x\ntimeline:\n  - at: 1s\n    rollingRestart: ";
        assertRejected(step + "all\n", 4, "timeline[0].rollingRestart",
                "must be {quiesce: ..., down: ..., between: ...} (each optional: {} takes the defaults)");
        assertRejected(step + "{member: primary}\n", 4, "timeline[0].rollingRestart.member", "unknown field (expected quiesce, down, between)");
        assertRejected(step + "{down: 0}\n", 4, "timeline[0].rollingRestart.down", "must be from 1ms to 24h, got 0ms");
        assertRejected(step + "{between: soon}\n", 4, "timeline[0].rollingRestart.between", "'soon' is not a duration such as 500ms, 5s or 2m");
        // past a day, each member's turn (its place times quiesce + down + between) could overflow and come at once
        assertRejected(step + "{between: 25h}\n", 4, "timeline[0].rollingRestart.between", "must be from 0 to 24h, got 90000000ms");
        assertRejected(step + "{between: 1441m}\n", 4, "timeline[0].rollingRestart.between", "must be from 0 to 24h, got 86460000ms");
        assertRejected(step + "{between: 9223372036854775807}\n", 4, "timeline[0].rollingRestart.between", "must be from 0 to 24h");
    }

    /** The cap on steps counts plain steps too, not only repeats. */
    @Test
    void aTimelineOfMoreThanTenThousandStepsIsRejectedAtTheFirstOneTooMany() {
        StringBuilder plain = new StringBuilder("name: x\ntimeline:\n");
        for (int i = 0; i <= ScenarioLoader.MAX_STEPS; i++) {
            plain.append("  - {at: ").append(i).append(", clear: true}\n");
        }
        assertRejected(plain.toString(), 10_003, "timeline[10000]", "one step too many: a scenario has at most 10000 steps");
        assertRejected("name: x\ntimeline:\n  - at: 1s\n    clear: true\n    repeat: {every: 1s, times: 10000}\n  - at: 1s\n    clear: true\n",
                6, "timeline[1]", "one step too many");
    }

    @Test
    void aResetConnectionsStepTakesAMemberAndNothingElse() {
        Scenario.Step reset = loader.parse("r.yaml", "name: r\ntimeline:\n  - at: 1s\n    resetConnections: all\n"
                + "    repeat: {every: 10s, times: 3}\n").timeline().get(2);
        assertEquals(Scenario.Kind.RESET_CONNECTIONS, reset.kind());
        assertEquals("all", reset.target());
        assertEquals(21_000, reset.atMillis(), "repeated, as a load balancer that drops its flows now and then");
        String step = "name: x\ntimeline:\n  - at: 1s\n    resetConnections: ";
        assertRejected(step + "5\n", 4, "timeline[0].resetConnections", "must be a member name or {member: ...}");
        assertRejected(step + "{member: primary, duration: 5s}\n", 4, "timeline[0].resetConnections.duration",
                "unknown field (expected member)");
        assertRejected(step + "primry\n", 4, "timeline[0].resetConnections.member",
                "no member 'primry': did you mean 'primary'? (use primary, secondary, all, or a member's host:port)");
    }

    @Test
    void aBandwidthStepNeedsItsRateInBytesASecondAndTakesADuration() {
        Scenario.Step plain = loader.parse("b.yaml", "name: b\ntimeline:\n  - at: 1s\n    bandwidth: {member: primary, rate: 1MB/s}\n")
                .timeline().get(0);
        assertEquals(new Bandwidth(1_000_000), plain.bandwidth());
        assertEquals(0, plain.durationMillis(), "without a duration, until restored");
        assertEquals("bandwidth of 1 MB/s each way on primary", plain.describe());
        assertEquals(new Bandwidth(500), loader.parse("b.yaml", "name: b\ntimeline:\n  - at: 1s\n    bandwidth: {member: all, rate: 500,"
                + " duration: 5s}\n").timeline().get(0).bandwidth(), "a number is bytes a second");
        Scenario.Step replies = loader.parse("b.yaml", "name: b\ntimeline:\n  - at: 1s\n    bandwidth: {member: primary, rate: 1MB/s,"
                + " direction: replies}\n").timeline().get(0);
        assertEquals(new Bandwidth(1_000_000, Direction.REPLIES), replies.bandwidth());
        assertEquals("bandwidth of 1 MB/s towards the clients on primary", replies.describe());
        assertEquals(new Bandwidth(1_000, Direction.REQUESTS), loader.parse("b.yaml", "name: b\ntimeline:\n  - at: 1s\n"
                + "    bandwidth: {member: primary, rate: 1KB/s, direction: Requests}\n").timeline().get(0).bandwidth(), "case aside");
        String step = "name: x\ntimeline:\n  - at: 1s\n    bandwidth: ";
        assertRejected(step + "primary\n", 4, "timeline[0].bandwidth", "must be {member: ..., rate: RATE} (direction and duration optional)");
        assertRejected(step + "{member: primary, rate: 1MB/s, direction: downstream}\n", 4, "timeline[0].bandwidth.direction",
                "must be both, replies or requests");
        assertRejected(step + "{member: primary, rate: 1MB/s, direction: [replies]}\n", 4, "timeline[0].bandwidth.direction",
                "must be both, replies or requests");
        assertRejected(step + "{member: primary}\n", 4, "timeline[0].bandwidth.rate", "required (e.g. 64KiB/s)");
        assertRejected(step + "{member: primary, rate: fast}\n", 4, "timeline[0].bandwidth.rate",
                "'fast' is not a rate such as 64KiB/s, 1MB/s or 500B/s (B, KB = 1000 B, KiB = 1024 B, MB, MiB, GB, GiB)");
        assertRejected(step + "{member: primary, rate: 0}\n", 4, "timeline[0].bandwidth.rate", "'0' is not from 1B/s to 1GiB/s");
        assertRejected(step + "{member: primary, rate: 2GiB/s}\n", 4, "timeline[0].bandwidth.rate", "'2GiB/s' is not from 1B/s to 1GiB/s");
        assertRejected(step + "{member: primary, rate: 1.5}\n", 4, "timeline[0].bandwidth.rate",
                "'1.5' is not a whole number of bytes a second");
        assertRejected(step + "{member: primary, rate: [1]}\n", 4, "timeline[0].bandwidth.rate",
                "must be a rate such as 64KiB/s, or a number of bytes a second");
        assertRejected(step + "{member: primary, rate: 1MB/s, duration: 0}\n", 4, "timeline[0].bandwidth.duration",
                "must be at least 1ms (leave it out for until restored)");
        assertRejected(step + "{member: primary, rate: 1MB/s, delay: 5s}\n", 4, "timeline[0].bandwidth.delay",
                "unknown field (expected member, rate, direction, duration)");
        assertRejected(step + "{member: primry, rate: 1MB/s}\n", 4, "timeline[0].bandwidth.member",
                "no member 'primry': did you mean 'primary'? (use primary, secondary, all, or a member's host:port)");
    }

    @Test
    void aKeyThatIsAListOrAMappingIsRejectedWithItsLine() {
        assertRejected("""
                name: x
                description: fine
                ? [a, b]
                : 1
                """, 3, "(file)", "keys must be plain names");
        assertRejected("""
                name: x
                rules:
                  - id: a
                    ? {k: v}
                    : 1
                """, 4, "rules[0]", "keys must be plain names");
    }

    @Test
    void aNumberAsYamlWritesItButJavaCannotReadIsKeptAsTheTextWritten() {
        // YAML 1.1 reads 1:30 as a base-60 integer and 0b101 as binary; kept as written, a field that takes text takes them
        Scenario scenario = loader.parse("odd.yaml", "name: 0b101\ndescription: 1:30\n");
        assertEquals("0b101", scenario.name());
        assertEquals("1:30", scenario.description());
    }

    @Test
    void aYamlSyntaxErrorIsReportedAtTheLineOfTheProblem() {
        ScenarioException e = rejected("""
                name: x
                description: fine
                rules:
                  - id: a
                    mode: alwaysOn: twice
                """);
        assertTrue(e.getMessage().startsWith("bad.yaml:5: (syntax): "), e::getMessage);
        ScenarioException unclosed = rejected("""
                name: x
                rules:
                  - id: a
                    data: {failCommands: [find]
                timeline: []
                """);
        assertTrue(unclosed.getMessage().startsWith("bad.yaml:5: (syntax): "), unclosed::getMessage);
        ScenarioException json = rejected("""
                {
                  "name": "x",
                  "rules": [}
                }
                """);
        assertTrue(json.getMessage().startsWith("bad.yaml:3: (syntax): "), json::getMessage);
    }

    /**
     * A quote or bracket never closed is reported at its line, saying what was left open; two documents say that one
     * is expected. Before: the line after the last, "found unexpected end of stream", and "but found another document".
     */
    @Test
    void aSyntaxErrorAtTheEndIsReportedWhereItBegan() {
        assertRejected("name: \"unterminated\ntimeline: []\n", 1, "(syntax)",
                "found unexpected end of stream (while scanning a quoted scalar on line 1)");
        assertRejected("name: x\ntimeline: [\n  {at: 1s, end: true}\n", 2, "(syntax)", "(while parsing a flow sequence on line 2)");
        assertRejected("name: x\n---\nname: y\n", 2, "(syntax)", "expected a single document in the stream, but found another document");
    }

    @Test
    void anEmptyFileIsRejected() {
        for (String empty : List.of("", "\n\n", "# only a comment\n")) {
            ScenarioException e = rejected(empty);
            assertEquals("bad.yaml:1: (file): is empty", e.getMessage());
        }
        assertRejected("- just\n- a list\n", 1, "(file)", "must be a mapping");
        assertRejected("just text\n", 1, "(file)", "must be a mapping");
    }

    @Test
    void aKeyGivenTwiceIsRejectedAtItsSecondUse() {
        assertRejected("""
                name: dup
                rules:
                  - {id: a, configureFailPoint: failCommand, mode: alwaysOn, data: {failCommands: [insert], resetConnection: true}}
                rules:
                  - {id: b, configureFailPoint: failCommand, mode: alwaysOn, data: {failCommands: [find], hang: true}}
                """, 4, "rules", "given twice (first on line 2)");
        assertRejected("""
                name: dup
                rules:
                  - id: a
                    configureFailPoint: failCommand
                    mode: alwaysOn
                    data:
                      failCommands: [insert]
                      errorCode: 91
                      errorCode: 11600
                """, 9, "rules[0].data.errorCode", "given twice (first on line 8)");
        assertRejected("{\"name\": \"a\",\n \"name\": \"b\"}\n", 2, "name", "given twice (first on line 1)");
    }

    @Test
    void aliasesWork() {
        Scenario scenario = loader.parse("alias.yaml", """
                name: alias
                rules:
                  - {id: a, configureFailPoint: failCommand, mode: alwaysOn, data: &reset {failCommands: [insert], resetConnection: true}}
                timeline:
                  - at: 1s
                    add: {id: b, configureFailPoint: failCommand, mode: alwaysOn, data: *reset}
                """);
        assertEquals(scenario.rules().get(0).source().get("data"), scenario.timeline().get(0).rule().source().get("data"));
    }

    /**
     * Only true and false are booleans, as in YAML 1.2 and JSON: YAML 1.1's on, no, yes and off are text. "name: on" was
     * refused as "required, a string" and "id: no" as a boolean, though each was given.
     */
    @Test
    void yamlOneOneBooleanWordsAreText() {
        Scenario scenario = loader.parse("words.yaml", """
                name: on
                rules:
                  - {id: no, configureFailPoint: failCommand, mode: alwaysOn, data: {failCommands: [insert], resetConnection: true}}
                """);
        assertEquals("on", scenario.name());
        assertEquals("no", scenario.rules().get(0).id());
        assertRejected("name: x\ntimeline:\n  - at: 1s\n    end: yes\n", 4, "timeline[0].end", "true");
    }

    /** A merge key (YAML 1.1's), the usual way to reuse a rule under another id, was "unknown field" of the rule. */
    @Test
    void aMergeKeyIsRefusedSayingWhatToWriteInstead() {
        assertRejected("""
                name: merge
                rules:
                  - &r {id: a, configureFailPoint: failCommand, mode: alwaysOn, data: {failCommands: [insert], resetConnection: true}}
                timeline:
                  - at: 1s
                    add: {<<: *r, id: b}
                """, 6, "timeline[0].add.<<", "a YAML merge key is not taken: write the fields out");
        // quoted, it is a key as any other: an unknown field of a rule
        assertRejected("name: q\nrules:\n  - {id: a, configureFailPoint: failCommand, mode: alwaysOn, \"<<\": 1,"
                + " data: {failCommands: [insert], resetConnection: true}}\n", 3, "rules[0].<<", "unknown field");
    }

    @Test
    void yamlThatWouldExhaustTheLoaderIsAScenarioError() throws IOException {
        // an alias inside what it names: a list that contains itself
        assertRejected("name: x\nrules: &a [*a]\n", 2, "rules[0]", "an alias that contains itself");
        assertRejected("name: x\ndescription: &m {again: *m}\n", 2, "description.again", "an alias that contains itself");
        // more aliases of lists than snakeyaml's limit, at the line of the first one too many
        StringBuilder aliases = new StringBuilder("name: x\na0: &a0 [x, x]\n");
        for (int i = 1; i < 60; i++) {
            aliases.append("a").append(i).append(": &a").append(i).append(" [*a").append(i - 1).append(", *a").append(i - 1).append("]\n");
        }
        assertRejected(aliases.toString(), 28, "(syntax)", "aliases");
        // "billion laughs" within the alias limit: 2^25 values from 25 lines
        StringBuilder laughs = new StringBuilder("name: x\nl0: &l0 [lol, lol]\n");
        for (int i = 1; i < 25; i++) {
            laughs.append("l").append(i).append(": &l").append(i).append(" [*l").append(i - 1).append(", *l").append(i - 1).append("]\n");
        }
        assertRejected(laughs.toString(), 16, "l14", "expands to more than 100000 values");
        // nesting: written out, and made of aliases
        assertRejected("name: x\nrules: " + "[".repeat(40) + "]".repeat(40) + "\n", 2, "(syntax)", "Nesting Depth exceeded max 32");
        StringBuilder deep = new StringBuilder("name: x\nd0: &d0 " + "[".repeat(20) + "]".repeat(20) + "\n");
        deep.append("d1: &d1 ").append("[".repeat(20)).append("*d0").append("]".repeat(20)).append("\n");
        assertRejected(deep.toString(), 3, "d1", "nested deeper than 32");
        StringBuilder deepMappings = new StringBuilder("name: x\nd0: &d0 " + "{a: ".repeat(20) + "1" + "}".repeat(20) + "\n");
        deepMappings.append("d1: &d1 ").append("{b: ".repeat(20)).append("*d0").append("}".repeat(20)).append("\n");
        assertRejected(deepMappings.toString(), 3, "d1", "nested deeper than 32"); // mappings count as lists do
        // the caps themselves are allowed: such a file is read whole and refused only for its unknown field
        IntFunction<String> listsAroundD0 = n -> "name: x\nd0: &d0 " + "[".repeat(20) + "]".repeat(20) + "\nd1: " + "[".repeat(n) + "*d0"
                + "]".repeat(n) + "\n";
        assertRejected(listsAroundD0.apply(12), 2, "d0", "unknown field"); // the file's mapping and 32 lists in it
        assertRejected(listsAroundD0.apply(13), 3, "d1", "nested deeper than 32");
        // as deep written out: snakeyaml takes it, and so does the conversion (it refused it, "through aliases")
        assertRejected("name: x\nd: " + "[".repeat(32) + "]".repeat(32) + "\n", 2, "d", "unknown field");
        assertRejected("name: x\nd: " + "[".repeat(33) + "]".repeat(33) + "\n", 2, "(syntax)", "Nesting Depth exceeded max 32");
        String atTheValueCap = "name: x\nd: [" + "1, ".repeat(99_996) + "1]\n"; // the file, x, the list and its 99997: 100000
        assertRejected(atTheValueCap, 2, "d", "unknown field");
        assertRejected(atTheValueCap.replace("[", "[1, "), 2, "d", "expands to more than 100000 values");
        // size
        assertRejected("name: x\ndescription: " + "y".repeat(ScenarioLoader.MAX_SIZE) + "\n", 1, "(file)", "is larger than 1048576 bytes");
        String largest = "name: x\ndescription: " + "y".repeat(ScenarioLoader.MAX_SIZE - "name: x\ndescription: \n".length()) + "\n";
        assertEquals(ScenarioLoader.MAX_SIZE, largest.length());
        assertEquals("x", loader.parse("big.yaml", largest).name(), "the limit itself is allowed");
        Path file = Files.createTempFile("largest", ".yaml");
        try {
            Files.writeString(file, largest);
            assertEquals("x", loader.load(file).name(), "in a file of that many bytes too");
            Files.writeString(file, largest + "\n");
            ScenarioException e = assertThrows(ScenarioException.class, () -> loader.load(file));
            assertEquals(file + ":1: (file): is larger than 1048576 bytes", e.getMessage());
        } finally {
            Files.delete(file);
        }
    }

    @Test
    void aFileLargerThanAScenarioIsNotRead(@org.junit.jupiter.api.io.TempDir Path temp) throws IOException {
        Path file = temp.resolve("huge.yaml");
        Files.writeString(file, "name: x\ndescription: " + "y".repeat(ScenarioLoader.MAX_SIZE) + "\n");
        ScenarioException e = assertThrows(ScenarioException.class, () -> loader.load(file));
        assertEquals(file + ":1: (file): is larger than 1048576 bytes", e.getMessage());
    }

    @Test
    void aFileIsNamedByItsPath(@org.junit.jupiter.api.io.TempDir Path temp) throws IOException {
        Path file = temp.resolve("broken.yaml");
        Files.writeString(file, "name: x\n\nbogus: 1\n");
        ScenarioException e = assertThrows(ScenarioException.class, () -> loader.load(file));
        assertTrue(e.getMessage().startsWith(file + ":3: bogus: unknown field"), e::getMessage);
    }

    // ------------------------------------------------------------------ the shipped scripts

    @Test
    void everyShippedScriptLoads() throws IOException {
        Map<String, Scenario> loaded = new TreeMap<>();
        try (Stream<Path> files = Files.list(scriptsDir())) {
            for (Path file : files.filter(f -> f.toString().endsWith(".yaml") || f.toString().endsWith(".json")).toList()) {
                Scenario scenario = loader.load(file);
                String base = file.getFileName().toString().replaceAll("\\.(yaml|json)$", "");
                assertEquals(base, scenario.name(), "a script's name is its file name");
                assertFalse(scenario.description().isBlank(), file + " has a description");
                String text = Files.readString(file);
                assertTrue(text.startsWith("#"), file + " starts with comments saying what a correct app sees");
                loaded.put(base, scenario);
            }
        }
        assertEquals(Set.of("command-error-not-retried", "failover-during-writes", "failover-with-rollback", "hang-until-socket-timeout",
                "narrow-link", "not-writable-primary-once", "persistent-outage", "reply-lost-after-apply", "rolling-restart", "slow-network", "slow-primary", "transient-blip",
                "write-concern-error-after-apply"), loaded.keySet());

        assertInstanceOf(ResetConnection.class, loaded.get("transient-blip").rules().get(0).action());
        assertInstanceOf(DropReply.class, loaded.get("reply-lost-after-apply").rules().get(0).action());
        assertEquals(13, assertInstanceOf(ErrorReply.class, loaded.get("command-error-not-retried").rules().get(0).action()).code());
        assertEquals(10107, assertInstanceOf(ErrorReply.class, loaded.get("not-writable-primary-once").rules().get(0).action()).code());
        assertInstanceOf(Hang.class, loaded.get("hang-until-socket-timeout").rules().get(0).action());
        assertInstanceOf(DelayReply.class, loaded.get("slow-primary").rules().get(0).action());
        Scenario.Step slowLink = loaded.get("slow-network").timeline().get(0);
        assertEquals(Scenario.Kind.LATENCY, slowLink.kind());
        assertEquals("all", slowLink.target());
        assertEquals(new Latency(200, 100), slowLink.latency());
        Scenario.Step narrowLink = loaded.get("narrow-link").timeline().get(0);
        assertEquals(Scenario.Kind.BANDWIDTH, narrowLink.kind());
        assertEquals("primary", narrowLink.target());
        assertEquals(new Bandwidth(32 * 1024), narrowLink.bandwidth());
        assertEquals("primary", loaded.get("slow-primary").rules().get(0).matcher().member());
        assertInstanceOf(WriteConcernError.class, loaded.get("write-concern-error-after-apply").rules().get(0).action());
        Scenario.Step outage = loaded.get("persistent-outage").timeline().get(0);
        assertEquals(Scenario.Kind.OUTAGE, outage.kind());
        assertEquals("primary", outage.target());
        assertEquals(40_000, outage.durationMillis());
        Scenario.Step failover = loaded.get("failover-during-writes").timeline().get(0);
        assertEquals(Scenario.Kind.FAILOVER, failover.kind());
        assertEquals(5_000, failover.atMillis());
    }

    @Test
    void theReadmeExampleLoads() throws IOException {
        String readme = Files.readString(scriptsDir().resolve("README.md"));
        int start = readme.indexOf("```yaml\n");
        int end = readme.indexOf("```", start + 8);
        assertTrue(start >= 0 && end > start, "the README has a yaml example");
        Scenario example = loader.parse("README.md", readme.substring(start + 8, end));
        assertEquals(16, example.timeline().size(), "fourteen steps, the failover three times");
        assertEquals(List.of(45_000L, 50_000L, 55_000L), example.timeline().stream().filter(s -> s.kind() == Scenario.Kind.FAILOVER)
                .map(Scenario.Step::atMillis).toList());
        assertEquals(Scenario.Kind.END, example.timeline().get(example.timeline().size() - 1).kind());
    }

    /** `at: 5` reads as 5 seconds to many: the README warns that a bare number is milliseconds, which is what it is. */
    @Test
    void aBareNumberIsMillisecondsAsTheReadmeSays() throws IOException {
        String readme = Files.readString(scriptsDir().resolve("README.md")).replaceAll("\\s+", " ");
        assertTrue(readme.contains("a bare number is milliseconds"), "fault-scripts/README.md says what a bare number means");
        Scenario bare = loader.parse("bare.yaml", "name: b\ntimeline:\n  - at: 5\n    outage: {member: primary, duration: 1500}\n");
        assertEquals(5, bare.timeline().get(0).atMillis());
        assertEquals(1500, bare.timeline().get(0).durationMillis());
    }
    /**
     * One reading reports every field, rule and step that is wrong, each on its own line by line in the file, as a compiler
     * does: a user mends a file in one round, not one round per error. What is right around them is not reported.
     */
    @Test
    void everyWrongFieldRuleAndStepIsReportedTogetherByLine() {
        ScenarioException e = rejected("""
                name: several
                colour: red
                rules:
                  - id: fine
                    configureFailPoint: failCommand
                    mode: alwaysOn
                    data: {failCommands: [insert], resetConnection: true}
                  - id: bad
                    configureFailPoint: failCommand
                    mode: alwaysOn
                    data: {failCommands: [insert], errorCode: "x"}
                timeline:
                  - at: soon
                    outage: primary
                  - at: 1s
                    outage: primary
                  - at: 2s
                    explode: primary
                description: [1]
                """);
        assertEquals(List.of(
                "bad.yaml:2: colour: unknown field (expected name, description, rules, timeline)",
                "bad.yaml:11: rules[1].data.errorCode: must be an integer, got \"x\"",
                "bad.yaml:13: timeline[0].at: 'soon' is not a duration such as 500ms, 5s or 2m",
                "bad.yaml:18: timeline[2].explode: unknown step (expected one of [add, bandwidth, blackhole, clear, end, failover,"
                        + " idleTimeout, latency, outage, remove, resetConnections, restart, restore, rollingRestart])",
                "bad.yaml:19: description: must be text, not [1]"), e.getMessage().lines().toList());
    }

    /**
     * The timeline as a whole (a step after the end, a remove of no rule) is checked with its steps that are right, each
     * of its errors reported, a repeated step's once; with a rule wrong in itself, a remove of its id is not judged.
     */
    @Test
    void everyErrorOfTheTimelineAsAWholeIsReportedToo() {
        assertEquals(List.of(
                "bad.yaml:4: timeline[0].remove: no rule with id 'a' in this scenario",
                "bad.yaml:6: timeline[1].outage.duration: '0.4ms' is shorter than 1ms",
                "bad.yaml:8: timeline[2].remove: no rule with id 'b' in this scenario"), rejected("""
                name: t
                timeline:
                  - at: 1s
                    remove: a
                  - at: 2s
                    outage: {member: primary, duration: 0.4ms}
                  - at: 3s
                    remove: b
                """).getMessage().lines().map(line -> line.replaceFirst("(shorter than 1ms).*", "$1")).toList());
        assertEquals(List.of(
                "bad.yaml:4: timeline[1]: at 2000ms it comes after the end step (timeline[0], at 1000ms) and would never run",
                "bad.yaml:5: timeline[2]: at 3000ms it comes after the end step (timeline[0], at 1000ms) and would never run"),
                rejected("""
                name: t
                timeline:
                  - {at: 1s, end: true}
                  - {at: 2s, remove: nothing}
                  - {at: 3s, restore: primary, repeat: {every: 1s, times: 3}}
                """).getMessage().lines().toList(), "the steps after the end, each once, before what they would do");
        assertEquals(List.of("bad.yaml:6: rules[0].data.errorCode: must be an integer, got \"x\""), rejected("""
                name: t
                rules:
                  - id: a
                    configureFailPoint: failCommand
                    mode: alwaysOn
                    data: {failCommands: [insert], errorCode: x}
                timeline:
                  - {at: 1s, remove: a}
                """).getMessage().lines().toList(), "the remove of a rule refused is not judged: it names a rule of the file");
        assertEquals(List.of("bad.yaml:8: timeline[0].at: 'soon' is not a duration such as 500ms, 5s or 2m"), rejected("""
                name: t
                rules:
                  - id: a
                    configureFailPoint: failCommand
                    mode: alwaysOn
                    data: {failCommands: [insert], errorCode: 2}
                timeline:
                  - {at: soon, remove: a}
                  - {at: 10s, add: {id: a, configureFailPoint: failCommand, mode: alwaysOn, data: {failCommands: [find], errorCode: 2}}}
                """).getMessage().lines().toList(), "the add after a remove refused is not judged: the file removes it before");
        assertEquals(List.of("bad.yaml:2: rules: must be a list"), rejected("""
                name: t
                rules: {id: a}
                timeline:
                  - {at: 1s, remove: a}
                """).getMessage().lines().toList(), "rules that are no list: which ids the file has is not known");
    }

    /** A file of many bad rules lists the first ones, then how many more: enough to mend it, not a page per rule. */
    @Test
    void manyErrorsListTheFirstTwentyThenHowManyMore() {
        StringBuilder text = new StringBuilder("name: many\nrules:\n");
        for (int i = 0; i < 25; i++) {
            text.append("  - {configureFailPoint: failCommand, mode: alwaysOn, data: {failCommands: [insert], errorCode: x}}\n");
        }
        List<String> lines = rejected(text.toString()).getMessage().lines().toList();
        assertEquals(ScenarioException.MAX_SHOWN + 1, lines.size(), lines::toString);
        assertEquals("bad.yaml:3: rules[0].data.errorCode: must be an integer, got \"x\"", lines.get(0));
        assertEquals("bad.yaml:22: rules[19].data.errorCode: must be an integer, got \"x\"", lines.get(19));
        assertEquals("bad.yaml: 5 more errors not shown", lines.get(20));
    }
}
