package io.blackpipe.wire;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.ReferenceCountUtil;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.zip.CRC32C;
import org.bson.BsonDocument;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;

/**
 * Test-only builder of wire-protocol byte fixtures. Everything here is written by hand
 * (little-endian via {@link ByteBuffer}, BSON via {@link RawBsonDocument} or by hand), never
 * through the main code's {@code Messages}/{@code Header} builders, so the tests do not check the
 * code against itself.
 */
public final class WireFixtures {
    public static final int OP_REPLY = 1;
    public static final int OP_QUERY = 2004;
    public static final int OP_COMPRESSED = 2012;
    public static final int OP_MSG = 2013;

    private WireFixtures() {
    }

    // ---------------------------------------------------------------- primitives

    public static byte[] le32(int value) {
        return ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(value).array();
    }

    public static byte[] le64(long value) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(value).array();
    }

    public static byte[] cstring(String s) {
        byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
        return Arrays.copyOf(utf8, utf8.length + 1);
    }

    public static byte[] bytes(int... values) {
        byte[] out = new byte[values.length];
        for (int i = 0; i < values.length; i++) {
            out[i] = (byte) values[i];
        }
        return out;
    }

    public static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] part : parts) {
            out.writeBytes(part);
        }
        return out.toByteArray();
    }

    public static byte[] range(byte[] bytes, int from, int to) {
        return Arrays.copyOfRange(bytes, from, to);
    }

    public static int readLe32(byte[] bytes, int index) {
        return ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).getInt(index);
    }

    /** Overwrites 4 bytes at {@code index} with a little-endian int, on a copy. */
    public static byte[] patchLe32(byte[] bytes, int index, int value) {
        byte[] copy = bytes.clone();
        ByteBuffer.wrap(copy).order(ByteOrder.LITTLE_ENDIAN).putInt(index, value);
        return copy;
    }

    public static byte[] patchByte(byte[] bytes, int index, int value) {
        byte[] copy = bytes.clone();
        copy[index] = (byte) value;
        return copy;
    }

    public static int crc32c(byte[] bytes, int offset, int length) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, offset, length);
        return (int) crc.getValue();
    }

    // ---------------------------------------------------------------- BSON

    public static byte[] bson(BsonDocument document) {
        RawBsonDocument raw = new RawBsonDocument(document, new BsonDocumentCodec());
        org.bson.ByteBuf buffer = raw.getByteBuffer();
        byte[] out = new byte[buffer.remaining()];
        buffer.get(out);
        return out;
    }

    public static byte[] bson(String json) {
        return bson(BsonDocument.parse(json));
    }

    public static BsonDocument decode(byte[] bson) {
        return new RawBsonDocument(bson).toBsonDocument();
    }

    /** A BSON document written by hand: int32 length, the elements, 0x00. */
    public static byte[] document(byte[]... elements) {
        byte[] body = concat(elements);
        return concat(le32(4 + body.length + 1), body, new byte[] {0});
    }

    /** A BSON element written by hand: type byte, name cstring, raw value bytes. */
    public static byte[] element(int type, String name, byte[]... value) {
        return concat(new byte[] {(byte) type}, cstring(name), concat(value));
    }

    /** A BSON string value: int32 length (with the 0x00), the UTF-8 bytes, 0x00. */
    public static byte[] stringValue(String s) {
        byte[] c = cstring(s);
        return concat(le32(c.length), c);
    }

    // ---------------------------------------------------------------- messages

    public static byte[] header(int messageLength, int requestId, int responseTo, int opCode) {
        return ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN)
                .putInt(messageLength).putInt(requestId).putInt(responseTo).putInt(opCode).array();
    }

    /** A header with the right length followed by {@code body}. */
    public static byte[] message(int requestId, int responseTo, int opCode, byte[] body) {
        return concat(header(16 + body.length, requestId, responseTo, opCode), body);
    }

    public static OpMsgBuilder opMsg(int requestId, int responseTo, int flags) {
        return new OpMsgBuilder(requestId, responseTo, flags);
    }

    /** Builds an OP_MSG section by section; the checksum (bit 0 of the flags) is computed at build. */
    public static final class OpMsgBuilder {
        private final int requestId;
        private final int responseTo;
        private final int flags;
        private final List<byte[]> sections = new ArrayList<>();
        private boolean corruptChecksum;

        private OpMsgBuilder(int requestId, int responseTo, int flags) {
            this.requestId = requestId;
            this.responseTo = responseTo;
            this.flags = flags;
        }

        public OpMsgBuilder body(byte[] bson) {
            sections.add(concat(new byte[] {0}, bson));
            return this;
        }

        public OpMsgBuilder body(String json) {
            return body(bson(json));
        }

        public OpMsgBuilder sequence(String identifier, byte[]... documents) {
            byte[] id = cstring(identifier);
            byte[] docs = concat(documents);
            sections.add(concat(new byte[] {1}, le32(4 + id.length + docs.length), id, docs));
            return this;
        }

        /** Appends bytes as they are, for sections that break the rules. */
        public OpMsgBuilder raw(byte[] bytes) {
            sections.add(bytes);
            return this;
        }

        public OpMsgBuilder corruptChecksum() {
            this.corruptChecksum = true;
            return this;
        }

        public byte[] build() {
            byte[] sectionBytes = concat(sections.toArray(new byte[0][]));
            boolean checksum = (flags & 1) != 0;
            int length = 16 + 4 + sectionBytes.length + (checksum ? 4 : 0);
            byte[] withoutChecksum = concat(header(length, requestId, responseTo, OP_MSG), le32(flags), sectionBytes);
            if (!checksum) {
                return withoutChecksum;
            }
            int crc = crc32c(withoutChecksum, 0, withoutChecksum.length);
            return concat(withoutChecksum, le32(corruptChecksum ? ~crc : crc));
        }
    }

    public static byte[] opQuery(int requestId, int flags, String fullCollectionName, int numberToSkip,
                                 int numberToReturn, byte[] query, byte[] returnFieldsSelector) {
        byte[] body = concat(le32(flags), cstring(fullCollectionName), le32(numberToSkip), le32(numberToReturn), query,
                returnFieldsSelector == null ? new byte[0] : returnFieldsSelector);
        return message(requestId, 0, OP_QUERY, body);
    }

    public static byte[] opReply(int requestId, int responseTo, int responseFlags, long cursorId, int startingFrom,
                                 int numberReturned, byte[]... documents) {
        byte[] body = concat(le32(responseFlags), le64(cursorId), le32(startingFrom), le32(numberReturned), concat(documents));
        return message(requestId, responseTo, OP_REPLY, body);
    }

    // ---------------------------------------------------------------- ByteBufs

    /** A buffer from the default (leak-tracked) allocator holding {@code bytes}; the caller releases it. */
    public static ByteBuf buf(byte[] bytes) {
        return ByteBufAllocator.DEFAULT.buffer(bytes.length).writeBytes(bytes);
    }

    /** The readable bytes of {@code buf}, without moving its reader index. */
    public static byte[] bytesOf(ByteBuf buf) {
        byte[] out = new byte[buf.readableBytes()];
        buf.getBytes(buf.readerIndex(), out);
        return out;
    }

    /** Runs {@code body} on a buffer holding {@code bytes} and releases the buffer afterwards. */
    public static <T> T withBuf(byte[] bytes, Function<ByteBuf, T> body) {
        ByteBuf buf = buf(bytes);
        try {
            return body.apply(buf);
        } finally {
            ReferenceCountUtil.release(buf);
        }
    }

    public static void useBuf(byte[] bytes, Consumer<ByteBuf> body) {
        withBuf(bytes, b -> {
            body.accept(b);
            return null;
        });
    }

    /** Asserts that {@code parser} rejects {@code bytes} with a message containing {@code reason}. */
    public static MalformedMessageException assertMalformed(byte[] bytes, Function<ByteBuf, ?> parser, String reason) {
        MalformedMessageException e = withBuf(bytes, b -> assertThrows(MalformedMessageException.class, () -> parser.apply(b)));
        assertTrue(e.getMessage() != null && e.getMessage().contains(reason),
                () -> "expected the message to name '" + reason + "', got: " + e.getMessage());
        return e;
    }
}
