package io.blackpipe.fault.action;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.fault.FakeInterception;
import io.blackpipe.fault.Rule;
import io.blackpipe.fault.RuleException;
import io.blackpipe.fault.RuleParser;
import java.util.ArrayList;
import java.util.List;
import java.util.LongSummaryStatistics;
import java.util.stream.LongStream;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

class DelayReplyTest {
    @Test
    void forwardsAtOnceAndPassesTheReplyAfterTheDelay() {
        FakeInterception command = FakeInterception.retryableInsert();
        new DelayReply(750).apply(command);
        assertEquals(List.of("forward(fate)"), command.calls, "forwarded at once, not after a wait");
        assertTrue(command.waits.isEmpty(), "delayReplyMS holds the reply, not the command");

        FakeInterception.FakeReply reply = new FakeInterception.FakeReply(BsonDocument.parse("{n: 1, ok: 1.0}"));
        command.fate.decide(reply);
        assertEquals(List.of("passAfter"), reply.calls);
        assertEquals(750, reply.passedAfter);
        assertEquals("delayReply", new DelayReply(1).name());
    }

    @Test
    void aZeroDelayStillPassesTheReplyUnchanged() {
        FakeInterception command = FakeInterception.retryableInsert();
        new DelayReply(0).apply(command);
        FakeInterception.FakeReply reply = new FakeInterception.FakeReply(BsonDocument.parse("{ok: 1.0}"));
        command.fate.decide(reply);
        assertEquals(List.of("passAfter"), reply.calls);
        assertEquals(0, reply.passedAfter);
    }

    private static List<Long> draws(DelayReply action, int n) {
        List<Long> drawn = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            FakeInterception command = FakeInterception.retryableInsert();
            action.apply(command);
            FakeInterception.FakeReply reply = new FakeInterception.FakeReply(BsonDocument.parse("{ok: 1.0}"));
            command.fate.decide(reply);
            drawn.add(reply.passedAfter);
        }
        return drawn;
    }

    @Test
    void aJitterDrawsEachDelayEvenlyAroundTheRulesAndTheSameSeedReplaysIt() {
        List<Long> drawn = draws(new DelayReply(200, 50, 7), 2000);
        LongSummaryStatistics stats = drawn.stream().mapToLong(Long::longValue).summaryStatistics();
        assertEquals(150, stats.getMin(), "the lowest a 200 +- 50 ms delay can be is drawn in 2000 tries");
        assertEquals(250, stats.getMax());
        assertTrue(Math.abs(stats.getAverage() - 200) < 5, "evenly around the delay: mean " + stats.getAverage());
        assertEquals(drawn, draws(new DelayReply(200, 50, 7), 2000), "the same seed, the same delays");
        assertNotEquals(drawn, draws(new DelayReply(200, 50, 8), 2000));
    }

    @Test
    void aJitterWiderThanTheDelayNeverHoldsAReplyLessThanZero() {
        List<Long> drawn = draws(new DelayReply(10, 40, 1), 500);
        assertTrue(drawn.stream().allMatch(d -> d >= 0 && d <= 50), drawn::toString);
        assertTrue(drawn.contains(0L), "the draws below 0 are held for none");
    }

    @Test
    void aRulesJitterIsReadFromItsDataAndNeedsADelay() {
        RuleParser parser = new RuleParser(42);
        Rule rule = parser.parse("r", BsonDocument.parse("{configureFailPoint: 'failCommand', mode: 'alwaysOn', "
                + "data: {failCommands: ['find'], delayReplyMS: 100, delayReplyJitterMS: 30}}"));
        List<Long> drawn = draws((DelayReply) rule.action(), 200);
        assertTrue(drawn.stream().allMatch(d -> d >= 70 && d <= 130), drawn::toString);
        assertTrue(LongStream.of(drawn.stream().mapToLong(Long::longValue).toArray()).distinct().count() > 20, "they vary");
        Rule again = new RuleParser(42).parse("r", BsonDocument.parse("{configureFailPoint: 'failCommand', mode: 'alwaysOn', "
                + "data: {failCommands: ['find'], delayReplyMS: 100, delayReplyJitterMS: 30}}"));
        assertEquals(drawn, draws((DelayReply) again.action(), 200), "a proxy started with the same seed replays them");
        Rule another = new RuleParser(43).parse("r", BsonDocument.parse("{configureFailPoint: 'failCommand', mode: 'alwaysOn', "
                + "data: {failCommands: ['find'], delayReplyMS: 100, delayReplyJitterMS: 30}}"));
        assertNotEquals(drawn, draws((DelayReply) another.action(), 200), "one started with another seed does not");

        for (String data : new String[] {"{failCommands: ['find'], delayReplyJitterMS: 30}",
                "{failCommands: ['find'], delayReplyMS: 100, delayReplyJitterMS: -1}",
                "{failCommands: ['find'], delayReplyMS: 100, delayReplyJitterMS: 'x'}",
                "{failCommands: ['hello'], delayReplyMS: 100, delayReplyJitterMS: 30}"}) {
            RuleException e = assertThrows(RuleException.class, () -> parser.parse("r", BsonDocument.parse(
                    "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: " + data + "}")), data);
            assertTrue(e.field().startsWith("data.delayReply"), e.getMessage());
        }
    }

    @Test
    void aPlainDelayTakesNoSeedSoTheRulesAfterItReplayAsBefore() {
        String sometimes = "{configureFailPoint: 'failCommand', mode: {activationProbability: 0.5}, data: {failCommands: ['find'], errorCode: 2}}";
        Rule alone = new RuleParser(42).parse("p", BsonDocument.parse(sometimes));
        RuleParser afterADelay = new RuleParser(42);
        afterADelay.parse("d", BsonDocument.parse("{configureFailPoint: 'failCommand', mode: 'alwaysOn', "
                + "data: {failCommands: ['insert'], delayReplyMS: 100}}"));
        Rule after = afterADelay.parse("p", BsonDocument.parse(sometimes));
        for (int i = 0; i < 64; i++) {
            assertEquals(alone.mode().fire(), after.mode().fire(), "draw " + i);
        }
    }

    @Test
    void aJitterBeyondAnIntIsRefusedRatherThanOverflowingEveryDraw() {
        RuleException e = assertThrows(RuleException.class, () -> new RuleParser(1).parse("r", BsonDocument.parse(
                "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], delayReplyMS: 100,"
                        + " delayReplyJitterMS: 4611686018427387904}}")));
        assertEquals("data.delayReplyJitterMS: 4611686018427387904 is too large: at most 2147483647 ms", e.getMessage());
        assertEquals(List.of(Long.MAX_VALUE), draws(new DelayReply(Long.MAX_VALUE, 5, 1), 1), "no overflow near the top");
    }
}
