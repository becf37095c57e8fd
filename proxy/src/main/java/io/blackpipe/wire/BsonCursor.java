package io.blackpipe.wire;

import io.netty.buffer.ByteBuf;
import io.netty.util.internal.PlatformDependent;
import java.nio.charset.StandardCharsets;

/**
 * Walks the top-level elements of one BSON document inside a ByteBuf without decoding it, so a
 * decision can read a few fields of a command and skip the rest (documents, arrays, strings are
 * skipped by their length prefix). Every length read is bounds-checked: a lying document raises
 * {@link MalformedMessageException} instead of reading past the message.
 */
public final class BsonCursor {
    public static final byte DOUBLE = 0x01;
    public static final byte STRING = 0x02;
    public static final byte DOCUMENT = 0x03;
    public static final byte ARRAY = 0x04;
    public static final byte BINARY = 0x05;
    public static final byte BOOLEAN = 0x08;
    public static final byte INT32 = 0x10;
    public static final byte INT64 = 0x12;

    /** Whether this platform can read little-endian values straight from a buffer's memory (x86, ARM). */
    private static final boolean RAW_READS = PlatformDependent.hasUnsafe() && PlatformDependent.isUnaligned()
            && !PlatformDependent.BIG_ENDIAN_NATIVE_ORDER;

    private final ByteBuf buf;
    /**
     * The buffer's memory address (0: read through the ByteBuf). A ByteBuf accessor checks the
     * reference count and the bounds on every call, a quarter of reading a find and its reply
     * (bench/per-command). Here {@link #over} has the buffer check both ends of the document once,
     * every read is within them by this cursor's own checks against {@link #end}, and no cursor
     * outlives the parse of its frame, which the event loop releases only afterwards.
     */
    private final long address;
    private final int end; // index of the document's trailing 0x00
    private int next;
    private byte type;
    private int nameStart;
    private int nameLength;
    private int valueStart;

    private BsonCursor(ByteBuf buf, int elementsStart, int end) {
        this.buf = buf;
        this.address = rawAddress(buf);
        this.next = elementsStart;
        this.end = end;
    }

    /**
     * {@code buf}'s memory address where this platform can read it directly, else 0. A direct buffer
     * may have an address with no Unsafe to read it by (Netty leaves Unsafe off by default on Java 25+).
     */
    static long rawAddress(ByteBuf buf) {
        return RAW_READS && buf.hasMemoryAddress() ? buf.memoryAddress() : 0;
    }

    /** Whether this cursor reads the buffer's memory itself: a test's proof that the fast path is taken. */
    boolean readsMemory() {
        return address != 0;
    }

    private byte byteAt(int index) {
        return address != 0 ? PlatformDependent.getByte(address + index) : buf.getByte(index);
    }

    private int intAt(int index) {
        return address != 0 ? PlatformDependent.getInt(address + index) : buf.getIntLE(index);
    }

    private long longAt(int index) {
        return address != 0 ? PlatformDependent.getLong(address + index) : buf.getLongLE(index);
    }

    /**
     * A cursor over the document at {@code offset}, which must end at or before {@code limit}. Its
     * first and last bytes are read through the buffer, so a document outside the buffer fails here.
     */
    public static BsonCursor over(ByteBuf buf, int offset, int limit) {
        return new BsonCursor(buf, offset + 4, offset + checkedLength(buf, offset, limit) - 1);
    }

    /** The document's declared length, checked against the space it has and its terminator. */
    public static int checkedLength(ByteBuf buf, int offset, int limit) {
        if (limit - offset < 5) {
            throw new MalformedMessageException("BSON document truncated at offset " + offset);
        }
        int length = buf.getIntLE(offset);
        if (length < 5 || length > limit - offset) {
            throw new MalformedMessageException("BSON document length " + length + " does not fit in "
                    + (limit - offset) + " bytes");
        }
        if (buf.getByte(offset + length - 1) != 0) {
            throw new MalformedMessageException("BSON document is not terminated by 0x00");
        }
        return length;
    }

    /** Moves to the next element; false at the end of the document. */
    public boolean next() {
        if (next >= end) {
            return false;
        }
        type = byteAt(next);
        nameStart = next + 1;
        int nameEnd = nameStart;
        while (nameEnd < end && byteAt(nameEnd) != 0) { // names are short: a plain loop beats indexOf's setup
            nameEnd++;
        }
        if (nameEnd == end) {
            throw new MalformedMessageException("BSON element name is not terminated");
        }
        nameLength = nameEnd - nameStart;
        valueStart = nameEnd + 1;
        next = valueStart + valueLength();
        if (next > end) {
            throw new MalformedMessageException("BSON element '" + name() + "' runs past its document");
        }
        return true;
    }

    private int valueLength() {
        switch (type) {
            case 0x06: case 0x0A: case (byte) 0xFF: case 0x7F: return 0; // undefined, null, min/max key
            case BOOLEAN: return 1;
            case INT32: return 4;
            case DOUBLE: case 0x09: case 0x11: case INT64: return 8; // double, date, timestamp, int64
            case 0x07: return 12; // ObjectId
            case 0x13: return 16; // decimal128
            case STRING: case 0x0D: case 0x0E: return 4 + lengthAt(valueStart, 1); // string, code, symbol
            case DOCUMENT: case ARRAY: case 0x0F: return lengthAt(valueStart, 5);
            case BINARY: return 5 + lengthAt(valueStart, 0);
            case 0x0C: return 4 + lengthAt(valueStart, 1) + 12; // DBPointer
            case 0x0B: return regexLength();
            default: throw new MalformedMessageException("unknown BSON type 0x" + Integer.toHexString(type & 0xFF));
        }
    }

    private int lengthAt(int index, int minimum) {
        if (index + 4 > end) {
            throw new MalformedMessageException("BSON length prefix runs past its document");
        }
        int length = intAt(index);
        if (length < minimum || length > end - index) {
            throw new MalformedMessageException("BSON length " + length + " is out of bounds");
        }
        return length;
    }

    private int regexLength() {
        int patternEnd = buf.indexOf(valueStart, end, (byte) 0);
        int optionsEnd = patternEnd < 0 ? -1 : buf.indexOf(patternEnd + 1, end, (byte) 0);
        if (optionsEnd < 0) {
            throw new MalformedMessageException("BSON regex is not terminated");
        }
        return optionsEnd + 1 - valueStart;
    }

    public byte type() {
        return type;
    }

    public String name() {
        return buf.toString(nameStart, nameLength, StandardCharsets.UTF_8);
    }

    /** The element name, taken from {@code recent} when it was seen lately. */
    public String name(RecentStrings recent) {
        return recent.get(buf, address, nameStart, nameLength);
    }

    /** Compares the element name with an ASCII name without allocating. */
    public boolean nameIs(String ascii) {
        if (ascii.length() != nameLength) {
            return false;
        }
        for (int i = 0; i < nameLength; i++) {
            if (byteAt(nameStart + i) != ascii.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    /** Index of the element's type byte: the element's bytes are [elementOffset, valueEnd). */
    public int elementOffset() {
        return nameStart - 1;
    }

    public int valueOffset() {
        return valueStart;
    }

    public int valueEnd() {
        return next;
    }

    public String stringValue() {
        int length = buf.getIntLE(valueStart);
        return buf.toString(valueStart + 4, length - 1, StandardCharsets.UTF_8);
    }

    /** The string value, taken from {@code recent} when it was seen lately. */
    public String stringValue(RecentStrings recent) {
        if (type != STRING) { // next() checked a string's length against the document; another type's bytes are no length
            throw new IllegalStateException("element '" + name() + "' is not a string");
        }
        return recent.get(buf, address, valueStart + 4, intAt(valueStart) - 1);
    }

    public boolean booleanValue() {
        return byteAt(valueStart) != 0;
    }

    public boolean isNumber() {
        return type == INT32 || type == INT64 || type == DOUBLE;
    }

    public long longValue() {
        switch (type) {
            case INT32: return intAt(valueStart);
            case INT64: return longAt(valueStart);
            case DOUBLE: return (long) Double.longBitsToDouble(longAt(valueStart));
            default: throw new IllegalStateException("element '" + name() + "' is not a number");
        }
    }

    public double doubleValue() {
        return type == DOUBLE ? Double.longBitsToDouble(longAt(valueStart)) : longValue();
    }

    /** A cursor over this element's embedded document or array. */
    public BsonCursor documentValue() {
        return over(buf, valueStart, next);
    }

    /** Finds a top-level element by name; the cursor is left on it. */
    public boolean find(String ascii) {
        while (next()) {
            if (nameIs(ascii)) {
                return true;
            }
        }
        return false;
    }
}
