package io.blackpipe.wire;

import static io.blackpipe.wire.WireFixtures.assertMalformed;
import static io.blackpipe.wire.WireFixtures.bson;
import static io.blackpipe.wire.WireFixtures.message;
import static io.blackpipe.wire.WireFixtures.opReply;
import static io.blackpipe.wire.WireFixtures.useBuf;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class OpReplyTest {
    private static final byte[] HELLO = bson("{ismaster: true, maxWireVersion: 21, ok: 1.0}");
    private static final byte[] OTHER = bson("{x: 'second'}");
    /** header + responseFlags + cursorID + startingFrom + numberReturned */
    private static final int DOCS_AT = 16 + 4 + 8 + 4 + 4;

    @Test
    void parsesFieldsOfASingleDocumentReply() {
        byte[] frame = opReply(100, 99, 8, 0x1122334455667788L, 3, 1, HELLO);
        useBuf(frame, buf -> {
            OpReply reply = OpReply.parse(buf);
            assertEquals(8, reply.responseFlags());
            assertEquals(0x1122334455667788L, reply.cursorId());
            assertEquals(3, reply.startingFrom());
            assertEquals(1, reply.numberReturned());
            assertEquals(DOCS_AT, reply.firstDocumentOffset());
            assertEquals(frame.length, reply.end());
        });
    }

    @Test
    void parsesSeveralAndZeroDocuments() {
        useBuf(opReply(1, 0, 0, 0, 0, 2, HELLO, OTHER), buf -> assertEquals(2, OpReply.parse(buf).numberReturned()));
        byte[] empty = opReply(1, 0, 0, 0, 0, 0);
        useBuf(empty, buf -> {
            OpReply reply = OpReply.parse(buf);
            assertEquals(0, reply.numberReturned());
            assertEquals(DOCS_AT, reply.end());
        });
    }

    @Test
    void parsesAtANonZeroReaderIndex() {
        byte[] frame = opReply(1, 0, 0, 0, 0, 1, HELLO);
        ByteBuf buf = ByteBufAllocator.DEFAULT.buffer();
        try {
            buf.writeBytes(new byte[5]).writeBytes(frame).writeBytes(new byte[3]).readerIndex(5);
            OpReply reply = OpReply.parse(buf);
            assertEquals(5 + DOCS_AT, reply.firstDocumentOffset());
            assertEquals(5 + frame.length, reply.end());
        } finally {
            ReferenceCountUtil.release(buf);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 2, -1})
    void numberReturnedNotMatchingTheDocumentsIsRejected(int numberReturned) {
        byte[] frame = opReply(1, 0, 0, 0, 0, numberReturned, HELLO);
        assertMalformed(frame, OpReply::parse, numberReturned == 2 ? "truncated" : "numberReturned " + numberReturned + " does not match its documents");
    }

    @Test
    void hugeNumberReturnedIsRejectedWithoutReadingPastTheFrame() {
        byte[] frame = opReply(1, 0, 0, 0, 0, Integer.MAX_VALUE, HELLO);
        assertMalformed(frame, OpReply::parse, "truncated");
    }

    @Test
    void trailingBytesAfterTheDocumentsAreRejected() {
        byte[] frame = message(1, 0, WireFixtures.OP_REPLY,
                WireFixtures.concat(WireFixtures.range(opReply(1, 0, 0, 0, 0, 1, HELLO), 16, DOCS_AT + HELLO.length),
                        new byte[] {0, 0, 0}));
        assertMalformed(frame, OpReply::parse, "numberReturned 1 does not match its documents");
    }

    @Test
    void lyingDocumentLengthIsRejected() {
        byte[] frame = opReply(1, 0, 0, 0, 0, 1, HELLO);
        assertMalformed(WireFixtures.patchLe32(frame, DOCS_AT, HELLO.length + 1), OpReply::parse, "does not fit");
    }

    @Test
    void tooShortForTheReplyFieldsIsRejected() {
        byte[] frame = message(1, 0, WireFixtures.OP_REPLY, new byte[19]);
        assertMalformed(frame, OpReply::parse, "OP_REPLY too short");
    }
}
