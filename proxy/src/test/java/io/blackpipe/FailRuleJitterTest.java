package io.blackpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.util.List;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

/** FailRule.delay(delay, jitter): the rule's delayReplyMS and delayReplyJitterMS, refused in the caller's terms. */
class FailRuleJitterTest {
    private final RecordedRules rules = new RecordedRules();

    @Test
    void buildsTheDelayAndItsJitterInWholeMilliseconds() {
        rules.fail("find").times(3).delay(Duration.ofMillis(200), Duration.ofMillis(50));
        assertEquals(List.of(BsonDocument.parse("{configureFailPoint: 'failCommand', mode: {times: 3}, data: {failCommands: ['find'],"
                + " delayReplyMS: 200, delayReplyJitterMS: 50}}")), rules.added);
    }

    @Test
    void aJitterThatWouldBeLostOrNegativeIsRefusedAndNothingIsAdded() {
        assertEquals("delay(): the jitter must be 0 or at least 1ms, got PT0.0004S", assertThrows(IllegalArgumentException.class,
                () -> rules.fail("find").delay(Duration.ofMillis(200), Duration.ofNanos(400_000))).getMessage());
        assertThrows(IllegalArgumentException.class, () -> rules.fail("find").delay(Duration.ofMillis(200), Duration.ofMillis(-5)));
        assertEquals("delay(): the jitter: required, got null", assertThrows(IllegalArgumentException.class,
                () -> rules.fail("find").delay(Duration.ofMillis(200), null)).getMessage());
        assertThrows(IllegalArgumentException.class, () -> rules.fail("find").delay(Duration.ZERO, Duration.ofMillis(5)),
                "the delay itself is at least 1 ms, as without a jitter");
        assertEquals(List.of(), rules.added);
        rules.fail("find").delay(Duration.ofMillis(200), Duration.ZERO);
        assertEquals(1, rules.added.size(), "a zero jitter is a plain delay");
    }
}
