package io.blackpipe.wire;

import static io.blackpipe.wire.WireFixtures.bson;
import static io.blackpipe.wire.WireFixtures.bytesOf;
import static io.blackpipe.wire.WireFixtures.crc32c;
import static io.blackpipe.wire.WireFixtures.opMsg;
import static io.blackpipe.wire.WireFixtures.opQuery;
import static io.blackpipe.wire.WireFixtures.opReply;
import static io.blackpipe.wire.WireFixtures.readLe32;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.ReferenceCountUtil;
import java.util.List;
import java.util.function.Function;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

class MessagesTest {
    private static final ByteBufAllocator ALLOC = ByteBufAllocator.DEFAULT;
    private static final BsonDocument OLD_BODY = BsonDocument.parse("{insert: 'orders', ordered: true, $db: 'shop'}");
    private static final BsonDocument NEW_BODY = BsonDocument.parse(
            "{insert: 'orders', ordered: false, comment: 'rewritten by a test with a longer body', $db: 'shop'}");
    private static final BsonDocument SHORT_BODY = BsonDocument.parse("{ping: 1}");
    private static final byte[] D1 = bson("{_id: 1}");
    private static final byte[] D2 = bson("{_id: 2, v: 'two'}");
    private static final byte[] D3 = bson("{_id: 3, nested: {a: [1, 2, 3]}}");

    /** Runs a builder, returns the bytes it produced, and releases its buffer. */
    private static byte[] built(Function<ByteBufAllocator, ByteBuf> builder) {
        ByteBuf out = builder.apply(ALLOC);
        try {
            assertEquals(0, out.readerIndex(), "a built message starts at index 0");
            return bytesOf(out);
        } finally {
            ReferenceCountUtil.release(out);
        }
    }

    private static void assertChecksumValid(byte[] message) {
        assertEquals(message.length, readLe32(message, 0), "messageLength counts the checksum");
        assertEquals(crc32c(message, 0, message.length - 4), readLe32(message, message.length - 4),
                "CRC-32C (java.util.zip.CRC32C) over everything before the checksum");
    }

    @Test
    void opMsgWithoutChecksumMatchesAHandBuiltFrame() {
        byte[] actual = built(a -> Messages.opMsg(a, 12, 34, OpMsg.MORE_TO_COME, OLD_BODY));
        byte[] expected = opMsg(12, 34, OpMsg.MORE_TO_COME).body(bson(OLD_BODY)).build();
        assertArrayEquals(expected, actual);
        assertEquals(actual.length, readLe32(actual, 0));
    }

    @Test
    void opMsgWithChecksumAppendsAnIndependentlyVerifiedCrc() {
        int flags = OpMsg.CHECKSUM_PRESENT | OpMsg.EXHAUST_ALLOWED;
        byte[] actual = built(a -> Messages.opMsg(a, -5, 77, flags, OLD_BODY));
        byte[] expected = opMsg(-5, 77, flags).body(bson(OLD_BODY)).build();
        assertArrayEquals(expected, actual);
        assertChecksumValid(actual);
    }

    @Test
    void builtOpMsgIsAcceptedByTheParser() {
        byte[] actual = built(a -> Messages.opMsg(a, 1, 2, OpMsg.CHECKSUM_PRESENT, OLD_BODY));
        WireFixtures.useBuf(actual, buf -> assertEquals(OLD_BODY, BsonIo.decode(buf, OpMsg.parse(buf).bodyOffset(), actual.length - 4)));
    }

    private static void assertBodyReplaced(int flags, BsonDocument replacement, int readerOffset) {
        byte[] source = opMsg(555, 444, flags)
                .sequence("updates", D1)
                .body(bson(OLD_BODY))
                .sequence("documents", D2, D3)
                .build();
        byte[] expected = opMsg(555, 444, flags)
                .sequence("updates", D1)
                .body(bson(replacement))
                .sequence("documents", D2, D3)
                .build();
        ByteBuf frame = ALLOC.buffer();
        try {
            frame.writeBytes(new byte[readerOffset]).writeBytes(source).writeBytes(new byte[] {1, 2, 3});
            frame.readerIndex(readerOffset);
            OpMsg msg = OpMsg.parse(frame);
            byte[] actual = built(a -> Messages.opMsgWithBody(a, frame, msg, replacement));
            assertArrayEquals(expected, actual);
            if ((flags & OpMsg.CHECKSUM_PRESENT) != 0) {
                assertChecksumValid(actual);
            }
            assertEquals(1, frame.refCnt(), "the source is not released by the builder");
            assertEquals(readerOffset, frame.readerIndex(), "the source is not consumed");
            byte[] after = new byte[source.length];
            frame.getBytes(readerOffset, after);
            assertArrayEquals(source, after, "the source is not modified");
        } finally {
            ReferenceCountUtil.release(frame);
        }
    }

    @Test
    void opMsgWithBodyKeepsIdsFlagsAndSequencesAndRecomputesTheChecksum() {
        assertBodyReplaced(OpMsg.CHECKSUM_PRESENT | OpMsg.MORE_TO_COME | OpMsg.EXHAUST_ALLOWED, NEW_BODY, 0);
    }

    @Test
    void opMsgWithBodyCanShrinkTheBody() {
        assertBodyReplaced(OpMsg.CHECKSUM_PRESENT, SHORT_BODY, 0);
    }

    @Test
    void opMsgWithBodyWithoutChecksum() {
        assertBodyReplaced(OpMsg.EXHAUST_ALLOWED, NEW_BODY, 0);
    }

    @Test
    void opMsgWithBodyOfAFrameAtANonZeroReaderIndex() {
        assertBodyReplaced(OpMsg.CHECKSUM_PRESENT, NEW_BODY, 9);
        assertBodyReplaced(0, SHORT_BODY, 13);
    }

    @Test
    void opReplyMatchesAHandBuiltFrame() {
        BsonDocument first = BsonDocument.parse("{ismaster: true, ok: 1.0}");
        BsonDocument second = BsonDocument.parse("{x: 'y'}");
        byte[] actual = built(a -> Messages.opReply(a, 7, 6, 8, 99L, 2, List.of(first, second)));
        assertArrayEquals(opReply(7, 6, 8, 99L, 2, 2, bson(first), bson(second)), actual);
        byte[] empty = built(a -> Messages.opReply(a, 1, 2, 0, 0L, 0, List.of()));
        assertArrayEquals(opReply(1, 2, 0, 0L, 0, 0), empty);
    }

    @Test
    void opReplyWithDocumentsKeepsIdsAndReplyFields() {
        byte[] source = opReply(31, 30, 8, 1234L, 5, 1, bson("{ismaster: true, hosts: ['a:1']}"));
        BsonDocument replacement = BsonDocument.parse("{ismaster: true, hosts: ['proxy:40000'], ok: 1.0}");
        WireFixtures.useBuf(source, frame -> {
            OpReply reply = OpReply.parse(frame);
            byte[] actual = built(a -> Messages.opReplyWithDocuments(a, frame, reply, List.of(replacement)));
            assertArrayEquals(opReply(31, 30, 8, 1234L, 5, 1, bson(replacement)), actual);
        });
    }

    @Test
    void opQueryWithQueryKeepsTheReturnFieldsSelector() {
        byte[] selector = bson("{ismaster: 1, hosts: 1}");
        byte[] source = opQuery(9, 4, "admin.$cmd", 1, -1, bson("{isMaster: 1, compression: ['zlib']}"), selector);
        BsonDocument replacement = BsonDocument.parse("{isMaster: 1}");
        WireFixtures.useBuf(source, frame -> {
            OpQuery query = OpQuery.parse(frame);
            byte[] actual = built(a -> Messages.opQueryWithQuery(a, frame, query, replacement));
            assertArrayEquals(opQuery(9, 4, "admin.$cmd", 1, -1, bson(replacement), selector), actual);
        });
    }

    @Test
    void opQueryWithQueryOfAFrameAtANonZeroReaderIndex() {
        byte[] selector = bson("{ismaster: 1}");
        byte[] source = opQuery(11, 0, "admin.$cmd", 0, -1, bson("{isMaster: 1}"), selector);
        BsonDocument replacement = BsonDocument.parse("{isMaster: 1, helloOk: true}");
        ByteBuf frame = ALLOC.buffer();
        try {
            frame.writeBytes(new byte[7]).writeBytes(source).writeBytes(new byte[] {9, 9});
            frame.readerIndex(7);
            OpQuery query = OpQuery.parse(frame);
            byte[] actual = built(a -> Messages.opQueryWithQuery(a, frame, query, replacement));
            assertArrayEquals(opQuery(11, 0, "admin.$cmd", 0, -1, bson(replacement), selector), actual,
                    "the copy starts at the frame, not at index 0 of its buffer");
            assertEquals(7, frame.readerIndex(), "the source is not consumed");
        } finally {
            ReferenceCountUtil.release(frame);
        }
    }

    @Test
    void opQueryWithQueryWithoutSelector() {
        byte[] source = opQuery(10, 0, "admin.$cmd", 0, -1, bson("{isMaster: 1}"), null);
        BsonDocument replacement = BsonDocument.parse("{isMaster: 1, helloOk: true, longer: 'a longer query document'}");
        WireFixtures.useBuf(source, frame -> {
            OpQuery query = OpQuery.parse(frame);
            byte[] actual = built(a -> Messages.opQueryWithQuery(a, frame, query, replacement));
            assertArrayEquals(opQuery(10, 0, "admin.$cmd", 0, -1, bson(replacement), null), actual);
        });
    }
}
