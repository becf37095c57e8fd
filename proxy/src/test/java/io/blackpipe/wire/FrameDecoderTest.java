package io.blackpipe.wire;

import static io.blackpipe.wire.WireFixtures.OP_COMPRESSED;
import static io.blackpipe.wire.WireFixtures.OP_MSG;
import static io.blackpipe.wire.WireFixtures.OP_QUERY;
import static io.blackpipe.wire.WireFixtures.buf;
import static io.blackpipe.wire.WireFixtures.bytesOf;
import static io.blackpipe.wire.WireFixtures.concat;
import static io.blackpipe.wire.WireFixtures.header;
import static io.blackpipe.wire.WireFixtures.message;
import static io.blackpipe.wire.WireFixtures.opMsg;
import static io.blackpipe.wire.WireFixtures.opQuery;
import static io.blackpipe.wire.WireFixtures.opReply;
import static io.blackpipe.wire.WireFixtures.range;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class FrameDecoderTest {
    private final List<Object> userEvents = new ArrayList<>();

    private static final byte[] PING = opMsg(1, 0, 0).body("{ping: 1, $db: 'admin'}").build();
    private static final byte[] INSERT = opMsg(2, 0, 0)
            .body("{insert: 'coll', $db: 'shop'}")
            .sequence("documents", WireFixtures.bson("{_id: 1}"), WireFixtures.bson("{_id: 2, s: 'two'}"))
            .build();
    private static final byte[] LEGACY_HELLO = opQuery(3, 0, "admin.$cmd", 0, -1,
            WireFixtures.bson("{isMaster: 1, helloOk: true}"), null);
    private static final byte[] LEGACY_REPLY = opReply(4, 3, 8, 0L, 0, 1, WireFixtures.bson("{ismaster: true, ok: 1.0}"));
    private static final byte[] COMPRESSED = message(5, 0, OP_COMPRESSED,
            concat(WireFixtures.le32(OP_MSG), WireFixtures.le32(30), new byte[] {0}, new byte[10]));

    private EmbeddedChannel channel(FrameDecoder decoder) {
        return new EmbeddedChannel(decoder, new ChannelInboundHandlerAdapter() {
            @Override
            public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                userEvents.add(evt);
                ctx.fireUserEventTriggered(evt);
            }
        });
    }

    /** Reads one frame, checks it is exactly {@code expected}, and releases it. */
    private static void assertNextFrame(EmbeddedChannel channel, byte[] expected) {
        Object read = channel.readInbound();
        assertInstanceOf(ByteBuf.class, read, "a frame was expected");
        ByteBuf frame = (ByteBuf) read;
        try {
            assertEquals(expected.length, frame.readableBytes());
            assertArrayEquals(expected, bytesOf(frame));
        } finally {
            ReferenceCountUtil.release(frame);
        }
    }

    private static MalformedMessageException assertRejected(EmbeddedChannel channel, byte[] input, String reason) {
        DecoderException e = assertThrows(DecoderException.class, () -> channel.writeInbound(buf(input)));
        MalformedMessageException cause = assertInstanceOf(MalformedMessageException.class, e.getCause());
        assertTrue(cause.getMessage().contains(reason), () -> "expected '" + reason + "' in: " + cause.getMessage());
        return cause;
    }

    @Test
    void frameSplitAcrossSeveralWritesComesOutWhole() {
        EmbeddedChannel channel = channel(new FrameDecoder());
        try {
            assertFalse(channel.writeInbound(buf(range(INSERT, 0, 3))), "3 bytes are not even a length");
            assertFalse(channel.writeInbound(buf(range(INSERT, 3, 15))), "15 bytes are not a header");
            assertFalse(channel.writeInbound(buf(range(INSERT, 15, 40))), "header but not the whole body");
            assertTrue(channel.writeInbound(buf(range(INSERT, 40, INSERT.length))));
            assertNextFrame(channel, INSERT);
            assertNull(channel.readInbound());
        } finally {
            channel.finishAndReleaseAll();
        }
        assertTrue(userEvents.isEmpty(), "a close at a frame boundary is not a truncation: " + userEvents);
    }

    @Test
    void aReadHoldingExactlyOneFrameIsPassedOnAsItselfWithoutASlice() {
        EmbeddedChannel channel = channel(new FrameDecoder());
        try {
            ByteBuf read = buf(INSERT);
            assertTrue(channel.writeInbound(read));
            Object out = channel.readInbound();
            assertTrue(out == read, "the received buffer itself, not a slice: " + out);
            assertEquals(1, read.refCnt(), "ownership passes on; nothing retained or released");
            assertArrayEquals(INSERT, bytesOf(read));
            read.release();
            // a buffer completing a cumulated frame goes through the decoder; the next whole one is passed again
            assertFalse(channel.writeInbound(buf(range(PING, 0, 20))));
            assertTrue(channel.writeInbound(buf(range(PING, 20, PING.length))));
            assertNextFrame(channel, PING);
            ByteBuf next = buf(PING);
            assertTrue(channel.writeInbound(next));
            assertTrue(channel.readInbound() == next, "nothing left buffered: passed as itself again");
            next.release();
            assertNull(channel.readInbound());
        } finally {
            channel.finishAndReleaseAll();
        }
    }

    @Test
    void frameFedOneByteAtATimeComesOutOnceWhole() {
        EmbeddedChannel channel = channel(new FrameDecoder());
        try {
            for (int i = 0; i < PING.length - 1; i++) {
                assertFalse(channel.writeInbound(buf(range(PING, i, i + 1))), "no frame before byte " + (i + 1));
            }
            assertTrue(channel.writeInbound(buf(range(PING, PING.length - 1, PING.length))));
            assertNextFrame(channel, PING);
            assertNull(channel.readInbound());
        } finally {
            channel.finishAndReleaseAll();
        }
    }

    @Test
    void severalFramesInOneWriteComeOutAsExactSlicesInOrder() {
        EmbeddedChannel channel = channel(new FrameDecoder());
        try {
            assertTrue(channel.writeInbound(buf(concat(PING, INSERT, LEGACY_HELLO, LEGACY_REPLY, COMPRESSED))));
            assertNextFrame(channel, PING);
            assertNextFrame(channel, INSERT);
            assertNextFrame(channel, LEGACY_HELLO);
            assertNextFrame(channel, LEGACY_REPLY);
            assertNextFrame(channel, COMPRESSED);
            assertNull(channel.readInbound());
        } finally {
            channel.finishAndReleaseAll();
        }
    }

    @Test
    void wholeFramesAreEmittedAndThePartialRestWaitsForMore() {
        EmbeddedChannel channel = channel(new FrameDecoder());
        byte[] stream = concat(PING, INSERT, PING);
        int cut = PING.length + 10; // inside INSERT's header
        int cut2 = PING.length + INSERT.length + 20; // inside the second PING's body
        try {
            assertTrue(channel.writeInbound(buf(range(stream, 0, cut))));
            assertNextFrame(channel, PING);
            assertNull(channel.readInbound());
            assertTrue(channel.writeInbound(buf(range(stream, cut, cut2))));
            assertNextFrame(channel, INSERT);
            assertNull(channel.readInbound());
            assertTrue(channel.writeInbound(buf(range(stream, cut2, stream.length))));
            assertNextFrame(channel, PING);
            assertNull(channel.readInbound());
        } finally {
            channel.finishAndReleaseAll();
        }
        assertTrue(userEvents.isEmpty());
    }

    @Test
    void emittedFrameIsIndependentOfLaterInput() {
        EmbeddedChannel channel = channel(new FrameDecoder());
        try {
            channel.writeInbound(buf(concat(PING, range(INSERT, 0, 20))));
            ByteBuf first = channel.readInbound();
            try {
                channel.writeInbound(buf(range(INSERT, 20, INSERT.length)));
                // the slice still shows exactly the first frame after more bytes were accumulated
                assertArrayEquals(PING, bytesOf(first));
            } finally {
                ReferenceCountUtil.release(first);
            }
            assertNextFrame(channel, INSERT);
        } finally {
            channel.finishAndReleaseAll();
        }
    }

    @Test
    void smallestLegalFrameIsJustAHeader() {
        EmbeddedChannel channel = channel(new FrameDecoder());
        byte[] headerOnly = header(16, 9, 0, OP_MSG);
        try {
            assertTrue(channel.writeInbound(buf(headerOnly)));
            assertNextFrame(channel, headerOnly);
        } finally {
            channel.finishAndReleaseAll();
        }
    }

    @Test
    void smallestLegalFrameArrivingInPiecesIsFramedToo() {
        EmbeddedChannel channel = channel(new FrameDecoder());
        byte[] headerOnly = header(16, 9, 0, OP_MSG);
        try {
            assertFalse(channel.writeInbound(buf(range(headerOnly, 0, 10))));
            assertTrue(channel.writeInbound(buf(range(headerOnly, 10, 16))));
            assertNextFrame(channel, headerOnly);
        } finally {
            channel.finishAndReleaseAll();
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 4, 15})
    void lengthShorterThanTheHeaderIsRejected(int length) {
        EmbeddedChannel channel = channel(new FrameDecoder());
        try {
            MalformedMessageException e = assertRejected(channel, header(length, 1, 0, OP_MSG),
                    "shorter than the 16-byte header");
            assertTrue(e.getMessage().contains("message length " + length + " "), e.getMessage());
        } finally {
            channel.finishAndReleaseAll();
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {-1, -16, Integer.MIN_VALUE})
    void negativeLengthIsRejected(int length) {
        EmbeddedChannel channel = channel(new FrameDecoder());
        try {
            MalformedMessageException e = assertRejected(channel, header(length, 1, 0, OP_MSG),
                    "shorter than the 16-byte header");
            assertTrue(e.getMessage().contains(Integer.toString(length)), e.getMessage());
        } finally {
            channel.finishAndReleaseAll();
        }
    }

    @Test
    void lengthOverTheServerLimitIsRejectedFromTheHeaderAlone() {
        EmbeddedChannel channel = channel(new FrameDecoder());
        try {
            assertRejected(channel, header(48_000_001, 1, 0, OP_MSG),
                    "message length 48000001 exceeds the limit of 48000000 bytes");
        } finally {
            channel.finishAndReleaseAll();
        }
    }

    @Test
    void lengthAtTheServerLimitIsAcceptedAndWaitedFor() {
        EmbeddedChannel channel = channel(new FrameDecoder());
        try {
            assertFalse(channel.writeInbound(buf(header(48_000_000, 1, 0, OP_MSG))));
            assertNull(channel.readInbound());
        } finally {
            channel.finishAndReleaseAll();
        }
        assertEquals(List.of(new FrameDecoder.TruncatedFrame(48_000_000 - 16)), userEvents);
    }

    @Test
    void customLimitIsEnforcedAtItsBoundary() {
        EmbeddedChannel channel = channel(new FrameDecoder(1024));
        byte[] atLimit = concat(header(1024, 1, 0, OP_MSG), new byte[1024 - 16]);
        try {
            assertTrue(channel.writeInbound(buf(atLimit)));
            assertNextFrame(channel, atLimit);
            assertRejected(channel, header(1025, 2, 0, OP_MSG), "message length 1025 exceeds the limit of 1024 bytes");
        } finally {
            channel.finishAndReleaseAll();
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {2003, 2010, 2011, 0, 9999, -2013})
    void unknownOpcodeIsRejected(int opCode) {
        EmbeddedChannel channel = channel(new FrameDecoder());
        try {
            assertRejected(channel, concat(header(20, 1, 0, opCode), new byte[4]), "unknown opcode " + opCode);
        } finally {
            channel.finishAndReleaseAll();
        }
    }

    @Test
    void badHeaderIsJudgedOnlyOnceAllSixteenBytesArrived() {
        EmbeddedChannel channel = channel(new FrameDecoder());
        byte[] bad = header(20, 1, 0, 2010);
        try {
            assertFalse(channel.writeInbound(buf(range(bad, 0, 15))));
            assertRejected(channel, range(bad, 15, 16), "unknown opcode 2010");
        } finally {
            channel.finishAndReleaseAll();
        }
    }

    @Test
    void framesBeforeABadHeaderAreStillDelivered() {
        EmbeddedChannel channel = channel(new FrameDecoder());
        try {
            assertRejected(channel, concat(PING, header(20, 7, 0, 9999)), "unknown opcode 9999");
            assertNextFrame(channel, PING);
            assertNull(channel.readInbound());
        } finally {
            channel.finishAndReleaseAll();
        }
    }

    @Test
    void afterABadHeaderTheStreamIsDeadAndClosingDoesNotRaiseAgain() {
        EmbeddedChannel channel = channel(new FrameDecoder());
        try {
            assertRejected(channel, header(-5, 1, 0, OP_MSG), "message length -5");
            // bytes that follow cannot be framed any more (there is no way to resynchronise): none come out
            assertFalse(channel.writeInbound(buf(PING)));
            assertNull(channel.readInbound());
        } finally {
            // the connection handler closes the channel after the error; that close must not raise a second time
            assertFalse(channel.finishAndReleaseAll());
        }
        assertTrue(userEvents.isEmpty(), "a rejected stream is not reported as truncated: " + userEvents);
    }

    @Test
    void closeInTheMiddleOfABodyReportsTheMissingByteCount() {
        EmbeddedChannel channel = channel(new FrameDecoder());
        try {
            assertTrue(channel.writeInbound(buf(concat(PING, range(INSERT, 0, 30)))));
            assertNextFrame(channel, PING);
        } finally {
            assertFalse(channel.finishAndReleaseAll(), "the partial frame is not emitted");
        }
        assertEquals(List.of(new FrameDecoder.TruncatedFrame(INSERT.length - 30)), userEvents);
    }

    /**
     * A message cut after its body came whole: the event carries that body as an OP_MSG of its own (length mended, no
     * checksum, no sequences), from which the attempt a driver sent is counted; cut before, none.
     */
    @Test
    void closeAfterTheBodyCarriesTheCommandItBeganWith() {
        byte[] body = opMsg(2, 0, 0).body("{insert: 'coll', $db: 'shop'}").build();
        byte[] checksummed = opMsg(2, 0, OpMsg.MORE_TO_COME | OpMsg.CHECKSUM_PRESENT).body("{insert: 'coll', $db: 'shop'}")
                .sequence("documents", WireFixtures.bson("{_id: 1}")).build();
        byte[] headWithoutItsChecksum = opMsg(2, 0, OpMsg.MORE_TO_COME).body("{insert: 'coll', $db: 'shop'}").build();
        for (byte[][] cutAndHead : new byte[][][] {
                {range(INSERT, 0, body.length + 3), body}, // into the sequence's header
                {range(INSERT, 0, body.length), body}, // right after the body
                {range(INSERT, 0, body.length - 1), null}, // a byte short of it
                {range(checksummed, 0, checksummed.length - 2), headWithoutItsChecksum}, // the checksum itself cut
                {range(LEGACY_HELLO, 0, LEGACY_HELLO.length - 1), null}}) { // not an OP_MSG
            byte[] cut = cutAndHead[0];
            int missing = java.nio.ByteBuffer.wrap(cut, 0, 4).order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt() - cut.length;
            for (boolean requests : new boolean[] {true, false}) {
                userEvents.clear();
                EmbeddedChannel channel = channel(requests ? FrameDecoder.forRequests() : new FrameDecoder());
                try {
                    channel.writeInbound(buf(cut));
                } finally {
                    channel.finishAndReleaseAll();
                }
                // a member's cut reply hands on nothing: nobody counts it, and its body may be large
                assertEquals(List.of(new FrameDecoder.TruncatedFrame(missing, requests ? cutAndHead[1] : null)), userEvents);
            }
        }
    }

    @Test
    void closeInTheMiddleOfTheHeaderReportsTheMissingByteCountFromTheLength() {
        EmbeddedChannel channel = channel(new FrameDecoder());
        try {
            assertFalse(channel.writeInbound(buf(range(INSERT, 0, 9))));
        } finally {
            channel.finishAndReleaseAll();
        }
        assertEquals(List.of(new FrameDecoder.TruncatedFrame(INSERT.length - 9)), userEvents);
    }

    @Test
    void closeRightAfterTheLengthReportsTheMissingByteCount() {
        EmbeddedChannel channel = channel(new FrameDecoder());
        try {
            assertFalse(channel.writeInbound(buf(range(INSERT, 0, 4))));
        } finally {
            channel.finishAndReleaseAll();
        }
        assertEquals(List.of(new FrameDecoder.TruncatedFrame(INSERT.length - 4)), userEvents);
    }

    @Test
    void closeBeforeTheLengthIsCompleteReportsAnUnknownCount() {
        EmbeddedChannel channel = channel(new FrameDecoder());
        try {
            assertFalse(channel.writeInbound(buf(range(INSERT, 0, 3))));
        } finally {
            channel.finishAndReleaseAll();
        }
        assertEquals(List.of(new FrameDecoder.TruncatedFrame(-1)), userEvents);
    }

    @Test
    void cleanCloseAfterWholeFramesReportsNothing() {
        EmbeddedChannel channel = channel(new FrameDecoder());
        try {
            assertTrue(channel.writeInbound(buf(concat(PING, LEGACY_HELLO))));
            assertNextFrame(channel, PING);
            assertNextFrame(channel, LEGACY_HELLO);
        } finally {
            assertFalse(channel.finishAndReleaseAll());
        }
        assertTrue(userEvents.isEmpty(), userEvents.toString());
    }

    @Test
    void opcodeNamesAndKnownSet() {
        assertTrue(OpCode.isKnown(OP_MSG));
        assertTrue(OpCode.isKnown(OP_QUERY));
        assertTrue(OpCode.isKnown(OP_COMPRESSED));
        assertTrue(OpCode.isKnown(WireFixtures.OP_REPLY));
        for (int legacy : new int[] {2001, 2002, 2005, 2006, 2007}) { // servers before 5.1 take them: passed on
            assertTrue(OpCode.isKnown(legacy));
        }
        assertFalse(OpCode.isKnown(2003));
        assertEquals("OP_MSG", OpCode.name(2013));
        assertEquals("OP_QUERY", OpCode.name(2004));
        assertEquals("OP_REPLY", OpCode.name(1));
        assertEquals("OP_COMPRESSED", OpCode.name(2012));
        assertEquals("OP_GET_MORE", OpCode.name(2005));
        assertEquals("opcode 2003", OpCode.name(2003));
    }
}
