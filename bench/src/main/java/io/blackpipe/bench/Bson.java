package io.blackpipe.bench;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;

/**
 * Just enough BSON for the wire responder's hot path, straight on Netty buffers: writing replies
 * without building documents, and reading the few request fields it needs without decoding.
 */
final class Bson {
    static final byte DOUBLE = 0x01;
    static final byte STRING = 0x02;
    static final byte DOCUMENT = 0x03;
    static final byte ARRAY = 0x04;
    static final byte BOOLEAN = 0x08;
    static final byte INT32 = 0x10;
    static final byte INT64 = 0x12;

    private Bson() {
    }

    // ---- writing ----

    /** Starts a document (or array) body: reserves its length; returns where it starts. */
    static int begin(ByteBuf out) {
        int at = out.writerIndex();
        out.writeIntLE(0);
        return at;
    }

    /** Ends what {@link #begin} started: the terminating 0, then the length. */
    static void end(ByteBuf out, int at) {
        out.writeByte(0);
        out.setIntLE(at, out.writerIndex() - at);
    }

    static void key(ByteBuf out, byte type, String key) {
        out.writeByte(type);
        out.writeCharSequence(key, StandardCharsets.US_ASCII);
        out.writeByte(0);
    }

    /** An array index as a key, without a String. */
    static void indexKey(ByteBuf out, byte type, int index) {
        out.writeByte(type);
        if (index >= 10) {
            int div = 1;
            while (index / div >= 10) {
                div *= 10;
            }
            for (; div > 0; div /= 10) {
                out.writeByte('0' + (index / div) % 10);
            }
        } else {
            out.writeByte('0' + index);
        }
        out.writeByte(0);
    }

    static int beginDocument(ByteBuf out, String key) {
        key(out, DOCUMENT, key);
        return begin(out);
    }

    static int beginArray(ByteBuf out, String key) {
        key(out, ARRAY, key);
        return begin(out);
    }

    static void int32(ByteBuf out, String key, int value) {
        key(out, INT32, key);
        out.writeIntLE(value);
    }

    static void int64(ByteBuf out, String key, long value) {
        key(out, INT64, key);
        out.writeLongLE(value);
    }

    static void dbl(ByteBuf out, String key, double value) {
        key(out, DOUBLE, key);
        out.writeLongLE(Double.doubleToRawLongBits(value));
    }

    static void bool(ByteBuf out, String key, boolean value) {
        key(out, BOOLEAN, key);
        out.writeByte(value ? 1 : 0);
    }

    static void string(ByteBuf out, String key, String value) {
        key(out, STRING, key);
        byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        out.writeIntLE(bytes.length + 1);
        out.writeBytes(bytes);
        out.writeByte(0);
    }

    // ---- reading (absolute offsets into a buffer holding a whole message) ----

    /** The offset just past the NUL of the C string at {@code at}. */
    static int skipCString(ByteBuf in, int at) {
        int nul = in.indexOf(at, in.writerIndex(), (byte) 0);
        if (nul < 0) {
            throw new IllegalArgumentException("unterminated C string at " + at);
        }
        return nul + 1;
    }

    static String cString(ByteBuf in, int at) {
        int end = skipCString(in, at) - 1;
        return in.toString(at, end - at, StandardCharsets.UTF_8);
    }

    /** The size of a value of {@code type} starting at {@code at}. */
    static int valueSize(ByteBuf in, byte type, int at) {
        switch (type) {
            case 0x01: case 0x09: case 0x11: case 0x12: return 8;
            case 0x02: case 0x0D: case 0x0E: return 4 + in.getIntLE(at);
            case 0x03: case 0x04: case 0x0F: return in.getIntLE(at);
            case 0x05: return 5 + in.getIntLE(at);
            case 0x06: case 0x0A: case (byte) 0xFF: case 0x7F: return 0;
            case 0x07: return 12;
            case 0x08: return 1;
            case 0x0B: return skipCString(in, skipCString(in, at)) - at;
            case 0x0C: return 4 + in.getIntLE(at) + 12;
            case 0x10: return 4;
            case 0x13: return 16;
            default: throw new IllegalArgumentException("unknown BSON type " + type + " at " + at);
        }
    }

    static boolean isNumber(byte type) {
        return type == DOUBLE || type == INT32 || type == INT64;
    }

    static long number(ByteBuf in, byte type, int at) {
        return switch (type) {
            case DOUBLE -> (long) Double.longBitsToDouble(in.getLongLE(at));
            case INT32 -> in.getIntLE(at);
            case INT64 -> in.getLongLE(at);
            default -> throw new IllegalArgumentException("not a number: BSON type " + type);
        };
    }

    static String string(ByteBuf in, int at) {
        int length = in.getIntLE(at);
        return in.toString(at + 4, length - 1, StandardCharsets.UTF_8);
    }

    /** Visits the elements of the document at {@code doc}: type, key, value offset. */
    interface Visitor {
        void element(byte type, String key, int valueAt);
    }

    static void forEach(ByteBuf in, int doc, Visitor visitor) {
        int end = doc + in.getIntLE(doc) - 1;
        int at = doc + 4;
        while (at < end) {
            byte type = in.getByte(at);
            int keyAt = at + 1;
            int valueAt = skipCString(in, keyAt);
            String key = in.toString(keyAt, valueAt - 1 - keyAt, StandardCharsets.US_ASCII);
            visitor.element(type, key, valueAt);
            at = valueAt + valueSize(in, type, valueAt);
        }
    }

    /** How many elements the document or array at {@code doc} has. */
    static int count(ByteBuf in, int doc) {
        int end = doc + in.getIntLE(doc) - 1;
        int at = doc + 4;
        int n = 0;
        while (at < end) {
            byte type = in.getByte(at);
            int valueAt = skipCString(in, at + 1);
            at = valueAt + valueSize(in, type, valueAt);
            n++;
        }
        return n;
    }
}
