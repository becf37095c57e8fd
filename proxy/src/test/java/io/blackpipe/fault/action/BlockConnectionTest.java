package io.blackpipe.fault.action;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.fault.ErrorReplies;
import io.blackpipe.fault.FakeInterception;
import java.util.List;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

class BlockConnectionTest {
    @Test
    void withoutAnInnerActionWaitsThenForwards() {
        FakeInterception command = FakeInterception.retryableInsert();
        BlockConnection block = new BlockConnection(300, null);
        block.apply(command);
        assertEquals(List.of(300L), command.waits);
        assertTrue(command.calls.isEmpty(), "nothing happens to the command before the wait is over");
        command.elapse();
        assertEquals(List.of("forward"), command.calls);
        assertEquals("blockConnection", block.name());
    }

    @Test
    void withAnErrorWaitsThenAnswersWithIt() {
        FakeInterception command = FakeInterception.retryableInsert();
        BlockConnection block = new BlockConnection(300, new ErrorReply(13, null, null, null, ErrorReplies.TopologyVersionMode.NEWER));
        block.apply(command);
        assertTrue(command.calls.isEmpty());
        command.elapse();
        assertEquals(List.of("answer"), command.calls);
        assertEquals(13, command.answered.getInt32("code").getValue());
        assertEquals("errorReply", block.name(), "counted under the inner fault's name");
    }

    @Test
    void withCloseWaitsThenCloses() {
        FakeInterception command = FakeInterception.retryableInsert();
        new BlockConnection(50, new CloseConnection()).apply(command);
        assertEquals(List.of(50L), command.waits);
        assertTrue(command.calls.isEmpty());
        command.elapse();
        assertEquals(List.of("close"), command.calls);
    }

    @Test
    void withADelayedReplyWaitsThenForwardsWithTheDelay() {
        FakeInterception command = FakeInterception.retryableInsert();
        new BlockConnection(100, new DelayReply(200)).apply(command);
        command.elapse();
        assertEquals(List.of("forward(fate)"), command.calls);
        FakeInterception.FakeReply reply = new FakeInterception.FakeReply(BsonDocument.parse("{ok: 1.0}"));
        command.fate.decide(reply);
        assertEquals(200, reply.passedAfter);
    }
}
