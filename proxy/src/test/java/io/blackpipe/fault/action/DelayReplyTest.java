package io.blackpipe.fault.action;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.fault.FakeInterception;
import java.util.List;
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
}
