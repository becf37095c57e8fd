package io.blackpipe.wire;

import static io.blackpipe.wire.WireFixtures.assertMalformed;
import static io.blackpipe.wire.WireFixtures.bson;
import static io.blackpipe.wire.WireFixtures.bytes;
import static io.blackpipe.wire.WireFixtures.concat;
import static io.blackpipe.wire.WireFixtures.cstring;
import static io.blackpipe.wire.WireFixtures.document;
import static io.blackpipe.wire.WireFixtures.element;
import static io.blackpipe.wire.WireFixtures.le32;
import static io.blackpipe.wire.WireFixtures.le64;
import static io.blackpipe.wire.WireFixtures.stringValue;
import static io.blackpipe.wire.WireFixtures.useBuf;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.util.internal.PlatformDependent;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDbPointer;
import org.bson.BsonDecimal128;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonJavaScript;
import org.bson.BsonJavaScriptWithScope;
import org.bson.BsonMaxKey;
import org.bson.BsonMinKey;
import org.bson.BsonNull;
import org.bson.BsonObjectId;
import org.bson.BsonRegularExpression;
import org.bson.BsonString;
import org.bson.BsonSymbol;
import org.bson.BsonTimestamp;
import org.bson.BsonUndefined;
import org.bson.types.Decimal128;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;

class BsonCursorTest {
    private record Expected(String name, int type, int valueSize) {
    }

    /** One element of every BSON type, with value sizes worked out by hand from the BSON spec. */
    private static final List<Expected> ALL_TYPES = List.of(
            new Expected("double", 0x01, 8),
            new Expected("string", 0x02, 4 + 6),                 // "hello" + 0x00
            new Expected("document", 0x03, 4 + (1 + 2 + 4) + 1), // {a: int32}
            new Expected("array", 0x04, 4 + 2 * (1 + 2 + 4) + 1), // {"0": int32, "1": int32}
            new Expected("binary", 0x05, 4 + 1 + 3),
            new Expected("undefined", 0x06, 0),
            new Expected("objectId", 0x07, 12),
            new Expected("bool", 0x08, 1),
            new Expected("date", 0x09, 8),
            new Expected("null", 0x0A, 0),
            new Expected("regex", 0x0B, 4 + 2),                  // "ab*\0" "i\0"
            new Expected("dbPointer", 0x0C, 4 + 5 + 12),         // string "db.c" + ObjectId
            new Expected("code", 0x0D, 4 + 4),                   // "x()"
            new Expected("symbol", 0x0E, 4 + 4),                 // "sym"
            new Expected("codeWithScope", 0x0F, 4 + (4 + 4) + (4 + 7 + 1)),
            new Expected("int32", 0x10, 4),
            new Expected("timestamp", 0x11, 8),
            new Expected("int64", 0x12, 8),
            new Expected("decimal128", 0x13, 16),
            new Expected("minKey", 0xFF, 0),
            new Expected("maxKey", 0x7F, 0),
            new Expected("sentinel", 0x10, 4));

    private static byte[] allTypes() {
        ObjectId oid = new ObjectId("0102030405060708090a0b0c");
        BsonDocument all = new BsonDocument()
                .append("double", new BsonDouble(2.5))
                .append("string", new BsonString("hello"))
                .append("document", new BsonDocument("a", new BsonInt32(1)))
                .append("array", new BsonArray(List.of(new BsonInt32(1), new BsonInt32(2))))
                .append("binary", new BsonBinary((byte) 0, new byte[] {1, 0, 2}))
                .append("undefined", new BsonUndefined())
                .append("objectId", new BsonObjectId(oid))
                .append("bool", BsonBoolean.TRUE)
                .append("date", new BsonDateTime(1_700_000_000_000L))
                .append("null", BsonNull.VALUE)
                .append("regex", new BsonRegularExpression("ab*", "i"))
                .append("dbPointer", new BsonDbPointer("db.c", oid))
                .append("code", new BsonJavaScript("x()"))
                .append("symbol", new BsonSymbol("sym"))
                .append("codeWithScope", new BsonJavaScriptWithScope("f()", new BsonDocument("x", new BsonInt32(1))))
                .append("int32", new BsonInt32(-7))
                .append("timestamp", new BsonTimestamp(5, 6))
                .append("int64", new BsonInt64(1L << 40))
                .append("decimal128", new BsonDecimal128(Decimal128.parse("1.5")))
                .append("minKey", new BsonMinKey())
                .append("maxKey", new BsonMaxKey())
                .append("sentinel", new BsonInt32(42));
        return bson(all);
    }

    @Test
    void readsThePooledDirectBuffersOfTheProxyFromMemoryAndAHeapBufferThroughItsAccessors() {
        byte[] doc = allTypes();
        // Where Netty may read memory directly (Unsafe, unaligned access, little-endian: x86 and ARM
        // on Java 17) the proxy's buffers take the fast path; elsewhere every buffer takes the checked one.
        boolean platformAllows = PlatformDependent.hasUnsafe() && PlatformDependent.isUnaligned()
                && !PlatformDependent.BIG_ENDIAN_NATIVE_ORDER;
        System.out.println("[blackpipe] BsonCursor reads pooled direct buffers from memory: " + platformAllows);
        ByteBuf direct = PooledByteBufAllocator.DEFAULT.directBuffer(doc.length).writeBytes(doc);
        ByteBuf heap = Unpooled.wrappedBuffer(doc);
        try {
            BsonCursor fromMemory = BsonCursor.over(direct, 0, doc.length);
            BsonCursor checked = BsonCursor.over(heap, 0, doc.length);
            assertEquals(platformAllows, fromMemory.readsMemory());
            assertFalse(checked.readsMemory());
            while (checked.next()) {
                assertTrue(fromMemory.next());
                assertEquals(checked.name(), fromMemory.name());
                assertEquals(checked.valueEnd(), fromMemory.valueEnd(), checked.name());
                if (checked.isNumber()) {
                    assertEquals(checked.longValue(), fromMemory.longValue(), checked.name());
                }
            }
            assertFalse(fromMemory.next());
        } finally {
            direct.release();
            heap.release();
        }
    }

    @Test
    void walksEveryBsonTypeAndSkipsEachValueExactly() {
        byte[] doc = allTypes();
        useBuf(doc, buf -> {
            BsonCursor cursor = BsonCursor.over(buf, 0, doc.length);
            int typeAt = 4; // the first element's type byte follows the document's int32 length
            for (Expected e : ALL_TYPES) {
                assertTrue(cursor.next(), "expected element " + e.name());
                assertEquals(e.name(), cursor.name());
                assertEquals((byte) e.type(), cursor.type(), e.name());
                int valueStart = typeAt + 1 + e.name().length() + 1;
                assertEquals(valueStart, cursor.valueOffset(), e.name());
                assertEquals(valueStart + e.valueSize(), cursor.valueEnd(), e.name());
                typeAt = cursor.valueEnd(); // the next element starts right after this value
            }
            assertEquals(42, cursor.longValue(), "the sentinel after every type is read correctly");
            assertEquals(doc.length - 1, cursor.valueEnd(), "the last element ends at the terminator");
            assertFalse(cursor.next());
            assertFalse(cursor.next(), "next() stays false at the end");
        });
    }

    @Test
    void valuesOfTheSkippedTypesSitWhereTheCursorSays() {
        byte[] doc = allTypes();
        useBuf(doc, buf -> {
            BsonCursor cursor = BsonCursor.over(buf, 0, doc.length);
            assertTrue(cursor.find("binary"));
            assertEquals(3, buf.getIntLE(cursor.valueOffset()));
            assertEquals(0, buf.getByte(cursor.valueOffset() + 4), "subtype");
            assertEquals(2, buf.getByte(cursor.valueOffset() + 7), "last data byte");
            assertTrue(cursor.find("objectId"));
            assertEquals(1, buf.getByte(cursor.valueOffset()));
            assertEquals(12, buf.getByte(cursor.valueEnd() - 1));
            assertTrue(cursor.find("regex"));
            assertEquals("ab*", buf.toString(cursor.valueOffset(), 3, java.nio.charset.StandardCharsets.UTF_8));
            assertTrue(cursor.find("dbPointer"));
            assertEquals("db.c", cursor.stringValue());
            assertTrue(cursor.find("code"));
            assertEquals("x()", cursor.stringValue());
            assertTrue(cursor.find("symbol"));
            assertEquals("sym", cursor.stringValue());
            assertTrue(cursor.find("int32"));
            assertEquals(-7, cursor.longValue());
            assertTrue(cursor.find("int64"));
            assertEquals(1L << 40, cursor.longValue());
        });
    }

    @Test
    void lengthPrefixedValuesAreSkippedByLengthNotByScanningForZero() {
        // hand-built: a string and a binary that contain 0x00 bytes, then an int32 to land on
        byte[] doc = document(
                element(0x02, "s", le32(4), bytes('a', 0, 'b', 0)),
                element(0x05, "b", le32(4), bytes(0x80), bytes(0, 0, 0, 0)),
                element(0x03, "d", document(element(0x0A, "n"))),
                element(0x10, "after", le32(0x01020304)));
        useBuf(doc, buf -> {
            BsonCursor cursor = BsonCursor.over(buf, 0, doc.length);
            assertTrue(cursor.next());
            assertEquals("s", cursor.name());
            assertEquals("a\0b", cursor.stringValue());
            assertTrue(cursor.next());
            assertEquals("b", cursor.name());
            assertEquals(BsonCursor.BINARY, cursor.type());
            assertTrue(cursor.next());
            assertEquals("d", cursor.name());
            assertTrue(cursor.next());
            assertEquals("after", cursor.name());
            assertEquals(0x01020304, cursor.longValue());
            assertFalse(cursor.next());
        });
    }

    @Test
    void emptyDocumentHasNoElements() {
        useBuf(bytes(5, 0, 0, 0, 0), buf -> assertFalse(BsonCursor.over(buf, 0, 5).next()));
    }

    @Test
    void nameIsComparesTheWholeName() {
        byte[] doc = bson("{ping: 1, $db: 'admin'}");
        useBuf(doc, buf -> {
            BsonCursor cursor = BsonCursor.over(buf, 0, doc.length);
            assertTrue(cursor.next());
            assertTrue(cursor.nameIs("ping"));
            assertFalse(cursor.nameIs("pin"));
            assertFalse(cursor.nameIs("pings"));
            assertFalse(cursor.nameIs("PING"));
            assertFalse(cursor.nameIs(""));
            assertTrue(cursor.next());
            assertTrue(cursor.nameIs("$db"));
            assertFalse(cursor.nameIs("db"));
        });
    }

    @Test
    void findLeavesTheCursorOnTheElementAndOnlyLooksForward() {
        byte[] doc = bson("{a: 1, b: 'bee', c: true}");
        useBuf(doc, buf -> {
            BsonCursor cursor = BsonCursor.over(buf, 0, doc.length);
            assertTrue(cursor.find("b"));
            assertEquals(BsonCursor.STRING, cursor.type());
            assertEquals("bee", cursor.stringValue());
            assertFalse(cursor.find("a"), "a is behind the cursor");
            BsonCursor fresh = BsonCursor.over(buf, 0, doc.length);
            assertFalse(fresh.find("missing"));
            assertFalse(fresh.next(), "a failed find consumes the document");
            BsonCursor third = BsonCursor.over(buf, 0, doc.length);
            assertTrue(third.find("c"));
            assertTrue(third.booleanValue());
        });
    }

    @Test
    void readsStringBooleanAndNumberValues() {
        byte[] doc = bson(new BsonDocument()
                .append("s", new BsonString("héllo €"))
                .append("t", BsonBoolean.TRUE)
                .append("f", BsonBoolean.FALSE)
                .append("i", new BsonInt32(-123))
                .append("l", new BsonInt64(Long.MIN_VALUE))
                .append("d", new BsonDouble(2.9))
                .append("nd", new BsonDouble(-2.9))
                .append("dec", new BsonDecimal128(Decimal128.parse("3"))));
        useBuf(doc, buf -> {
            BsonCursor c = BsonCursor.over(buf, 0, doc.length);
            assertTrue(c.next());
            assertEquals("héllo €", c.stringValue());
            assertFalse(c.isNumber());
            assertTrue(c.next());
            assertEquals(BsonCursor.BOOLEAN, c.type());
            assertTrue(c.booleanValue());
            assertTrue(c.next());
            assertFalse(c.booleanValue());
            assertTrue(c.next());
            assertTrue(c.isNumber());
            assertEquals(-123, c.longValue());
            assertEquals(-123.0, c.doubleValue());
            assertTrue(c.next());
            assertEquals(BsonCursor.INT64, c.type());
            assertEquals(Long.MIN_VALUE, c.longValue());
            assertTrue(c.next());
            assertEquals(BsonCursor.DOUBLE, c.type());
            assertEquals(2, c.longValue(), "a double is truncated toward zero");
            assertEquals(2.9, c.doubleValue());
            assertTrue(c.next());
            assertEquals(-2, c.longValue());
            assertTrue(c.next());
            assertFalse(c.isNumber(), "decimal128 is not read as a number");
            IllegalStateException e = assertThrows(IllegalStateException.class, c::longValue);
            assertTrue(e.getMessage().contains("'dec'"), e.getMessage());
        });
    }

    @Test
    void documentValueWalksNestedDocumentsAndArrays() {
        byte[] doc = bson("{outer: {x: 1, inner: {y: 'why'}}, list: ['p', 'q', 'r'], tail: 9}");
        useBuf(doc, buf -> {
            BsonCursor c = BsonCursor.over(buf, 0, doc.length);
            assertTrue(c.next());
            assertEquals(BsonCursor.DOCUMENT, c.type());
            BsonCursor outer = c.documentValue();
            assertTrue(outer.find("inner"));
            BsonCursor inner = outer.documentValue();
            assertTrue(inner.next());
            assertEquals("y", inner.name());
            assertEquals("why", inner.stringValue());
            assertFalse(inner.next());
            assertFalse(outer.next());
            assertTrue(c.next());
            assertEquals(BsonCursor.ARRAY, c.type());
            BsonCursor list = c.documentValue();
            List<String> names = new ArrayList<>();
            List<String> values = new ArrayList<>();
            while (list.next()) {
                names.add(list.name());
                values.add(list.stringValue());
            }
            assertEquals(List.of("0", "1", "2"), names);
            assertEquals(List.of("p", "q", "r"), values);
            assertTrue(c.next(), "the outer cursor is unaffected by the nested ones");
            assertEquals("tail", c.name());
            assertEquals(9, c.longValue());
        });
    }

    @Test
    void cursorOverADocumentInsideALargerBufferUsesAbsoluteOffsets() {
        byte[] doc = bson("{k: 'v', n: 5}");
        byte[] all = concat(bytes(7, 7, 7), doc, bytes(1, 2, 3, 4, 5, 6));
        useBuf(all, buf -> {
            BsonCursor c = BsonCursor.over(buf, 3, all.length);
            assertTrue(c.next());
            assertEquals("k", c.name());
            assertEquals(3 + 4 + 1 + 2, c.valueOffset());
            assertEquals("v", c.stringValue());
            assertTrue(c.next());
            assertEquals(5, c.longValue());
            assertFalse(c.next(), "bytes after the document are not elements");
        });
        assertMalformed(all, b -> BsonCursor.over(b, 3, 3 + doc.length - 1), "does not fit");
    }

    // ------------------------------------------------------------ malformed input

    @Test
    void stringLengthPastTheEndIsRejected() {
        byte[] doc = document(element(0x02, "s", le32(100), cstring("abc")), element(0x10, "n", le32(1)));
        assertMalformed(doc, b -> BsonCursor.over(b, 0, doc.length).next(), "BSON length 100 is out of bounds");
    }

    @Test
    void stringLengthThatOvershootsByOneIsRejectedNamingTheElement() {
        // 9 bytes lie between the prefix and the terminator, so a length of 6 passes the prefix check,
        // but the value (4 + 6 bytes) runs one byte over the document's terminator
        byte[] doc = document(element(0x02, "s", le32(5), cstring("abcd")));
        byte[] lying = WireFixtures.patchLe32(doc, 4 + 1 + 2, 6);
        assertMalformed(lying, b -> BsonCursor.over(b, 0, lying.length).next(), "element 's' runs past its document");
    }

    @Test
    void stringLengthZeroIsRejected() {
        byte[] doc = document(element(0x02, "s", le32(0), bytes(0)));
        assertMalformed(doc, b -> BsonCursor.over(b, 0, doc.length).next(), "BSON length 0 is out of bounds");
    }

    @Test
    void unknownTypeIsRejected() {
        byte[] doc = document(element(0x14, "x", le32(1)));
        assertMalformed(doc, b -> BsonCursor.over(b, 0, doc.length).next(), "unknown BSON type 0x14");
        byte[] high = document(element(0x80, "x", le32(1)));
        assertMalformed(high, b -> BsonCursor.over(b, 0, high.length).next(), "unknown BSON type 0x80");
        byte[] zero = document(element(0x00, "x", le32(1)));
        assertMalformed(zero, b -> BsonCursor.over(b, 0, zero.length).next(), "unknown BSON type 0x0");
    }

    @Test
    void unknownTypeAfterValidElementsIsRejectedWhenReached() {
        byte[] doc = document(element(0x10, "ok", le32(1)), element(0x21, "bad"));
        useBuf(doc, buf -> {
            BsonCursor c = BsonCursor.over(buf, 0, doc.length);
            assertTrue(c.next());
            assertEquals("ok", c.name());
            MalformedMessageException e = assertThrows(MalformedMessageException.class, c::next);
            assertTrue(e.getMessage().contains("0x21"), e.getMessage());
        });
    }

    @Test
    void elementNameWithoutTerminatorIsRejected() {
        byte[] doc = document(bytes(0x10, 'a', 'b', 'c'));
        assertMalformed(doc, b -> BsonCursor.over(b, 0, doc.length).next(), "name is not terminated");
    }

    @Test
    void regexWithoutTerminatorsIsRejected() {
        byte[] doc = document(element(0x0B, "r", bytes('a', 'b', 0, 'i')));
        assertMalformed(doc, b -> BsonCursor.over(b, 0, doc.length).next(), "regex is not terminated");
        byte[] noPatternEnd = document(element(0x0B, "r", bytes('a', 'b')));
        assertMalformed(noPatternEnd, b -> BsonCursor.over(b, 0, noPatternEnd.length).next(), "regex is not terminated");
    }

    @Test
    void fixedSizeValueRunningPastTheDocumentIsRejected() {
        byte[] doc = document(element(0x12, "big", le32(1)));
        assertMalformed(doc, b -> BsonCursor.over(b, 0, doc.length).next(), "element 'big' runs past its document");
        byte[] oid = document(element(0x07, "_id", le64(1)));
        assertMalformed(oid, b -> BsonCursor.over(b, 0, oid.length).next(), "runs past its document");
    }

    @Test
    void lengthPrefixCutByTheTerminatorIsRejected() {
        byte[] doc = document(element(0x02, "s", bytes(1, 0)));
        assertMalformed(doc, b -> BsonCursor.over(b, 0, doc.length).next(), "length prefix runs past its document");
    }

    @Test
    void embeddedDocumentAndBinaryLengthsAreBoundsChecked() {
        byte[] big = document(element(0x03, "d", le32(50), bytes(0)));
        assertMalformed(big, b -> BsonCursor.over(b, 0, big.length).next(), "BSON length 50 is out of bounds");
        byte[] small = document(element(0x04, "a", le32(4), bytes(0)));
        assertMalformed(small, b -> BsonCursor.over(b, 0, small.length).next(), "BSON length 4 is out of bounds");
        byte[] negative = document(element(0x05, "b", le32(-1), bytes(0)));
        assertMalformed(negative, b -> BsonCursor.over(b, 0, negative.length).next(), "BSON length -1 is out of bounds");
    }

    @Test
    void embeddedDocumentWithoutTerminatorIsRejectedWhenOpened() {
        byte[] doc = document(element(0x03, "d", le32(5), bytes(7)));
        useBuf(doc, buf -> {
            BsonCursor c = BsonCursor.over(buf, 0, doc.length);
            assertTrue(c.next(), "the outer walk only needs the length");
            MalformedMessageException e = assertThrows(MalformedMessageException.class, c::documentValue);
            assertTrue(e.getMessage().contains("not terminated by 0x00"), e.getMessage());
        });
    }

    @Test
    void checkedLengthRejectsEveryLie() {
        byte[] doc = bson("{a: 1}");
        useBuf(doc, buf -> assertEquals(doc.length, BsonCursor.checkedLength(buf, 0, doc.length)));
        assertMalformed(doc, b -> BsonCursor.checkedLength(b, 0, 4), "BSON document truncated at offset 0");
        assertMalformed(doc, b -> BsonCursor.checkedLength(b, 0, doc.length - 1),
                "BSON document length " + doc.length + " does not fit in " + (doc.length - 1) + " bytes");
        byte[] tooSmall = WireFixtures.patchLe32(doc, 0, 3);
        assertMalformed(tooSmall, b -> BsonCursor.checkedLength(b, 0, tooSmall.length), "BSON document length 3");
        byte[] unterminated = WireFixtures.patchByte(doc, doc.length - 1, 1);
        assertMalformed(unterminated, b -> BsonCursor.checkedLength(b, 0, unterminated.length), "not terminated by 0x00");
    }

    @Test
    void overRejectsALyingDocumentBeforeAnyElementIsRead() {
        byte[] doc = WireFixtures.patchLe32(bson("{a: 1}"), 0, 100);
        assertMalformed(doc, b -> BsonCursor.over(b, 0, doc.length), "does not fit");
    }

    @Test
    void stringValueIsTheExactUtf8BytesBeforeTheTerminator() {
        byte[] doc = document(element(0x02, "s", stringValue("€uro")));
        useBuf(doc, buf -> {
            BsonCursor c = BsonCursor.over(buf, 0, doc.length);
            assertTrue(c.next());
            assertEquals("€uro", c.stringValue());
            assertArrayEquals("€uro".getBytes(java.nio.charset.StandardCharsets.UTF_8),
                    WireFixtures.range(doc, c.valueOffset() + 4, c.valueEnd() - 1));
        });
    }
}
