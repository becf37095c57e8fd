package io.blackpipe.wire;

import static io.blackpipe.wire.WireFixtures.bson;
import static io.blackpipe.wire.WireFixtures.opMsg;
import static io.blackpipe.wire.WireFixtures.withBuf;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class CursorIdsTest {
    private static long ofGetMore(String body) {
        return withBuf(opMsg(1, 0, 0).body(bson(body)).build(), CursorIds::ofGetMore);
    }

    private static long ofReply(String body) {
        return withBuf(opMsg(2, 1, 0).body(bson(body)).build(), CursorIds::ofReply);
    }

    @Test
    void aGetMoreNamesItsCursorAsItsFirstValue() {
        assertEquals(8_000_000_123L, ofGetMore("{getMore: {$numberLong: '8000000123'}, collection: 'c', $db: 'd'}"));
        assertEquals(0, ofGetMore("{getMore: 'not a cursor id', collection: 'c', $db: 'd'}"));
    }

    @Test
    void aReplyNamesItsCursorInCursorId() {
        assertEquals(-42, ofReply("{cursor: {firstBatch: [], postBatchResumeToken: {_data: '82'}, id: {$numberLong: '-42'},"
                + " ns: 'd.c'}, ok: 1.0}"));
        assertEquals(0, ofReply("{cursor: {firstBatch: [], id: {$numberLong: '0'}, ns: 'd.c'}, ok: 1.0}"), "exhausted");
        assertEquals(0, ofReply("{ok: 0.0, code: 6}"), "no cursor");
    }
}
