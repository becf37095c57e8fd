package io.blackpipe.testing;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;
import org.bson.BsonBinaryReader;
import org.bson.BsonBinaryWriter;
import org.bson.BsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.codecs.DecoderContext;
import org.bson.codecs.EncoderContext;
import org.bson.io.BasicOutputBuffer;

/**
 * Self-contained MongoDB wire framing for {@link ScriptedMongod} (and for raw-socket tests).
 * Deliberately independent of the proxy's own {@code io.blackpipe.wire} code, because the
 * scripted server is used to validate that code. Plain byte arrays, little-endian throughout.
 */
public final class ScriptedMongodWire {
    public static final int OP_REPLY = 1;
    public static final int OP_QUERY = 2004;
    public static final int OP_COMPRESSED = 2012;
    public static final int OP_MSG = 2013;

    public static final int FLAG_CHECKSUM_PRESENT = 1;
    public static final int FLAG_MORE_TO_COME = 1 << 1;
    public static final int FLAG_EXHAUST_ALLOWED = 1 << 16;
    /** OP_MSG flag bits a receiver must understand (the low 16); only 0 and 1 are defined. */
    static final int REQUIRED_FLAG_MASK = 0xFFFF;
    static final int KNOWN_REQUIRED_FLAGS = FLAG_CHECKSUM_PRESENT | FLAG_MORE_TO_COME;

    /** OP_REPLY responseFlags bit 3, which mongod sets on every command reply. */
    public static final int REPLY_AWAIT_CAPABLE = 8;
    public static final int HEADER_SIZE = 16;

    private static final BsonDocumentCodec CODEC = new BsonDocumentCodec();

    private ScriptedMongodWire() {
    }

    /** A malformed or unsupported message; the server closes the connection on it, as mongod does. */
    public static final class ProtocolException extends IOException {
        public ProtocolException(String message) {
            super(message);
        }

        public ProtocolException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** A decoded OP_MSG. {@code sequences} are the kind-1 sections by identifier, in order. */
    public record OpMsg(int flags, BsonDocument body, Map<String, List<BsonDocument>> sequences,
                        boolean checksumPresent) {
        public boolean moreToCome() {
            return (flags & FLAG_MORE_TO_COME) != 0;
        }

        public boolean exhaustAllowed() {
            return (flags & FLAG_EXHAUST_ALLOWED) != 0;
        }
    }

    /** A decoded OP_QUERY. */
    public record OpQuery(int flags, String fullCollectionName, int numberToSkip, int numberToReturn,
                          BsonDocument query) {
    }

    /** A decoded OP_REPLY. */
    public record OpReply(int responseFlags, long cursorId, int startingFrom, List<BsonDocument> documents) {
    }

    // ---------------------------------------------------------------- framing

    /**
     * Reads one whole message (header included) from {@code in}. Returns null on a clean end of
     * stream before the first byte of a message.
     */
    public static byte[] readMessage(InputStream in, int maxMessageSize) throws IOException {
        byte[] lengthBytes = new byte[4];
        int first = in.read();
        if (first < 0) {
            return null;
        }
        lengthBytes[0] = (byte) first;
        readFully(in, lengthBytes, 1, 3);
        int length = intLE(lengthBytes, 0);
        if (length < HEADER_SIZE || length > maxMessageSize) {
            throw new ProtocolException("invalid messageLength " + length);
        }
        byte[] message = new byte[length];
        System.arraycopy(lengthBytes, 0, message, 0, 4);
        readFully(in, message, 4, length - 4);
        return message;
    }

    private static void readFully(InputStream in, byte[] buf, int off, int len) throws IOException {
        while (len > 0) {
            int n = in.read(buf, off, len);
            if (n < 0) {
                throw new EOFException("connection closed in the middle of a message");
            }
            off += n;
            len -= n;
        }
    }

    public static int intLE(byte[] b, int off) {
        return (b[off] & 0xFF) | (b[off + 1] & 0xFF) << 8 | (b[off + 2] & 0xFF) << 16 | (b[off + 3] & 0xFF) << 24;
    }

    public static long longLE(byte[] b, int off) {
        return (intLE(b, off) & 0xFFFFFFFFL) | ((long) intLE(b, off + 4)) << 32;
    }

    public static void putIntLE(byte[] b, int off, int v) {
        b[off] = (byte) v;
        b[off + 1] = (byte) (v >>> 8);
        b[off + 2] = (byte) (v >>> 16);
        b[off + 3] = (byte) (v >>> 24);
    }

    /** Where {@code needle} first occurs in {@code haystack} (a BSON element's type and name, say); fails if nowhere. */
    public static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i <= haystack.length - needle.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        throw new IllegalStateException("marker not found");
    }

    public static int messageLength(byte[] m) {
        return intLE(m, 0);
    }

    public static int requestId(byte[] m) {
        return intLE(m, 4);
    }

    public static int responseTo(byte[] m) {
        return intLE(m, 8);
    }

    public static int opCode(byte[] m) {
        return intLE(m, 12);
    }

    private static ByteBuffer le(int capacity) {
        return ByteBuffer.allocate(capacity).order(ByteOrder.LITTLE_ENDIAN);
    }

    // ---------------------------------------------------------------- BSON

    public static BsonDocument decodeDocument(byte[] b, int off, int len) {
        ByteBuffer buf = ByteBuffer.wrap(b, off, len).slice().order(ByteOrder.LITTLE_ENDIAN);
        try (BsonBinaryReader reader = new BsonBinaryReader(buf)) {
            return CODEC.decode(reader, DecoderContext.builder().build());
        }
    }

    public static byte[] encodeDocument(BsonDocument doc) {
        BasicOutputBuffer out = new BasicOutputBuffer();
        try (BsonBinaryWriter writer = new BsonBinaryWriter(out)) {
            CODEC.encode(writer, doc, EncoderContext.builder().build());
        }
        return out.toByteArray();
    }

    private static int documentLength(byte[] b, int off, int end) throws ProtocolException {
        if (end - off < 5) {
            throw new ProtocolException("truncated BSON document at offset " + off);
        }
        int len = intLE(b, off);
        if (len < 5 || off + len > end) {
            throw new ProtocolException("BSON document length " + len + " at offset " + off + " overruns its section");
        }
        return len;
    }

    // ---------------------------------------------------------------- CRC-32C

    public static int crc32c(byte[] b, int off, int len) {
        CRC32C crc = new CRC32C();
        crc.update(b, off, len);
        return (int) crc.getValue();
    }

    /** True if the trailing 4 bytes of {@code message} are the CRC-32C of everything before them. */
    public static boolean checksumValid(byte[] message) {
        int len = message.length;
        return len >= HEADER_SIZE + 8 && intLE(message, len - 4) == crc32c(message, 0, len - 4);
    }

    // ---------------------------------------------------------------- OP_MSG

    /** Parses an OP_MSG (header included); the checksum, if flagged, must be valid. */
    public static OpMsg parseOpMsg(byte[] m) throws ProtocolException {
        if (m.length < HEADER_SIZE + 5) {
            throw new ProtocolException("OP_MSG too short: " + m.length);
        }
        int flags = intLE(m, HEADER_SIZE);
        int unknownRequired = flags & REQUIRED_FLAG_MASK & ~KNOWN_REQUIRED_FLAGS;
        if (unknownRequired != 0) {
            throw new ProtocolException("OP_MSG has unknown required flag bits 0x" + Integer.toHexString(unknownRequired));
        }
        boolean checksum = (flags & FLAG_CHECKSUM_PRESENT) != 0;
        int end = m.length;
        if (checksum) {
            if (!checksumValid(m)) {
                throw new ProtocolException("OP_MSG checksum mismatch");
            }
            end -= 4;
        }
        int pos = HEADER_SIZE + 4;
        BsonDocument body = null;
        Map<String, List<BsonDocument>> sequences = new LinkedHashMap<>();
        while (pos < end) {
            int kind = m[pos++] & 0xFF;
            if (kind == 0) {
                if (body != null) {
                    throw new ProtocolException("OP_MSG has more than one kind-0 section");
                }
                int len = documentLength(m, pos, end);
                body = decodeDocument(m, pos, len);
                pos += len;
            } else if (kind == 1) {
                if (end - pos < 4) {
                    throw new ProtocolException("truncated kind-1 section");
                }
                int size = intLE(m, pos);
                int sectionEnd = pos + size;
                if (size < 5 || sectionEnd > end) {
                    throw new ProtocolException("kind-1 section size " + size + " overruns the message");
                }
                int p = pos + 4;
                int nul = p;
                while (nul < sectionEnd && m[nul] != 0) {
                    nul++;
                }
                if (nul >= sectionEnd) {
                    throw new ProtocolException("kind-1 identifier is not terminated");
                }
                String id = new String(m, p, nul - p, StandardCharsets.UTF_8);
                if (sequences.containsKey(id)) {
                    throw new ProtocolException("duplicate document sequence '" + id + "'");
                }
                p = nul + 1;
                List<BsonDocument> docs = new ArrayList<>();
                while (p < sectionEnd) {
                    int len = documentLength(m, p, sectionEnd);
                    docs.add(decodeDocument(m, p, len));
                    p += len;
                }
                sequences.put(id, docs);
                pos = sectionEnd;
            } else {
                throw new ProtocolException("unknown OP_MSG section kind " + kind);
            }
        }
        if (body == null) {
            throw new ProtocolException("OP_MSG has no kind-0 body section");
        }
        return new OpMsg(flags, body, sequences, checksum);
    }

    /**
     * Builds an OP_MSG with one kind-0 body and optional kind-1 sequences. If {@code flags} has
     * checksumPresent the CRC-32C is appended.
     */
    public static byte[] buildOpMsg(int requestId, int responseTo, int flags, BsonDocument body,
                                    Map<String, List<BsonDocument>> sequences) {
        ByteArrayOutputStream sections = new ByteArrayOutputStream();
        sections.write(0);
        sections.writeBytes(encodeDocument(body));
        if (sequences != null) {
            for (Map.Entry<String, List<BsonDocument>> e : sequences.entrySet()) {
                ByteArrayOutputStream seq = new ByteArrayOutputStream();
                seq.writeBytes(e.getKey().getBytes(StandardCharsets.UTF_8));
                seq.write(0);
                for (BsonDocument d : e.getValue()) {
                    seq.writeBytes(encodeDocument(d));
                }
                sections.write(1);
                byte[] size = new byte[4];
                putIntLE(size, 0, seq.size() + 4);
                sections.writeBytes(size);
                sections.writeBytes(seq.toByteArray());
            }
        }
        boolean checksum = (flags & FLAG_CHECKSUM_PRESENT) != 0;
        int length = HEADER_SIZE + 4 + sections.size() + (checksum ? 4 : 0);
        ByteBuffer buf = le(length);
        buf.putInt(length).putInt(requestId).putInt(responseTo).putInt(OP_MSG).putInt(flags);
        buf.put(sections.toByteArray());
        byte[] m = buf.array();
        if (checksum) {
            putIntLE(m, length - 4, crc32c(m, 0, length - 4));
        }
        return m;
    }

    // ---------------------------------------------------------------- OP_QUERY / OP_REPLY

    public static OpQuery parseOpQuery(byte[] m) throws ProtocolException {
        int pos = HEADER_SIZE;
        if (m.length < pos + 4 + 1 + 8 + 5) {
            throw new ProtocolException("OP_QUERY too short: " + m.length);
        }
        int flags = intLE(m, pos);
        pos += 4;
        int nul = pos;
        while (nul < m.length && m[nul] != 0) {
            nul++;
        }
        if (nul >= m.length) {
            throw new ProtocolException("OP_QUERY fullCollectionName is not terminated");
        }
        String ns = new String(m, pos, nul - pos, StandardCharsets.UTF_8);
        pos = nul + 1;
        if (m.length - pos < 8 + 5) {
            throw new ProtocolException("OP_QUERY truncated after the namespace");
        }
        int skip = intLE(m, pos);
        int toReturn = intLE(m, pos + 4);
        pos += 8;
        int len = documentLength(m, pos, m.length);
        BsonDocument query = decodeDocument(m, pos, len);
        return new OpQuery(flags, ns, skip, toReturn, query);
    }

    public static byte[] buildOpQuery(int requestId, int flags, String fullCollectionName, int skip,
                                      int numberToReturn, BsonDocument query) {
        byte[] ns = fullCollectionName.getBytes(StandardCharsets.UTF_8);
        byte[] doc = encodeDocument(query);
        int length = HEADER_SIZE + 4 + ns.length + 1 + 8 + doc.length;
        ByteBuffer buf = le(length);
        buf.putInt(length).putInt(requestId).putInt(0).putInt(OP_QUERY).putInt(flags);
        buf.put(ns).put((byte) 0).putInt(skip).putInt(numberToReturn).put(doc);
        return buf.array();
    }

    public static byte[] buildOpReply(int requestId, int responseTo, int responseFlags, long cursorId,
                                      BsonDocument document) {
        byte[] doc = encodeDocument(document);
        int length = HEADER_SIZE + 4 + 8 + 4 + 4 + doc.length;
        ByteBuffer buf = le(length);
        buf.putInt(length).putInt(requestId).putInt(responseTo).putInt(OP_REPLY);
        buf.putInt(responseFlags).putLong(cursorId).putInt(0).putInt(1).put(doc);
        return buf.array();
    }

    public static OpReply parseOpReply(byte[] m) throws ProtocolException {
        if (m.length < HEADER_SIZE + 20) {
            throw new ProtocolException("OP_REPLY too short: " + m.length);
        }
        int flags = intLE(m, HEADER_SIZE);
        long cursorId = longLE(m, HEADER_SIZE + 4);
        int startingFrom = intLE(m, HEADER_SIZE + 12);
        int numberReturned = intLE(m, HEADER_SIZE + 16);
        int pos = HEADER_SIZE + 20;
        List<BsonDocument> docs = new ArrayList<>();
        for (int i = 0; i < numberReturned; i++) {
            int len = documentLength(m, pos, m.length);
            docs.add(decodeDocument(m, pos, len));
            pos += len;
        }
        if (pos != m.length) {
            throw new ProtocolException("OP_REPLY has " + (m.length - pos) + " trailing bytes");
        }
        return new OpReply(flags, cursorId, startingFrom, docs);
    }

    // ---------------------------------------------------------------- OP_COMPRESSED

    /**
     * Wraps an uncompressed message (header included) into OP_COMPRESSED with the same
     * requestID and responseTo.
     */
    public static byte[] compress(byte[] message, ScriptedMongodCompressor compressor) throws IOException {
        byte[] body = new byte[message.length - HEADER_SIZE];
        System.arraycopy(message, HEADER_SIZE, body, 0, body.length);
        byte[] payload = compressor.compress(body);
        int length = HEADER_SIZE + 9 + payload.length;
        ByteBuffer buf = le(length);
        buf.putInt(length).putInt(requestId(message)).putInt(responseTo(message)).putInt(OP_COMPRESSED);
        buf.putInt(opCode(message)).putInt(body.length).put((byte) compressor.id()).put(payload);
        return buf.array();
    }

    /** The compressorId of an OP_COMPRESSED message. */
    public static int compressorId(byte[] compressed) throws ProtocolException {
        if (compressed.length < HEADER_SIZE + 9) {
            throw new ProtocolException("OP_COMPRESSED too short: " + compressed.length);
        }
        return compressed[HEADER_SIZE + 8] & 0xFF;
    }

    /**
     * Reconstructs the original message from an OP_COMPRESSED: header with the original opcode
     * and length uncompressedSize + 16, same requestID and responseTo, then the decompressed body.
     */
    public static byte[] decompress(byte[] compressed, ScriptedMongodCompressor compressor) throws IOException {
        if (compressed.length < HEADER_SIZE + 9) {
            throw new ProtocolException("OP_COMPRESSED too short: " + compressed.length);
        }
        int originalOpCode = intLE(compressed, HEADER_SIZE);
        int uncompressedSize = intLE(compressed, HEADER_SIZE + 4);
        if (uncompressedSize < 0 || uncompressedSize > 48_000_000) {
            throw new ProtocolException("OP_COMPRESSED uncompressedSize " + uncompressedSize);
        }
        if (originalOpCode == OP_COMPRESSED) {
            throw new ProtocolException("OP_COMPRESSED inside OP_COMPRESSED");
        }
        byte[] payload = new byte[compressed.length - HEADER_SIZE - 9];
        System.arraycopy(compressed, HEADER_SIZE + 9, payload, 0, payload.length);
        byte[] body;
        try {
            body = compressor.decompress(payload, uncompressedSize);
        } catch (IOException | RuntimeException e) {
            throw new ProtocolException(compressor.wireName() + " decompression failed: " + e.getMessage(), e);
        }
        byte[] m = new byte[HEADER_SIZE + body.length];
        putIntLE(m, 0, m.length);
        putIntLE(m, 4, requestId(compressed));
        putIntLE(m, 8, responseTo(compressed));
        putIntLE(m, 12, originalOpCode);
        System.arraycopy(body, 0, m, HEADER_SIZE, body.length);
        return m;
    }
}
