package io.blackpipe.fault.action;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.fault.FakeInterception;
import java.util.List;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

class TrickleReplyTest {
    @Test
    void forwardsAtOnceAndPassesTheReplyInPieces() {
        FakeInterception command = FakeInterception.retryableInsert();
        new TrickleReply(64, 250).apply(command);
        assertEquals(List.of("forward(fate)"), command.calls, "forwarded at once: the command runs");
        assertTrue(command.waits.isEmpty(), "the reply trickles, not the command");

        FakeInterception.FakeReply reply = new FakeInterception.FakeReply(BsonDocument.parse("{n: 1, ok: 1.0}"));
        command.fate.decide(reply);
        assertEquals(List.of("passInPieces"), reply.calls);
        assertArrayEquals(new long[] {64, 250}, reply.pieces);
        assertEquals("trickleReply", new TrickleReply(1, 1).name());
    }

    @Test
    void piecesLargerThanAnyFrameAreTheLargestAnIntHolds() {
        FakeInterception command = FakeInterception.retryableInsert();
        new TrickleReply(Long.MAX_VALUE, 5).apply(command);
        FakeInterception.FakeReply reply = new FakeInterception.FakeReply(BsonDocument.parse("{ok: 1.0}"));
        command.fate.decide(reply);
        assertArrayEquals(new long[] {Integer.MAX_VALUE, 5}, reply.pieces, "one piece: the whole reply");
    }
}
