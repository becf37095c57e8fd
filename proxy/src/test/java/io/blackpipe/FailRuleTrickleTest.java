package io.blackpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.UpstreamLane;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** FailRule.trickleReply: the rule it builds, and every refusal, each before anything is added. */
class FailRuleTrickleTest {
    private final RecordedRules rules = new RecordedRules();
    private final List<BsonDocument> added = rules.added;

    private FailRule fail(String... commands) {
        return rules.fail(commands);
    }

    @Test
    void itBuildsTheTwoRuleFieldsInWholeMilliseconds() {
        assertEquals("rule-1", fail("find").times(1).trickleReply(64, Duration.ofMillis(250)));
        assertEquals(BsonDocument.parse("{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['find'],"
                + " trickleReplyBytes: 64, trickleReplyIntervalMS: 250}}"), added.get(0));
    }

    @Test
    void badPiecesAndIntervalsAndASecondTerminalAreRefusedNamingWhatIsWrong() {
        Map<String, Executable> refused = Map.of(
                "trickleReply(): bytesPerPiece must be at least 1, got 0", () -> fail("find").trickleReply(0, Duration.ofMillis(5)),
                "trickleReply(): bytesPerPiece must be at least 1, got -64", () -> fail("find").trickleReply(-64, Duration.ofMillis(5)),
                "trickleReply(): the interval: required, got null", () -> fail("find").trickleReply(64, null),
                "trickleReply(): the interval must be at least 1ms, got PT0S", () -> fail("find").trickleReply(64, Duration.ZERO),
                "trickleReply(): the interval must be at least 1ms, got PT0.0005S",
                () -> fail("find").trickleReply(64, Duration.ofNanos(500_000)),
                "trickleReply(): the interval must be at least 1ms, got PT-1S", () -> fail("find").trickleReply(64, Duration.ofSeconds(-1)));
        refused.forEach((message, call) -> assertEquals(message, assertThrows(IllegalArgumentException.class, call).getMessage()));
        assertEquals(List.of(), added, "nothing was added");

        FailRule rule = fail("find");
        rule.delay(Duration.ofMillis(5));
        assertEquals("trickleReply(): this FailRule already added rule 'rule-1'; start another with fail(...) or failAll()",
                assertThrows(IllegalStateException.class, () -> rule.trickleReply(64, Duration.ofMillis(5))).getMessage());
        FailRule trickled = fail("find");
        trickled.trickleReply(64, Duration.ofMillis(5));
        assertThrows(IllegalStateException.class, () -> trickled.delay(Duration.ofMillis(5)), "a second fate");
        assertThrows(IllegalStateException.class, () -> trickled.with(Fault.DROP_REPLY));
        assertEquals(2, added.size(), "one rule per builder");
    }

    @Test
    void aProxyRefusesATrickleOnHelloAndKeepsTheRulesInForce() {
        try (BlackPipe blackPipe = BlackPipe.start(UpstreamLane.uri())) {
            String kept = blackPipe.fail("find").trickleReply(256, Duration.ofMillis(100));
            List<String> before = blackPipe.rules();
            IllegalArgumentException hello = assertThrows(IllegalArgumentException.class,
                    () -> blackPipe.fail("hello").trickleReply(64, Duration.ofMillis(5)));
            assertTrue(hello.getMessage().startsWith("data.trickleReplyBytes: hello and isMaster can be failed with"), hello.getMessage());
            IllegalArgumentException alone = assertThrows(IllegalArgumentException.class, () -> blackPipe.rule(
                    "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], trickleReplyBytes: 64}}"));
            assertEquals("data.trickleReplyIntervalMS: required with trickleReplyBytes: the pause between pieces", alone.getMessage());
            assertThrows(IllegalArgumentException.class, () -> blackPipe.fail("find").trickleReply(0, Duration.ofMillis(5)));
            assertEquals(before, blackPipe.rules(), "a refused rule changes nothing");
            assertEquals(1, before.size());
            assertTrue(before.get(0).contains("\"trickleReplyBytes\": 256") && before.get(0).contains("\"id\": \"" + kept + "\""),
                    before.get(0));
            assertEquals(0, blackPipe.faultsInjected("trickleReply"), "a fault label blackpipe counts under");
        }
    }
}
