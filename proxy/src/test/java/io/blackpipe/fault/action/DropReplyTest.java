package io.blackpipe.fault.action;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.blackpipe.fault.FakeInterception;
import java.util.List;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

class DropReplyTest {
    @Test
    void forwardsTheCommandThenDropsTheReplyAndResets() {
        FakeInterception command = FakeInterception.retryableInsert();
        new DropReply().apply(command);
        assertEquals(List.of("forward(fate)"), command.calls, "the server must see (and apply) the command");

        FakeInterception.FakeReply reply = new FakeInterception.FakeReply(BsonDocument.parse("{n: 1, ok: 1.0}"));
        command.fate.decide(reply);
        assertEquals(List.of("dropAndReset"), reply.calls);
        assertEquals("dropReply", new DropReply().name());
    }
}
