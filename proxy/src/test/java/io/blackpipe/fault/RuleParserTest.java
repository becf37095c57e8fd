package io.blackpipe.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.fault.action.BlockConnection;
import io.blackpipe.fault.action.CloseConnection;
import io.blackpipe.fault.action.DelayReply;
import io.blackpipe.fault.action.DropReply;
import io.blackpipe.fault.action.ErrorReply;
import io.blackpipe.fault.action.Hang;
import io.blackpipe.fault.action.ResetConnection;
import io.blackpipe.fault.action.TrickleReply;
import io.blackpipe.fault.action.WriteConcernError;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RuleParserTest {
    private final RuleParser parser = new RuleParser(1234);

    private static String rule(String mode, String data) {
        return "{configureFailPoint: 'failCommand', mode: " + mode + ", data: " + data + "}";
    }

    private Rule parse(String json) {
        return parser.parse("r", BsonDocument.parse(json));
    }

    private Rule parseData(String data) {
        return parse(rule("'alwaysOn'", data));
    }

    private RuleException rejected(String json) {
        return assertThrows(RuleException.class, () -> parse(json), json);
    }

    private static List<Boolean> draws(Mode mode, int n) {
        List<Boolean> fired = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            fired.add(mode.fire());
        }
        return fired;
    }

    // ---- valid forms ----

    @Test
    void theServersOwnFailCommandFormParsesWithEveryMatcherField() {
        String json = rule("'alwaysOn'", "{failCommands: ['insert', 'update'], errorCode: 91, appName: 'shop',"
                + " namespace: 'app.orders', member: 'primary', attempt: 'retry'}");
        Rule rule = parser.parse("mine", BsonDocument.parse(json));
        assertEquals("mine", rule.id());
        assertEquals(Set.of("insert", "update"), rule.matcher().commands());
        assertEquals("shop", rule.matcher().appName());
        assertEquals("app.orders", rule.matcher().namespace());
        assertEquals("primary", rule.matcher().member());
        assertEquals("retry", rule.matcher().attempt());
        assertEquals(91, assertInstanceOf(ErrorReply.class, rule.action()).code());
        assertEquals(BsonDocument.parse(json), rule.source());
    }

    @Test
    void optionalMatcherFieldsDefaultToMatchEverything() {
        Rule rule = parseData("{failCommands: ['find'], closeConnection: true}");
        assertNull(rule.matcher().appName());
        assertNull(rule.matcher().namespace());
        assertNull(rule.matcher().member());
        assertNull(rule.matcher().attempt());
    }

    @Test
    void theSourceIsACopy() {
        BsonDocument document = BsonDocument.parse(rule("'alwaysOn'", "{failCommands: ['find'], hang: true}"));
        Rule rule = parser.parse("r", document);
        document.getDocument("data").put("hang", new org.bson.BsonBoolean(false));
        assertNotSame(document, rule.source());
        assertTrue(rule.source().getDocument("data").getBoolean("hang").getValue());
    }

    @Test
    void theWireCommandsExtraFieldsAreAccepted() {
        Rule rule = parse("{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2},"
                + " $db: 'admin', lsid: {id: 1}, $clusterTime: {}, $readPreference: {mode: 'primary'}, id: 'x'}");
        assertInstanceOf(ErrorReply.class, rule.action());
        Rule compat = parseData("{failCommands: ['find'], errorCode: 2, failInternalCommands: true, failLocalClients: true}");
        assertInstanceOf(ErrorReply.class, compat.action());
    }

    @Test
    void alwaysOnAlwaysFiresAndIsNeverSpent() {
        Mode mode = parse(rule("'alwaysOn'", "{failCommands: ['find'], errorCode: 2}")).mode();
        assertEquals(List.of(true, true, true, true, true), draws(mode, 5));
        assertFalse(mode.spent());
        assertEquals("alwaysOn", mode.describe());
    }

    @Test
    void timesFiresNTimesThenIsSpent() {
        Mode mode = parse(rule("{times: 2}", "{failCommands: ['find'], errorCode: 2}")).mode();
        assertFalse(mode.spent());
        assertEquals("{times: 2} (2 left)", mode.describe(), "what the rule listing shows");
        assertEquals(List.of(true, true, false), draws(mode, 3));
        assertTrue(mode.spent());
        assertEquals("{times: 2} (0 left)", mode.describe(), "a spent rule asked again goes no lower than 0");
        assertEquals(List.of(false), draws(mode, 1));
        assertTrue(mode.spent());
        Mode zero = parse(rule("{times: 0}", "{failCommands: ['find'], errorCode: 2}")).mode();
        assertEquals(List.of(true, false), draws(zero, 2), "as mongod's failpoint, which turns off once it counts below 1");
        Mode asLong = parse(rule("{times: {$numberLong: '1'}}", "{failCommands: ['find'], errorCode: 2}")).mode();
        assertEquals(List.of(true, false), draws(asLong, 2));
    }

    @Test
    void skipLetsTheFirstNPassThenFiresEveryTime() {
        Mode mode = parse(rule("{skip: 2}", "{failCommands: ['find'], errorCode: 2}")).mode();
        assertEquals("{skip: 2} (2 to skip)", mode.describe());
        assertEquals(List.of(false, false, true, true, true), draws(mode, 5));
        assertFalse(mode.spent());
        assertEquals("{skip: 2} (0 to skip)", mode.describe());
        assertEquals(List.of(true, true), draws(parse(rule("{skip: 0}", "{failCommands: ['find'], errorCode: 2}")).mode(), 2));
    }

    @Test
    void timesAndSkipTakeUpToTwoToTheThirtyFirstMinusOneAsTheServerDoes() {
        String data = "{failCommands: ['find'], errorCode: 2}";
        for (String key : List.of("times", "skip")) {
            for (String top : List.of("2147483647", "{$numberLong: '2147483647'}", "2147483647.0")) {
                Mode mode = parse(rule("{" + key + ": " + top + "}", data)).mode();
                assertEquals(key.equals("times"), draws(mode, 1).get(0), key + ": " + top + " is accepted");
            }
            for (String over : List.of("{$numberLong: '2147483648'}", "2147483648.0", "{$numberLong: '9223372036854775807'}")) {
                RuleException refused = rejected(rule("{" + key + ": " + over + "}", data));
                assertEquals("mode." + key, refused.field());
                assertTrue(refused.getMessage().startsWith("mode." + key + ": ")
                        && refused.getMessage().endsWith(" is too large: at most 2147483647 (2^31-1), as the server takes it"),
                        refused::getMessage);
            }
        }
    }

    @Test
    void activationProbabilityZeroNeverFiresAndOneAlwaysFires() {
        Mode never = parse(rule("{activationProbability: 0}", "{failCommands: ['find'], errorCode: 2}")).mode();
        Mode always = parse(rule("{activationProbability: 1}", "{failCommands: ['find'], errorCode: 2}")).mode();
        assertEquals("{activationProbability: 0.0}", never.describe());
        assertEquals("{activationProbability: 1.0}", always.describe());
        for (int i = 0; i < 1000; i++) {
            assertFalse(never.fire());
            assertTrue(always.fire());
        }
    }

    @Test
    void theSameSeedReplaysTheSameDrawsAndAnotherSeedDoesNot() {
        String json = rule("{activationProbability: 0.5}", "{failCommands: ['find'], errorCode: 2}");
        List<List<Boolean>> bySeed = new ArrayList<>();
        for (long seed : new long[] {42, 42, 43, 7_000_000_000L}) {
            RuleParser p = new RuleParser(seed);
            List<Boolean> all = new ArrayList<>();
            // two rules per parser: the second rule's generator differs from the first's but replays too
            all.addAll(draws(p.parse("a", BsonDocument.parse(json)).mode(), 1000));
            all.addAll(draws(p.parse("b", BsonDocument.parse(json)).mode(), 1000));
            bySeed.add(all);
        }
        assertEquals(bySeed.get(0), bySeed.get(1), "the same seed must fire identically");
        assertNotEquals(bySeed.get(0), bySeed.get(2), "seed 43 must not replay seed 42");
        assertNotEquals(bySeed.get(0), bySeed.get(3));
        assertNotEquals(bySeed.get(0).subList(0, 1000), bySeed.get(0).subList(1000, 2000),
                "two rules of one parser draw from different generators");
        long fired = bySeed.get(0).stream().filter(b -> b).count();
        assertTrue(fired > 850 && fired < 1150, "about half of 2000 draws fire at p=0.5, got " + fired);
    }

    /** The messages name what a rule may have: its id too, and no "off" among the modes a rule can be added with. */
    @Test
    void anUnknownFieldOrAMissingModeNamesWhatTheRuleMayHave() {
        assertEquals("colour: unknown field (expected configureFailPoint, mode, data, id)", assertThrows(RuleException.class,
                () -> parse("{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2}, colour: 1}"))
                .getMessage());
        assertEquals("mode: required: \"alwaysOn\", {times: n}, {skip: n} or {activationProbability: p}", assertThrows(RuleException.class,
                () -> parse("{configureFailPoint: 'failCommand', data: {failCommands: ['find'], errorCode: 2}}")).getMessage());
    }

    /**
     * A refused rule takes no place in the sequence of draws: the rule after it draws as it would without it. Before,
     * a rule refused for its data after its mode drew (a bad member here) moved every later rule's generator.
     */
    @Test
    void aRefusedRuleDrawsNothing() {
        String json = rule("{activationProbability: 0.5}", "{failCommands: ['find'], errorCode: 2}");
        String refused = rule("{activationProbability: 0.5}", "{failCommands: ['find'], errorCode: 2, member: 'not a member'}");
        RuleParser clean = new RuleParser(42);
        List<Boolean> first = draws(clean.parse("a", BsonDocument.parse(json)).mode(), 200);
        List<Boolean> second = draws(clean.parse("b", BsonDocument.parse(json)).mode(), 200);
        RuleParser withARefusal = new RuleParser(42);
        assertEquals(first, draws(withARefusal.parse("a", BsonDocument.parse(json)).mode(), 200));
        assertThrows(RuleException.class, () -> withARefusal.parse("bad", BsonDocument.parse(refused)));
        assertEquals(second, draws(withARefusal.parse("b", BsonDocument.parse(json)).mode(), 200), "b draws as without the refusal");
    }

    /**
     * A scenario is one request: refused whole (its rule was fine, a later step was not), or only validated, it takes
     * no place in the draws either. Before, its rules' draws stayed taken, and every rule after drew differently.
     */
    @Test
    void aScenarioRefusedOrOnlyCheckedDrawsNothing() {
        String json = rule("{activationProbability: 0.5}", "{failCommands: ['find'], errorCode: 2}");
        String withRule = "name: s\nrules:\n  - " + json + "\ntimeline:\n  - at: 1s\n    restore: all\n";
        String refused = withRule + "  - at: 2s\n    outage: {member: primry}\n";
        List<Boolean> first = draws(new RuleParser(42).parse("a", BsonDocument.parse(json)).mode(), 200);

        RuleParser afterARefusal = new RuleParser(42);
        assertThrows(ScenarioException.class, () -> ScenarioLoader.offline(afterARefusal).parse("refused.yaml", refused));
        assertEquals(first, draws(afterARefusal.parse("a", BsonDocument.parse(json)).mode(), 200), "as without the refused scenario");

        RuleParser afterACheck = new RuleParser(42);
        ScenarioLoader checking = ScenarioLoader.offline(afterACheck);
        assertEquals(first, draws(checking.check("checked.yaml", withRule).rules().get(0).mode(), 200), "the check draws as a start would");
        assertEquals(first, draws(afterACheck.parse("a", BsonDocument.parse(json)).mode(), 200), "as without the check");

        RuleParser afterAStart = new RuleParser(42);
        assertEquals(first, draws(ScenarioLoader.offline(afterAStart).parse("started.yaml", withRule).rules().get(0).mode(), 200));
        assertNotEquals(first, draws(afterAStart.parse("a", BsonDocument.parse(json)).mode(), 200), "a started scenario's rule took the first place");
    }

    @Test
    void restartedDrawsReplayAsThoseOfANewParser() {
        String json = rule("{activationProbability: 0.5}", "{failCommands: ['find'], errorCode: 2}");
        RuleParser fresh = new RuleParser(42);
        List<Boolean> first = draws(fresh.parse("a", BsonDocument.parse(json)).mode(), 200);
        List<Boolean> second = draws(fresh.parse("b", BsonDocument.parse(json)).mode(), 200);
        RuleParser used = new RuleParser(42);
        used.parse("x", BsonDocument.parse(json));
        used.parse("y", BsonDocument.parse(json));
        used.parse("z", BsonDocument.parse(json));
        used.restartDraws();
        assertEquals(first, draws(used.parse("a", BsonDocument.parse(json)).mode(), 200),
                "after a reset the first rule draws as the first rule of a parser just made");
        assertEquals(second, draws(used.parse("b", BsonDocument.parse(json)).mode(), 200));
    }

    @Test
    void anUnknownErrorNameIsRefusedNamingTheKnownOnes() {
        RuleException e = rejected(rule("'alwaysOn'", "{failCommands: ['insert'], error: 'NotMaster'}"));
        assertEquals("data.error", e.field());
        assertTrue(e.getMessage().contains("unknown error name NotMaster; known: [") && e.getMessage().contains("NotWritablePrimary")
                && e.getMessage().contains("ShutdownInProgress"), e.getMessage());
    }

    @Test
    void errorNamesArePresetsForTheirCodes() {
        assertEquals(10107, assertInstanceOf(ErrorReply.class,
                parseData("{failCommands: ['insert'], error: 'NotWritablePrimary'}").action()).code());
        for (Map.Entry<String, Integer> preset : ErrorCodes.presets().entrySet()) {
            Rule rule = parseData("{failCommands: ['insert'], error: '" + preset.getKey() + "'}");
            assertEquals(preset.getValue(), ((ErrorReply) rule.action()).code(), preset.getKey());
        }
    }

    @Test
    void everyCodeOfTheProtocolNotesHasAPreset() {
        Map<String, Integer> expected = Map.ofEntries(Map.entry("InterruptedAtShutdown", 11600),
                Map.entry("InterruptedDueToReplStateChange", 11602), Map.entry("NotWritablePrimary", 10107),
                Map.entry("NotPrimaryNoSecondaryOk", 13435), Map.entry("NotPrimaryOrSecondary", 13436),
                Map.entry("PrimarySteppedDown", 189), Map.entry("ShutdownInProgress", 91), Map.entry("HostNotFound", 7),
                Map.entry("HostUnreachable", 6), Map.entry("NetworkTimeout", 89), Map.entry("SocketException", 9001),
                Map.entry("ExceededTimeLimit", 262), Map.entry("ReadConcernMajorityNotAvailableYet", 134),
                Map.entry("WriteConcernFailed", 64), Map.entry("Unauthorized", 13), Map.entry("LegacyNotPrimary", 10058));
        expected.forEach((name, code) -> {
            assertEquals(code, ErrorCodes.code(name), name);
            assertEquals(name, ErrorCodes.name(code));
        });
        assertTrue(ErrorCodes.presets().entrySet().containsAll(expected.entrySet()), "the presets listed: " + ErrorCodes.presets());
    }

    @Test
    void errorCodeAcceptsAnyIntegralNumber() {
        assertEquals(91, ((ErrorReply) parseData("{failCommands: ['insert'], errorCode: {$numberLong: '91'}}").action()).code());
        assertEquals(91, ((ErrorReply) parseData("{failCommands: ['insert'], errorCode: 91.0}").action()).code());
    }

    @Test
    void topologyVersionModesAreAccepted() {
        for (String mode : new String[] {"newer", "current", "omit"}) {
            assertInstanceOf(ErrorReply.class,
                    parseData("{failCommands: ['insert'], errorCode: 10107, topologyVersion: '" + mode + "'}").action());
        }
        FakeInterception omit = FakeInterception.retryableInsert();
        parseData("{failCommands: ['insert'], errorCode: 10107, topologyVersion: 'omit'}").action().apply(omit);
        assertFalse(omit.answered.containsKey("topologyVersion"));
        FakeInterception current = FakeInterception.retryableInsert();
        parseData("{failCommands: ['insert'], errorCode: 10107, topologyVersion: 'current'}").action().apply(current);
        assertEquals(List.of(false), current.topologyVersionRequests);
        FakeInterception newer = FakeInterception.retryableInsert();
        parseData("{failCommands: ['insert'], errorCode: 10107}").action().apply(newer);
        assertEquals(List.of(true), newer.topologyVersionRequests, "newer is the default");
    }

    @Test
    void errorLabelsReachTheReply() {
        FakeInterception none = FakeInterception.retryableInsert();
        parseData("{failCommands: ['insert'], errorCode: 10107, errorLabels: []}").action().apply(none);
        assertFalse(none.answered.containsKey("errorLabels"));
        FakeInterception custom = FakeInterception.retryableInsert();
        parseData("{failCommands: ['insert'], errorCode: 2, errorLabels: ['A', 'B']}").action().apply(custom);
        assertEquals(BsonArray.parse("['A', 'B']"), custom.answered.getArray("errorLabels"));
        FakeInterception wce = FakeInterception.retryableInsert();
        parseData("{failCommands: ['insert'], writeConcernError: {code: 91}, errorLabels: []}").action().apply(wce);
        FakeInterception.FakeReply reply = new FakeInterception.FakeReply(BsonDocument.parse("{n: 1, ok: 1}"));
        wce.fate.decide(reply);
        assertFalse(reply.replacement.containsKey("errorLabels"));
    }

    @Test
    void eachExtensionMapsToItsAction() {
        assertInstanceOf(Hang.class, parseData("{failCommands: ['find'], hang: true}").action());
        assertInstanceOf(ResetConnection.class, parseData("{failCommands: ['find'], resetConnection: true}").action());
        assertInstanceOf(CloseConnection.class, parseData("{failCommands: ['find'], closeConnection: true}").action());
        assertInstanceOf(DropReply.class, parseData("{failCommands: ['find'], dropReply: true}").action());
        assertInstanceOf(WriteConcernError.class, parseData("{failCommands: ['insert'], writeConcernError: {code: 64}}").action());
        assertInstanceOf(DelayReply.class, parseData("{failCommands: ['find'], delayReplyMS: 0}").action());
        assertInstanceOf(TrickleReply.class, parseData("{failCommands: ['find'], trickleReplyBytes: 64, trickleReplyIntervalMS: 250}").action());
        assertInstanceOf(BlockConnection.class, parseData("{failCommands: ['find'], blockConnection: true, blockTimeMS: 10}").action());
    }

    @Test
    void falseFlagsDoNothing() {
        assertInstanceOf(ErrorReply.class, parseData("{failCommands: ['find'], hang: false, resetConnection: false,"
                + " closeConnection: false, dropReply: false, blockConnection: false, errorCode: 2}").action());
    }

    // ---- precedence: hang > resetConnection > closeConnection > dropReply | truncateReplyBytes > errorCode > writeConcernError
    //      > trickleReply | delayReplyMS ----

    @ParameterizedTest(name = "{0} wins")
    @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
        "hang              | hang: true, resetConnection: true, closeConnection: true, dropReply: true, errorCode: 91, writeConcernError: {code: 64}, TRICKLE",
        "resetConnection  | resetConnection: true, closeConnection: true, dropReply: true, errorCode: 91, writeConcernError: {code: 64}, TRICKLE",
        "closeConnection  | closeConnection: true, dropReply: true, errorCode: 91, writeConcernError: {code: 64}, TRICKLE",
        "dropReply        | dropReply: true, errorCode: 91, writeConcernError: {code: 64}, TRICKLE",
        "closeConnection  | closeConnection: true, truncateReplyBytes: 100, errorCode: 91, writeConcernError: {code: 64}",
        "truncateReply    | truncateReplyBytes: 100, errorCode: 91, writeConcernError: {code: 64}",
        "truncateReply    | truncateReplyBytes: 100, errorCode: 0",
        "errorReply       | errorCode: 91, writeConcernError: {code: 64}, TRICKLE",
        "writeConcernError| writeConcernError: {code: 64}, TRICKLE",
        "trickleReply     | TRICKLE",
        "delayReply       | delayReplyMS: 5",
        "errorReply       | errorCode: 91, delayReplyMS: 5",
    })
    void precedence(String winner, String fields) {
        String data = fields.replace("TRICKLE", "trickleReplyBytes: 16, trickleReplyIntervalMS: 10");
        assertEquals(winner, parseData("{failCommands: ['insert'], " + data + "}").action().name());
    }

    @Test
    void aJitterTakesUpToTheLargestIntOfMilliseconds() {
        assertInstanceOf(DelayReply.class, parseData("{failCommands: ['find'], delayReplyMS: 10, delayReplyJitterMS: 2147483647}").action());
        RuleException e = rejected(rule("'alwaysOn'", "{failCommands: ['find'], delayReplyMS: 10, delayReplyJitterMS: 2147483648}"));
        assertEquals("data.delayReplyJitterMS: 2147483648 is too large: at most 2147483647 ms", e.getMessage());
    }

    @Test
    void aTrickleAndADelayAreRefusedTogetherAsEachHoldsTheReplyItsOwnWay() {
        RuleException e = rejected(rule("'alwaysOn'", "{failCommands: ['find'], delayReplyMS: 100, delayReplyJitterMS: 20,"
                + " trickleReplyBytes: 16, trickleReplyIntervalMS: 10}"));
        assertEquals("data.delayReplyMS: give delayReplyMS or trickleReplyBytes + trickleReplyIntervalMS, not both", e.getMessage());
    }

    @Test
    void precedenceIsIndependentOfFieldOrder() {
        assertInstanceOf(Hang.class, parseData("{failCommands: ['insert'], delayReplyMS: 5, errorCode: 91, hang: true}").action());
        assertInstanceOf(ErrorReply.class, parseData("{failCommands: ['insert'], writeConcernError: {code: 64}, errorCode: 91}").action());
        assertInstanceOf(CloseConnection.class, parseData("{failCommands: ['insert'], errorCode: 91, closeConnection: true}").action());
    }

    @Test
    void blockConnectionWrapsTheWinningActionOrForwards() {
        Rule withError = parseData("{failCommands: ['insert'], blockConnection: true, blockTimeMS: 300, errorCode: 13}");
        BlockConnection block = assertInstanceOf(BlockConnection.class, withError.action());
        FakeInterception command = FakeInterception.retryableInsert();
        block.apply(command);
        assertEquals(List.of(300L), command.waits);
        assertTrue(command.calls.isEmpty());
        command.elapse();
        assertEquals(List.of("answer"), command.calls);
        assertEquals(13, command.answered.getInt32("code").getValue());

        FakeInterception closed = FakeInterception.retryableInsert();
        parseData("{failCommands: ['insert'], blockConnection: true, blockTimeMS: 5, closeConnection: true, errorCode: 13}")
                .action().apply(closed);
        closed.elapse();
        assertEquals(List.of("close"), closed.calls);

        FakeInterception plain = FakeInterception.retryableInsert();
        parseData("{failCommands: ['insert'], blockConnection: true, blockTimeMS: 0}").action().apply(plain);
        assertEquals(List.of(0L), plain.waits);
        plain.elapse();
        assertEquals(List.of("forward"), plain.calls);
    }

    // ---- bad input: rejected whole, naming the field ----

    @ParameterizedTest(name = "{1}")
    @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
        // top level
        "foo                        | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2}, foo: 1}",
        "configureFailPoint         | {mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2}}",
        "configureFailPoint         | {configureFailPoint: 'failGetMore', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2}}",
        "configureFailPoint         | {configureFailPoint: 1, mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2}}",
        "data                       | {configureFailPoint: 'failCommand', mode: 'alwaysOn'}",
        "data                       | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: 'x'}",
        // mode
        "mode                       | {configureFailPoint: 'failCommand', data: {failCommands: ['find'], errorCode: 2}}",
        "mode                       | {configureFailPoint: 'failCommand', mode: 'off', data: {failCommands: ['find'], errorCode: 2}}",
        "mode                       | {configureFailPoint: 'failCommand', mode: 'sometimes', data: {failCommands: ['find'], errorCode: 2}}",
        "mode                       | {configureFailPoint: 'failCommand', mode: 1, data: {failCommands: ['find'], errorCode: 2}}",
        "mode                       | {configureFailPoint: 'failCommand', mode: {}, data: {failCommands: ['find'], errorCode: 2}}",
        "mode                       | {configureFailPoint: 'failCommand', mode: {times: 1, skip: 1}, data: {failCommands: ['find'], errorCode: 2}}",
        "mode.times                 | {configureFailPoint: 'failCommand', mode: {times: -1}, data: {failCommands: ['find'], errorCode: 2}}",
        "mode.times                 | {configureFailPoint: 'failCommand', mode: {times: 1.5}, data: {failCommands: ['find'], errorCode: 2}}",
        "mode.times                 | {configureFailPoint: 'failCommand', mode: {times: '1'}, data: {failCommands: ['find'], errorCode: 2}}",
        "mode.skip                  | {configureFailPoint: 'failCommand', mode: {skip: -1}, data: {failCommands: ['find'], errorCode: 2}}",
        "mode.activationProbability | {configureFailPoint: 'failCommand', mode: {activationProbability: 1.5}, data: {failCommands: ['find'], errorCode: 2}}",
        "mode.activationProbability | {configureFailPoint: 'failCommand', mode: {activationProbability: -0.1}, data: {failCommands: ['find'], errorCode: 2}}",
        "mode.activationProbability | {configureFailPoint: 'failCommand', mode: {activationProbability: 'half'}, data: {failCommands: ['find'], errorCode: 2}}",
        "mode.activationProbability | {configureFailPoint: 'failCommand', mode: {activationProbability: {$numberDouble: 'NaN'}}, data: {failCommands: ['find'], errorCode: 2}}",
        "mode.sometimes             | {configureFailPoint: 'failCommand', mode: {sometimes: 1}, data: {failCommands: ['find'], errorCode: 2}}",
        // data
        "data.bar                   | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2, bar: 1}}",
        "data.failCommands          | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {errorCode: 2}}",
        "data.failCommands          | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: [], errorCode: 2}}",
        "data.failCommands          | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: 'find', errorCode: 2}}",
        "data.failCommands          | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find', 1], errorCode: 2}}",
        "data.failCommands          | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: [''], errorCode: 2}}",
        "data.errorCode             | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 'x'}}",
        "data.errorCode             | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 1.5}}",
        "data.errorCode             | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: true}}",
        "data.errorCode             | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], hang: true, errorCode: 'x'}}",
        "data.error                 | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], error: 'NotWritablePrimary', errorCode: 10107}}",
        "data.error                 | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], error: 'NoSuchError'}}",
        "data.error                 | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], error: 10107}}",
        "data.errorLabels           | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2, errorLabels: 'x'}}",
        "data.errorLabels           | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2, errorLabels: [1]}}",
        "data.errorLabels           | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2, errorLabels: ['']}}",
        "data.errorLabels           | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2, errorLabels: ['RetryableWriteError', ' ']}}",
        "data.closeConnection       | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], closeConnection: 'yes'}}",
        "data.resetConnection       | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], resetConnection: 1}}",
        "data.dropReply             | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], dropReply: 'true'}}",
        "data.hang                  | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], hang: 1}}",
        "data.failInternalCommands  | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2, failInternalCommands: 'x'}}",
        "data.failLocalClients      | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2, failLocalClients: 1}}",
        "data.threadName            | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2, threadName: 'conn12'}}",
        "data.tassert               | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2, tassert: true}}",
        "data.blockConnection       | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], blockConnection: 'yes', blockTimeMS: 5}}",
        "data.blockTimeMS           | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], blockConnection: true}}",
        "data.blockTimeMS           | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], blockConnection: true, blockTimeMS: -1}}",
        "data.blockTimeMS           | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], blockConnection: true, blockTimeMS: 'x'}}",
        "data.blockTimeMS           | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2, blockTimeMS: 100}}",
        "data.blockTimeMS           | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], blockConnection: false, blockTimeMS: 100}}",
        "data.writeConcernError     | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['insert'], writeConcernError: 64}}",
        "data.writeConcernError.code | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['insert'], writeConcernError: {code: 'x'}}}",
        "data.writeConcernError     | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find', 'count'], writeConcernError: {code: 64}}}",
        "data.delayReplyMS          | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], delayReplyMS: -5}}",
        "data.delayReplyMS          | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], delayReplyMS: 'x'}}",
        "data.delayReplyMS          | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], delayReplyMS: 2.5}}",
        "data.trickleReplyBytes     | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], trickleReplyBytes: 0, trickleReplyIntervalMS: 5}}",
        "data.trickleReplyBytes     | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], trickleReplyBytes: -64, trickleReplyIntervalMS: 5}}",
        "data.trickleReplyBytes     | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], trickleReplyBytes: '64', trickleReplyIntervalMS: 5}}",
        "data.trickleReplyBytes     | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], trickleReplyBytes: 6.5, trickleReplyIntervalMS: 5}}",
        "data.trickleReplyBytes     | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], trickleReplyIntervalMS: 5}}",
        "data.trickleReplyBytes     | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], trickleReplyBytes: 0}}",
        "data.trickleReplyIntervalMS | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], trickleReplyBytes: 64, trickleReplyIntervalMS: 0}}",
        "data.trickleReplyIntervalMS | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], trickleReplyBytes: 64, trickleReplyIntervalMS: -1}}",
        "data.trickleReplyIntervalMS | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], trickleReplyBytes: 64, trickleReplyIntervalMS: 'soon'}}",
        "data.trickleReplyIntervalMS | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], trickleReplyBytes: 64, trickleReplyIntervalMS: 0.5}}",
        "data.trickleReplyIntervalMS | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], trickleReplyBytes: 64}}",
        "data.trickleReplyIntervalMS | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2, trickleReplyBytes: 64}}",
        "data.appName               | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2, appName: 5}}",
        "data.namespace             | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2, namespace: {db: 'x'}}}",
        "data.member                | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2, member: 'leader'}}",
        "data.member                | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2, member: ':27017'}}",
        "data.member                | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2, member: 'db1:'}}",
        "data.member                | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2, member: 'db1:port'}}",
        "data.member                | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2, member: 'db1:99999'}}",
        "data.member                | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2, member: 'db1:0'}}",
        "data.member                | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2, member: 1}}",
        "data.attempt               | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2, attempt: 'second'}}",
        "data.attempt               | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2, attempt: 2}}",
        "data.topologyVersion       | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 10107, topologyVersion: 'older'}}",
        "data.topologyVersion       | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 10107, topologyVersion: {counter: 1}}}",
        // nothing to do
        "data                       | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find']}}",
        "data                       | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], appName: 'a', errorLabels: ['x']}}",
        "data                       | {configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], closeConnection: false}}",
    })
    void badInputIsRejectedNamingTheField(String field, String json) {
        RuleException e = rejected(json);
        assertEquals(field, e.field(), e.getMessage());
        assertTrue(e.getMessage().startsWith(field + ": "), e.getMessage());
    }

    @Test
    void aRuleIdThatIsNotANonEmptyStringIsRejectedNamingTheField() {
        String valid = rule("'alwaysOn'", "{failCommands: ['find'], errorCode: 2}");
        for (String id : List.of("5", "true", "{team: 'a'}", "['a']", "''", "'  '")) {
            String json = "{id: " + id + ", " + valid.substring(1);
            RuleException e = rejected(json);
            assertEquals("id", e.field(), e.getMessage());
        }
        assertEquals("id: must be a string, got int32", rejected("{id: 5, " + valid.substring(1)).getMessage());
        assertThrows(RuleException.class, () -> parser.parse("", BsonDocument.parse(valid)), "an empty id given apart");
        assertEquals("r", parse("{id: 'r', " + valid.substring(1)).id());
    }

    @Test
    void hostPortMembersAreAccepted() {
        for (String member : new String[] {"primary", "secondary", "db1.example:27017", "127.0.0.1:40001", "[::1]:27018"}) {
            assertEquals(member, parseData("{failCommands: ['find'], errorCode: 2, member: '" + member + "'}").matcher().member());
        }
    }

    /** Which host:port is a member only a proxy knows: its parser asks it; one with no deployment at hand takes any. */
    @Test
    void aMemberIsCheckedAgainstTheDeploymentWhereThereIsOne() {
        RuleParser proxys = new RuleParser(0, member -> member.equals("db1:27017") || member.equals("primary") ? null
                : "no member '" + member + "' (known: primary, db1:27017)");
        String data = "{failCommands: ['find'], errorCode: 2, member: 'db9:27017'}";
        RuleException unknown = assertThrows(RuleException.class, () -> proxys.parse("r", BsonDocument.parse(rule("'alwaysOn'", data))));
        assertEquals("data.member: no member 'db9:27017' (known: primary, db1:27017)", unknown.getMessage());
        assertEquals("db9:27017", parseData(data).matcher().member(), "offline: a host:port is all it can check");
        assertEquals("db1:27017", proxys.parse("r", BsonDocument.parse(rule("'alwaysOn'", data.replace("db9", "db1"))))
                .matcher().member());
        RuleException typo = assertThrows(RuleException.class,
                () -> proxys.parse("r", BsonDocument.parse(rule("'alwaysOn'", data.replace("db9:27017", "leader")))));
        assertEquals("data.member: must be \"primary\", \"secondary\" or host:port", typo.getMessage(), "the syntax first");
    }

    /** mongod raises errorCode 0 as a Status of code OK, i.e. nothing: the failpoint fires, the command runs. */
    @Test
    void errorCodeZeroIsNoErrorTheRuleFiresAndForwardsUnlessAnotherActionSaysOtherwise() {
        Rule alone = parseData("{failCommands: ['find'], errorCode: 0}");
        assertEquals("none", alone.action().name());
        assertFalse(alone.action().injects(), "nothing to count as a fault");
        FakeInterception find = FakeInterception.retryableInsert();
        alone.action().apply(find);
        assertEquals(List.of("forward"), find.calls, "the command goes on to the member as it is");
        assertEquals("none", parseData("{failCommands: ['find'], errorCode: 0, errorLabels: ['RetryableWriteError']}").action().name());
        assertEquals("blockConnection", parseData("{failCommands: ['find'], errorCode: 0, blockConnection: true, blockTimeMS: 5}")
                .action().name(), "blocked, then forwarded");
        assertEquals("closeConnection", parseData("{failCommands: ['find'], errorCode: 0, closeConnection: true}").action().name());
        assertEquals("writeConcernError", parseData("{failCommands: ['insert'], errorCode: 0, writeConcernError: {code: 64}}")
                .action().name());
        assertTrue(parseData("{failCommands: ['find'], errorCode: 2}").action().injects());
    }

    @Test
    void isOffRecognisesOnlyTheOffMode() {
        assertTrue(RuleParser.isOff(BsonDocument.parse("{configureFailPoint: 'failCommand', mode: 'off'}")));
        assertFalse(RuleParser.isOff(BsonDocument.parse("{configureFailPoint: 'failCommand', mode: 'alwaysOn'}")));
        assertFalse(RuleParser.isOff(BsonDocument.parse("{configureFailPoint: 'failCommand', mode: {times: 0}}")));
        assertFalse(RuleParser.isOff(new BsonDocument("mode", new BsonInt32(0))));
    }

    @Test
    void aRuleOnAnyNameOfHelloMatchesEveryName() {
        for (String name : new String[] {"hello", "isMaster", "ismaster"}) {
            Rule rule = parse("{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['" + name
                    + "', 'find'], closeConnection: true}}");
            assertEquals(Set.of("hello", "isMaster", "ismaster", "find"), rule.matcher().commands(), name);
        }
        assertEquals(Set.of("find"), parseData("{failCommands: ['find'], closeConnection: true}").matcher().commands());
    }

    @Test
    void aRuleOnAnyNameOfACommandWithAliasesMatchesEveryName() {
        assertEquals(Set.of("findAndModify", "findandmodify", "insert"),
                parseData("{failCommands: ['findandmodify', 'insert'], closeConnection: true}").matcher().commands());
        assertEquals(Set.of("dropIndexes", "deleteIndexes"),
                parseData("{failCommands: ['dropIndexes'], closeConnection: true}").matcher().commands());
        assertEquals(Set.of("mapReduce", "mapreduce", "buildInfo", "buildinfo"),
                parseData("{failCommands: ['mapreduce', 'buildInfo'], closeConnection: true}").matcher().commands());
    }

    @Test
    void aWriteConcernErrorRuleMatchesOnlyCommandsTakingAWriteConcern() {
        assertEquals(Set.of("insert", "commitTransaction"),
                parseData("{failCommands: ['find', 'insert', 'commitTransaction'], writeConcernError: {code: 64}}").matcher().commands());
        assertEquals(Set.of("find", "insert"), parseData("{failCommands: ['find', 'insert'], writeConcernError: {code: 64}, errorCode: 2}")
                .matcher().commands(), "an error reaches every command, as on the server");
    }

    @Test
    void failAllCommandsNeedsNoFailCommandsAndWinsOverThem() {
        Matcher all = parseData("{failAllCommands: true, errorCode: 2}").matcher();
        assertTrue(all.allCommands());
        Matcher both = parseData("{failAllCommands: true, failCommands: ['insert'], dropReply: true}").matcher();
        assertTrue(both.allCommands(), "as on the server, failAllCommands wins");
        assertEquals(Set.of("hello", "isMaster", "ismaster"), both.allBut());
        assertFalse(parseData("{failAllCommands: false, failCommands: ['insert'], errorCode: 2}").matcher().allCommands());
        RuleException e = rejected("{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failAllCommands: false, errorCode: 2}}");
        assertEquals("data.failCommands", e.field());
        assertEquals("data.failAllCommands",
                rejected("{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failAllCommands: 1, errorCode: 2}}").field());
    }

    @Test
    void helloTakesNoReplyFate() {
        for (String fate : new String[] {"dropReply: true", "writeConcernError: {code: 64}", "delayReplyMS: 10",
                "trickleReplyBytes: 64, trickleReplyIntervalMS: 10", "trickleReplyIntervalMS: 10", "truncateReplyBytes: 100"}) {
            RuleException e = rejected("{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['isMaster'], "
                    + fate + "}}");
            assertEquals("data." + fate.substring(0, fate.indexOf(':')), e.field(), e.getMessage());
            assertTrue(e.getMessage().contains("hello and isMaster can be failed with"), e.getMessage());
        }
        parse("{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['hello'], blockConnection: true,"
                + " blockTimeMS: 100, errorCode: 91}}");
    }

    @Test
    void aTrickleNamesTheFieldItLacksAndWhatEachMustBe() {
        assertEquals("data.trickleReplyIntervalMS: required with trickleReplyBytes: the pause between pieces",
                rejected(rule("'alwaysOn'", "{failCommands: ['find'], trickleReplyBytes: 64}")).getMessage());
        assertEquals("data.trickleReplyBytes: required with trickleReplyIntervalMS: the bytes of each piece",
                rejected(rule("'alwaysOn'", "{failCommands: ['find'], trickleReplyIntervalMS: 250}")).getMessage());
        assertEquals("data.errorCode: must fit 32 bits, as the server's error codes do, got 99999999999",
                rejected(rule("'alwaysOn'", "{failCommands: ['find'], errorCode: {$numberLong: '99999999999'}}")).getMessage());
        assertEquals("data.errorCode: must be an integer, got 91.5",
                rejected(rule("'alwaysOn'", "{failCommands: ['find'], errorCode: 91.5}")).getMessage());
        assertEquals("data.errorCode: must be an integer, got {\"$numberDouble\": \"Infinity\"}",
                rejected(rule("'alwaysOn'", "{failCommands: ['find'], errorCode: {$numberDouble: 'Infinity'}}")).getMessage());
        assertEquals("data.trickleReplyBytes: must be a whole number of at least 1, got 0",
                rejected(rule("'alwaysOn'", "{failCommands: ['find'], trickleReplyBytes: 0}")).getMessage(),
                "a bad value is named before the missing field");
        assertEquals("data.trickleReplyIntervalMS: must be a whole number of at least 1, got 0",
                rejected(rule("'alwaysOn'", "{failCommands: ['find'], trickleReplyBytes: 1, trickleReplyIntervalMS: 0}")).getMessage());
        parseData("{failCommands: ['find'], trickleReplyBytes: 1, trickleReplyIntervalMS: 1}");
        parseData("{failCommands: ['find'], trickleReplyBytes: {$numberLong: '9000000000'}, trickleReplyIntervalMS: 3.0}");
    }

    @Test
    void aTrickleOnAllCommandsLeavesTheHellosAloneAndWrapsInABlock() {
        Matcher all = parseData("{failAllCommands: true, trickleReplyBytes: 64, trickleReplyIntervalMS: 10}").matcher();
        assertEquals(Set.of("hello", "isMaster", "ismaster"), all.allBut());
        BlockConnection block = assertInstanceOf(BlockConnection.class, parseData(
                "{failCommands: ['find'], blockConnection: true, blockTimeMS: 50, trickleReplyBytes: 64, trickleReplyIntervalMS: 10}").action());
        FakeInterception command = FakeInterception.retryableInsert();
        block.apply(command);
        command.elapse();
        assertEquals(List.of("forward(fate)"), command.calls, "blocked, then forwarded to trickle");
    }

    // ---- found by mutation testing: each pins what a surviving mutant changed unseen

    /** The API names a rule in its path (MAX_ID_LENGTH code points, 4-byte characters too): at the limit it is taken. */
    @Test
    void anIdOfAtMostMaxIdLengthCharactersIsTakenOneLongerIsRefused() {
        String valid = rule("'alwaysOn'", "{failCommands: ['find'], errorCode: 2}");
        String longest = "\uD83D\uDE00".repeat(RuleParser.MAX_ID_LENGTH); // 256 emoji: 512 chars, 256 code points
        assertEquals(longest, parser.parse(longest, BsonDocument.parse(valid)).id());
        RuleException tooLong = assertThrows(RuleException.class, () -> parser.parse(longest + "x", BsonDocument.parse(valid)));
        assertEquals("id: is 257 characters long; at most 256", tooLong.getMessage());
        assertEquals("id: must not be empty", assertThrows(RuleException.class, () -> parser.parse(null, BsonDocument.parse(valid)))
                .getMessage(), "no id at all: the same clear refusal, not a NullPointerException");
    }

    /** A server-only field is refused saying why a proxy cannot honour it, not as a mere unknown field. */
    @Test
    void aServerOnlyFieldIsRefusedWithItsReason() {
        assertEquals("data.threadName: the server's failpoint matches one of its own threads (conn12); a proxy has none:"
                + " match by appName or member",
                rejected(rule("'alwaysOn'", "{failCommands: ['find'], errorCode: 2, threadName: 'conn12'}")).getMessage());
        assertEquals("data.tassert: the server's failpoint raises its error as an internal assertion; a proxy raises none: leave it out",
                rejected(rule("'alwaysOn'", "{failCommands: ['find'], errorCode: 2, tassert: true}")).getMessage());
    }

    @Test
    void attemptTakesFirstAndRetry() {
        assertEquals("first", parseData("{failCommands: ['find'], errorCode: 2, attempt: 'first'}").matcher().attempt());
        assertEquals("retry", parseData("{failCommands: ['find'], errorCode: 2, attempt: 'retry'}").matcher().attempt());
    }

    /** The matcher compares a member's address as MemberAddress prints it: a rule naming it another way must still fire. */
    @Test
    void aHostPortMemberIsKeptAsTheMatcherSeesMembers() {
        assertEquals("[::1]:27017", parseData("{failCommands: ['find'], errorCode: 2, member: '[0:0:0:0:0:0:0:1]:27017'}")
                .matcher().member());
    }

    /** failAllCommands wins over failCommands: hello among them does not make a reply fate hello's (all-commands skips hellos). */
    @Test
    void failAllCommandsWithHelloAmongFailCommandsTakesAReplyFate() {
        Matcher all = parseData("{failAllCommands: true, failCommands: ['hello'], dropReply: true}").matcher();
        assertTrue(all.allCommands());
        assertEquals(Set.of("hello", "isMaster", "ismaster"), all.allBut());
        assertEquals("data.failCommands", rejected(rule("'alwaysOn'", "{failAllCommands: true, failCommands: 'insert', errorCode: 2}"))
                .field(), "given with failAllCommands, failCommands must still be well formed: nothing half-accepted");
    }

    @Test
    void isOffIsFalseWithoutAMode() {
        assertFalse(RuleParser.isOff(BsonDocument.parse("{configureFailPoint: 'failCommand', data: {}}")),
                "configureFailPoint without mode: refused by parse (mode: required), not a crash on the event loop");
    }

    /**
     * An event loop asks with parseUnlessBusy: null at once while another thread parses (a scenario being read), a rule
     * once it is done; every way of parsing lets go of the parser when it ends, or every later configureFailPoint would
     * wait for a thread of its own for ever.
     */
    @Test
    void parseUnlessBusyAnswersNullWhileAnotherThreadParsesAndEveryParseLetsGo() throws Exception {
        BsonDocument valid = BsonDocument.parse(rule("'alwaysOn'", "{failCommands: ['find'], errorCode: 2}"));
        CountDownLatch reading = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(1);
        CompletableFuture<Boolean> scenario = CompletableFuture.supplyAsync(() -> {
            try {
                return parser.parseTogether(() -> {
                    reading.countDown();
                    return done.await(10, TimeUnit.SECONDS);
                });
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        assertTrue(reading.await(10, TimeUnit.SECONDS));
        assertNull(parser.parseUnlessBusy("r", valid), "busy: the event loop does not wait");
        done.countDown();
        assertTrue(scenario.get(10, TimeUnit.SECONDS));
        assertEquals("r", parser.parseUnlessBusy("r", valid).id(), "free again");

        List<Runnable> parses = List.of(() -> parser.parse("a", valid), parser::restartDraws, () -> parser.checkOnly(() -> 1),
                () -> parser.parseTogether(() -> 1), () -> parser.parseUnlessBusy("b", valid),
                () -> assertThrows(RuleException.class, () -> parser.parse("", valid)));
        for (int i = 0; i < parses.size(); i++) {
            CompletableFuture.runAsync(parses.get(i)).get(10, TimeUnit.SECONDS); // on a thread of its own, as a request's
            assertEquals("r", parser.parseUnlessBusy("r", valid).id(), "parse way " + i + " let go of the parser");
        }
    }
}
