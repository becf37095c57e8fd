package io.blackpipe.fault.action;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.fault.FakeInterception;
import java.util.List;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

class TruncateReplyTest {
    @Test
    void forwardsAtOnceAndCutsTheReplyAtItsBytes() {
        FakeInterception command = FakeInterception.retryableInsert();
        new TruncateReply(100).apply(command);
        assertEquals(List.of("forward(fate)"), command.calls, "forwarded at once: the command runs");
        assertTrue(command.waits.isEmpty(), "nothing is held");

        FakeInterception.FakeReply reply = new FakeInterception.FakeReply(BsonDocument.parse("{n: 1, ok: 1.0}"));
        command.fate.decide(reply);
        assertEquals(List.of("truncateAndClose"), reply.calls);
        assertEquals(100, reply.truncatedAt);
        assertEquals("truncateReply", new TruncateReply(1).name());
    }

    @Test
    void moreBytesThanAnyFrameAreTheLargestAnIntHolds() {
        FakeInterception command = FakeInterception.retryableInsert();
        new TruncateReply(Long.MAX_VALUE).apply(command);
        FakeInterception.FakeReply reply = new FakeInterception.FakeReply(BsonDocument.parse("{ok: 1.0}"));
        command.fate.decide(reply);
        assertEquals(Integer.MAX_VALUE, reply.truncatedAt, "more than the reply has: all but its last byte, as the pipe cuts it");
    }
}
