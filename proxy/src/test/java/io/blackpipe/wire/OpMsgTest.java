package io.blackpipe.wire;

import static io.blackpipe.wire.WireFixtures.assertMalformed;
import static io.blackpipe.wire.WireFixtures.bson;
import static io.blackpipe.wire.WireFixtures.bytes;
import static io.blackpipe.wire.WireFixtures.concat;
import static io.blackpipe.wire.WireFixtures.cstring;
import static io.blackpipe.wire.WireFixtures.le32;
import static io.blackpipe.wire.WireFixtures.opMsg;
import static io.blackpipe.wire.WireFixtures.patchByte;
import static io.blackpipe.wire.WireFixtures.patchLe32;
import static io.blackpipe.wire.WireFixtures.readLe32;
import static io.blackpipe.wire.WireFixtures.useBuf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.ReferenceCountUtil;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class OpMsgTest {
    private static final byte[] PING_BODY = bson("{ping: 1, $db: 'admin'}");
    private static final byte[] INSERT_BODY = bson("{insert: 'orders', ordered: true, $db: 'shop'}");
    private static final byte[] DOC1 = bson("{_id: 1, item: 'a'}");
    private static final byte[] DOC2 = bson("{_id: 2, item: 'bb', qty: {$numberLong: '5'}}");

    /** Offset of the first section's kind byte: header + flagBits. */
    private static final int FIRST_SECTION = 20;

    private static int sequenceSize(String identifier, byte[]... docs) {
        return 4 + cstring(identifier).length + concat(docs).length;
    }

    @Test
    void bodyOnly() {
        byte[] frame = opMsg(7, 0, 0).body(PING_BODY).build();
        useBuf(frame, buf -> {
            OpMsg msg = OpMsg.parse(buf);
            assertEquals(0, msg.flags());
            assertFalse(msg.checksumPresent());
            assertFalse(msg.moreToCome());
            assertFalse(msg.exhaustAllowed());
            assertEquals(FIRST_SECTION + 1, msg.bodyOffset());
            assertEquals(frame.length, msg.sectionsEnd());
            assertEquals(PING_BODY.length, buf.getIntLE(msg.bodyOffset()));
            BsonCursor body = msg.body(buf);
            assertTrue(body.next());
            assertEquals("ping", body.name());
            assertTrue(body.next());
            assertEquals("$db", body.name());
            assertEquals("admin", body.stringValue());
            assertFalse(body.next());
        });
    }

    /** A write's statements, counted from a document sequence or the body's array, whichever holds them. */
    @Test
    void statementsAreCountedFromASequenceOrTheBody() {
        useBuf(opMsg(8, 0, 0).body(INSERT_BODY).sequence("documents", DOC1, DOC2).build(), buf -> {
            OpMsg msg = OpMsg.parse(buf);
            assertEquals(2, msg.statements(buf, "documents"));
            assertEquals(0, msg.statements(buf, "updates"));
        });
        useBuf(opMsg(9, 0, 0).sequence("documents", DOC1).body(INSERT_BODY).build(), buf ->
                assertEquals(1, OpMsg.parse(buf).statements(buf, "documents")));
        byte[] inBody = bson("{update: 'orders', updates: [{q: {_id: 1}, u: {$set: {a: 1}}}, {q: {_id: 2}, u: {}}, {q: {}, u: {}}],"
                + " $db: 'shop'}");
        useBuf(opMsg(10, 0, 0).body(inBody).build(), buf -> {
            assertEquals(3, OpMsg.parse(buf).statements(buf, "updates"));
            assertEquals(0, OpMsg.parse(buf).statements(buf, "update"), "a string field holds no statements");
        });
    }

    @Test
    void theSmallestOpMsgIsAnEmptyBodyAndOneByteLessIsMalformed() {
        byte[] smallest = opMsg(7, 0, 0).body(bson("{}")).build();
        assertEquals(16 + 4 + 1 + 5, smallest.length);
        useBuf(smallest, buf -> assertEquals(FIRST_SECTION + 1, OpMsg.parse(buf).bodyOffset()));
        byte[] shorter = patchLe32(java.util.Arrays.copyOf(smallest, smallest.length - 1), 0, smallest.length - 1);
        assertMalformed(shorter, OpMsg::parse, "too short to hold a body");
    }

    @Test
    void bodyThenDocumentSequence() {
        byte[] frame = opMsg(8, 0, 0).body(INSERT_BODY).sequence("documents", DOC1, DOC2).build();
        assertEquals(16 + 4 + 1 + INSERT_BODY.length + 1 + sequenceSize("documents", DOC1, DOC2), frame.length);
        useBuf(frame, buf -> {
            OpMsg msg = OpMsg.parse(buf);
            assertEquals(FIRST_SECTION + 1, msg.bodyOffset());
            assertEquals(frame.length, msg.sectionsEnd());
            BsonCursor body = msg.body(buf);
            assertTrue(body.next());
            assertEquals("insert", body.name());
            assertEquals("orders", body.stringValue());
        });
    }

    @Test
    void documentSequenceBeforeBody() {
        byte[] frame = opMsg(9, 0, 0).sequence("documents", DOC1, DOC2).body(INSERT_BODY).build();
        int expectedBody = FIRST_SECTION + 1 + sequenceSize("documents", DOC1, DOC2) + 1;
        useBuf(frame, buf -> {
            OpMsg msg = OpMsg.parse(buf);
            assertEquals(expectedBody, msg.bodyOffset());
            assertEquals(INSERT_BODY.length, buf.getIntLE(msg.bodyOffset()));
            BsonCursor body = msg.body(buf);
            assertTrue(body.find("$db"));
            assertEquals("shop", body.stringValue());
        });
    }

    @Test
    void severalSequencesAroundTheBodyAndAnEmptySequence() {
        byte[] frame = opMsg(10, 0, 0)
                .sequence("updates", bson("{q: {}, u: {$set: {x: 1}}}"))
                .body(bson("{update: 'c', $db: 'd'}"))
                .sequence("empty")
                .sequence("documents", DOC1)
                .build();
        useBuf(frame, buf -> {
            OpMsg msg = OpMsg.parse(buf);
            BsonCursor body = msg.body(buf);
            assertTrue(body.next());
            assertEquals("update", body.name());
            assertEquals(frame.length, msg.sectionsEnd());
        });
    }

    @Test
    void theCommandHoldsEachSequenceUnderItsIdentifierAsTheServerReadsIt() {
        byte[] frame = opMsg(10, 0, OpMsg.CHECKSUM_PRESENT)
                .sequence("updates", bson("{q: {_id: 2}, u: {$set: {x: 1}}}"))
                .body(bson("{update: 'c', $db: 'd'}"))
                .sequence("empty")
                .sequence("documents", DOC1, DOC2)
                .build();
        useBuf(frame, buf -> assertEquals(BsonDocument.parse("{update: 'c', $db: 'd', updates: [{q: {_id: 2}, u: {$set: {x: 1}}}],"
                + " empty: [], documents: [{_id: 1, item: 'a'}, {_id: 2, item: 'bb', qty: {$numberLong: '5'}}]}"),
                OpMsg.parse(buf).command(buf)));
        useBuf(opMsg(7, 0, 0).body(PING_BODY).build(), buf -> assertEquals(BsonDocument.parse("{ping: 1, $db: 'admin'}"),
                OpMsg.parse(buf).command(buf), "a body alone is the command"));
    }

    @Test
    void correctChecksumIsVerifiedAndExcludedFromTheSections() {
        byte[] frame = opMsg(11, 0, OpMsg.CHECKSUM_PRESENT).body(INSERT_BODY).sequence("documents", DOC1).build();
        // the fixture's CRC was computed with java.util.zip.CRC32C over everything before it
        assertEquals(WireFixtures.crc32c(frame, 0, frame.length - 4), WireFixtures.readLe32(frame, frame.length - 4));
        useBuf(frame, buf -> {
            OpMsg msg = OpMsg.parse(buf);
            assertTrue(msg.checksumPresent());
            assertEquals(OpMsg.CHECKSUM_PRESENT, msg.flags());
            assertEquals(frame.length - 4, msg.sectionsEnd());
            assertEquals(FIRST_SECTION + 1, msg.bodyOffset());
        });
    }

    @Test
    void incorrectChecksumIsRejected() {
        byte[] frame = opMsg(12, 0, OpMsg.CHECKSUM_PRESENT).body(PING_BODY).corruptChecksum().build();
        assertMalformed(frame, OpMsg::parse, "checksum mismatch");
    }

    @Test
    void checksumDetectsAChangedBodyByte() {
        byte[] frame = opMsg(13, 0, OpMsg.CHECKSUM_PRESENT).body(PING_BODY).build();
        int pingValue = FIRST_SECTION + 1 + 4 + 1 + "ping".length() + 1; // the int32 1 of {ping: 1}
        assertEquals(1, WireFixtures.readLe32(frame, pingValue));
        assertMalformed(patchLe32(frame, pingValue, 2), OpMsg::parse, "checksum mismatch");
    }

    @Test
    void checksumOverADocumentThatWouldRunIntoTheChecksumIsStillRejected() {
        // the body claims 4 more bytes than it has (the checksum's); a valid CRC must not make it fit
        byte[] lying = concat(le32(PING_BODY.length + 4), WireFixtures.range(PING_BODY, 4, PING_BODY.length));
        byte[] frame = opMsg(14, 0, OpMsg.CHECKSUM_PRESENT).raw(concat(bytes(0), lying)).build();
        assertMalformed(frame, OpMsg::parse, "does not fit");
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
    void unknownRequiredFlagBitIsRejected(int bit) {
        byte[] frame = opMsg(15, 0, 1 << bit).body(PING_BODY).build();
        assertMalformed(frame, OpMsg::parse, "unknown required flag bits 0x" + Integer.toHexString(1 << bit));
    }

    @Test
    void unknownRequiredBitIsRejectedEvenNextToKnownOnes() {
        byte[] frame = opMsg(16, 0, OpMsg.MORE_TO_COME | OpMsg.EXHAUST_ALLOWED | (1 << 4)).body(PING_BODY).build();
        assertMalformed(frame, OpMsg::parse, "unknown required flag bits 0x10");
    }

    @Test
    void moreToComeIsAcceptedAndReported() {
        byte[] frame = opMsg(17, 0, OpMsg.MORE_TO_COME).body(PING_BODY).build();
        useBuf(frame, buf -> {
            OpMsg msg = OpMsg.parse(buf);
            assertTrue(msg.moreToCome());
            assertFalse(msg.exhaustAllowed());
            assertEquals(2, msg.flags());
        });
    }

    @Test
    void exhaustAllowedIsAcceptedAndReported() {
        byte[] frame = opMsg(18, 0, OpMsg.EXHAUST_ALLOWED).body(PING_BODY).build();
        useBuf(frame, buf -> {
            OpMsg msg = OpMsg.parse(buf);
            assertTrue(msg.exhaustAllowed());
            assertFalse(msg.moreToCome());
            assertEquals(0x10000, msg.flags());
        });
    }

    @Test
    void allKnownBitsTogetherWithChecksum() {
        int flags = OpMsg.CHECKSUM_PRESENT | OpMsg.MORE_TO_COME | OpMsg.EXHAUST_ALLOWED;
        byte[] frame = opMsg(19, 0, flags).body(PING_BODY).build();
        useBuf(frame, buf -> {
            OpMsg msg = OpMsg.parse(buf);
            assertTrue(msg.checksumPresent());
            assertTrue(msg.moreToCome());
            assertTrue(msg.exhaustAllowed());
            assertEquals(flags, msg.flags());
        });
    }

    @Test
    void optionalHighBitsAreIgnored() {
        byte[] frame = opMsg(20, 0, 1 << 20 | 1 << 31).body(PING_BODY).build();
        useBuf(frame, buf -> assertEquals(1 << 20 | 1 << 31, OpMsg.parse(buf).flags()));
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3, 100})
    void unknownSectionKindIsRejected(int kind) {
        byte[] frame = opMsg(21, 0, 0).body(PING_BODY).raw(concat(bytes(kind), PING_BODY)).build();
        assertMalformed(frame, OpMsg::parse, "unknown section kind " + kind);
    }

    @Test
    void twoBodySectionsAreRejected() {
        byte[] frame = opMsg(22, 0, 0).body(PING_BODY).body(PING_BODY).build();
        assertMalformed(frame, OpMsg::parse, "more than one body section");
    }

    @Test
    void sequencesWithoutABodyAreRejected() {
        byte[] frame = opMsg(23, 0, 0).sequence("documents", DOC1, DOC2).build();
        assertMalformed(frame, OpMsg::parse, "no body section");
    }

    @Test
    void messageTooShortForAnyBodyIsRejected() {
        byte[] frame = opMsg(24, 0, 0).raw(bytes(0, 4, 0, 0)).build(); // 24 bytes
        assertMalformed(frame, OpMsg::parse, "too short to hold a body");
    }

    @Test
    void sequenceSizeBeyondTheMessageIsRejected() {
        byte[] frame = opMsg(25, 0, 0).body(PING_BODY).sequence("documents", DOC1).build();
        int sizeAt = FIRST_SECTION + 1 + PING_BODY.length + 1;
        int size = sequenceSize("documents", DOC1);
        assertEquals(size, WireFixtures.readLe32(frame, sizeAt));
        assertMalformed(patchLe32(frame, sizeAt, size + 1), OpMsg::parse, "document sequence size " + (size + 1) + " is out of bounds");
    }

    @ParameterizedTest
    @ValueSource(ints = {4, 0, -1, Integer.MIN_VALUE})
    void sequenceSizeTooSmallOrNegativeIsRejected(int size) {
        byte[] frame = opMsg(26, 0, 0).body(PING_BODY).sequence("documents", DOC1).build();
        int sizeAt = FIRST_SECTION + 1 + PING_BODY.length + 1;
        assertMalformed(patchLe32(frame, sizeAt, size), OpMsg::parse, "document sequence size " + size + " is out of bounds");
    }

    @Test
    void theSmallestSequenceIsItsSizeAndAnEmptyIdentifier() {
        // 5 bytes: the int32 size and the identifier's 0x00, no documents; the size check stops at 4
        byte[] frame = opMsg(26, 0, 0).body(PING_BODY).sequence("").build();
        assertEquals(5, readLe32(frame, FIRST_SECTION + 1 + PING_BODY.length + 1));
        useBuf(frame, buf -> assertEquals(frame.length, OpMsg.parse(buf).sectionsEnd()));
    }

    @Test
    void sequenceTruncatedBeforeItsSizeIsRejected() {
        byte[] frame = opMsg(27, 0, 0).body(PING_BODY).raw(bytes(1, 9, 0)).build();
        assertMalformed(frame, OpMsg::parse, "document sequence truncated");
    }

    @Test
    void sequenceIdentifierWithoutTerminatorIsRejected() {
        byte[] frame = opMsg(28, 0, 0).body(PING_BODY).raw(concat(bytes(1), le32(4 + 3), bytes('a', 'b', 'c'))).build();
        assertMalformed(frame, OpMsg::parse, "identifier is not terminated");
    }

    @Test
    void sequenceDocumentLongerThanItsSequenceIsRejected() {
        byte[] lying = patchLe32(DOC1, 0, DOC1.length + 1);
        byte[] frame = opMsg(29, 0, 0).sequence("documents", lying).body(PING_BODY).build();
        assertMalformed(frame, OpMsg::parse, "does not fit");
    }

    @Test
    void sequencePartialTrailingDocumentIsRejected() {
        byte[] frame = opMsg(30, 0, 0).body(PING_BODY).sequence("documents", DOC1, bytes(9, 0, 0)).build();
        assertMalformed(frame, OpMsg::parse, "truncated");
    }

    @Test
    void bodyLengthTooBigIsRejected() {
        byte[] frame = opMsg(31, 0, 0).body(PING_BODY).build();
        int bodyAt = FIRST_SECTION + 1;
        assertMalformed(patchLe32(frame, bodyAt, PING_BODY.length + 1), OpMsg::parse,
                "BSON document length " + (PING_BODY.length + 1) + " does not fit");
        assertMalformed(patchLe32(frame, bodyAt, Integer.MAX_VALUE), OpMsg::parse, "does not fit");
    }

    @Test
    void bodyLengthBelowTheMinimumIsRejected() {
        byte[] frame = opMsg(32, 0, 0).body(PING_BODY).build();
        assertMalformed(patchLe32(frame, FIRST_SECTION + 1, 4), OpMsg::parse, "BSON document length 4");
        assertMalformed(patchLe32(frame, FIRST_SECTION + 1, -7), OpMsg::parse, "BSON document length -7");
    }

    @Test
    void bodyLengthTooSmallEndsOnANonZeroByteAndIsRejected() {
        byte[] frame = opMsg(33, 0, 0).body(PING_BODY).build();
        // 9 bytes end inside the element name "ping": byte 8 of the document is 'g'
        assertMalformed(patchLe32(frame, FIRST_SECTION + 1, 9), OpMsg::parse, "not terminated by 0x00");
    }

    @Test
    void bodyWithoutItsTrailingZeroIsRejected() {
        byte[] frame = opMsg(34, 0, 0).body(PING_BODY).build();
        assertMalformed(patchByte(frame, frame.length - 1, 0x7F), OpMsg::parse, "not terminated by 0x00");
    }

    @Test
    void bodyTruncatedAfterItsKindByteIsRejected() {
        byte[] frame = opMsg(35, 0, 0).sequence("documents", DOC1).raw(bytes(0, 5, 0, 0)).build();
        assertMalformed(frame, OpMsg::parse, "truncated");
    }

    @Test
    void frameAtANonZeroReaderIndexIsParsedWithAbsoluteOffsets() {
        byte[] frame = opMsg(36, 0, OpMsg.CHECKSUM_PRESENT).sequence("documents", DOC1).body(INSERT_BODY).build();
        ByteBuf buf = ByteBufAllocator.DEFAULT.buffer();
        try {
            buf.writeBytes(new byte[] {9, 9, 9, 9, 9, 9, 9}).writeBytes(frame).writeBytes(new byte[] {1, 2, 3});
            buf.readerIndex(7);
            OpMsg msg = OpMsg.parse(buf);
            assertEquals(7 + FIRST_SECTION + 1 + sequenceSize("documents", DOC1) + 1, msg.bodyOffset());
            assertEquals(7 + frame.length - 4, msg.sectionsEnd());
            BsonCursor body = msg.body(buf);
            assertTrue(body.next());
            assertEquals("insert", body.name());
            assertEquals(7, buf.readerIndex(), "parsing does not move the reader index");
        } finally {
            ReferenceCountUtil.release(buf);
        }
    }
}
