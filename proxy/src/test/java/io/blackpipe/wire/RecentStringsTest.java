package io.blackpipe.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class RecentStringsTest {
    private final RecentStrings recent = new RecentStrings();

    /** {@code s} read from offset 3 of {@code buf}, between other bytes; through its memory or through the ByteBuf. */
    private String read(String s, ByteBuf buf, boolean fromMemory) {
        byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
        buf.writeBytes(new byte[] {9, 9, 9}).writeBytes(utf8).writeByte(0);
        try {
            return fromMemory ? recent.get(buf, BsonCursor.rawAddress(buf), 3, utf8.length)
                    : recent.get(buf, 3, utf8.length);
        } finally {
            buf.release();
        }
    }

    private String read(String s) {
        return read(s, Unpooled.buffer(), false);
    }

    /** As BsonCursor compares a direct buffer's bytes. */
    private String readFromMemory(String s) {
        return read(s, Unpooled.directBuffer(), true);
    }

    @Test
    void aRepeatedStringIsTheSameInstanceAndAnyOtherIsDecodedExactly() {
        String first = read("insert");
        assertEquals("insert", first);
        assertSame(first, read("insert"), "seen lately: not decoded again");
        assertEquals("insers", read("insers"), "same length, other bytes");
        assertEquals("inser", read("inser"), "a prefix is another string");
        assertEquals("", read(""));
        assertEquals("b\u00e4ckerei.\u65e5\u672c", read("b\u00e4ckerei.\u65e5\u672c"), "UTF-8, not Latin-1");
        assertSame(first, read("insert"));
    }

    @Test
    void comparedInABuffersMemoryTheAnswersAreTheSame() {
        String first = readFromMemory("insert");
        assertEquals("insert", first);
        assertSame(first, readFromMemory("insert"), "seen lately: not decoded again");
        assertSame(first, read("insert"), "and the same instance as through the ByteBuf");
        assertEquals("insers", readFromMemory("insers"), "same length, other bytes");
        assertEquals("inser", readFromMemory("inser"), "a prefix is another string");
        assertEquals("b\u00e4ckerei.\u65e5\u672c", readFromMemory("b\u00e4ckerei.\u65e5\u672c"));
        assertSame(first, readFromMemory("insert"));
    }

    @Test
    void onlyTheLastEightAreKept() {
        String kept = read("s0");
        for (int i = 1; i < 8; i++) {
            read("s" + i);
        }
        assertSame(kept, read("s0"), "eight distinct strings fit");
        read("s8"); // the ninth takes the oldest slot
        String again = read("s0");
        assertEquals("s0", again);
        assertNotSame(kept, again, "evicted, so decoded anew");
    }
}
