package io.blackpipe.wire;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import org.bson.BsonArray;
import org.bson.BsonDocument;

/**
 * A checked view of one OP_MSG frame: flag bits, where the body document is, and where the
 * sections end. Parsing validates the structure (flags, section kinds and sizes, checksum) but
 * reads no document beyond its length.
 */
public final class OpMsg {
    public static final int CHECKSUM_PRESENT = 1;
    public static final int MORE_TO_COME = 1 << 1;
    public static final int EXHAUST_ALLOWED = 1 << 16;
    /** Bits 0-15 must be understood by the receiver; 2-15 are not defined by the protocol. */
    private static final int UNKNOWN_REQUIRED_BITS = 0xFFFF & ~(CHECKSUM_PRESENT | MORE_TO_COME);

    private final int flags;
    private final int bodyOffset;
    private final int sectionsEnd;

    private OpMsg(int flags, int bodyOffset, int sectionsEnd) {
        this.flags = flags;
        this.bodyOffset = bodyOffset;
        this.sectionsEnd = sectionsEnd;
    }

    /** Validates {@code frame} (a whole message starting at its reader index) as an OP_MSG. */
    public static OpMsg parse(ByteBuf frame) {
        int start = frame.readerIndex();
        int length = Header.messageLength(frame);
        int end = start + length;
        if (length < Frames.HEADER_LENGTH + 4 + 1 + 5) {
            throw new MalformedMessageException("OP_MSG of " + length + " bytes is too short to hold a body");
        }
        int flags = frame.getIntLE(start + Frames.HEADER_LENGTH);
        if ((flags & UNKNOWN_REQUIRED_BITS) != 0) {
            throw new MalformedMessageException("OP_MSG has unknown required flag bits 0x"
                    + Integer.toHexString(flags & UNKNOWN_REQUIRED_BITS));
        }
        int sectionsEnd = end;
        if ((flags & CHECKSUM_PRESENT) != 0) {
            sectionsEnd = end - 4;
            verifyChecksum(frame, start, length);
        }
        int bodyOffset = -1;
        int pos = start + Frames.HEADER_LENGTH + 4;
        while (pos < sectionsEnd) {
            byte kind = frame.getByte(pos++);
            if (kind == 0) {
                if (bodyOffset >= 0) {
                    throw new MalformedMessageException("OP_MSG has more than one body section");
                }
                bodyOffset = pos;
                pos += BsonCursor.checkedLength(frame, pos, sectionsEnd);
            } else if (kind == 1) {
                pos += checkedSequenceLength(frame, pos, sectionsEnd);
            } else {
                throw new MalformedMessageException("OP_MSG has unknown section kind " + kind);
            }
        }
        if (bodyOffset < 0) {
            throw new MalformedMessageException("OP_MSG has no body section");
        }
        return new OpMsg(flags, bodyOffset, sectionsEnd);
    }

    private static void verifyChecksum(ByteBuf frame, int start, int length) {
        if (length < Frames.HEADER_LENGTH + 4 + 4) {
            throw new MalformedMessageException("OP_MSG too short for its checksum");
        }
        int expected = frame.getIntLE(start + length - 4);
        int actual = Crc32c.compute(frame, start, length - 4);
        if (expected != actual) {
            throw new MalformedMessageException("OP_MSG checksum mismatch");
        }
    }

    /** A kind-1 section: int32 size (counting itself), identifier cstring, then whole documents. */
    private static int checkedSequenceLength(ByteBuf frame, int pos, int limit) {
        if (limit - pos < 4) {
            throw new MalformedMessageException("OP_MSG document sequence truncated");
        }
        int size = frame.getIntLE(pos);
        if (size < 5 || size > limit - pos) {
            throw new MalformedMessageException("OP_MSG document sequence size " + size + " is out of bounds");
        }
        int end = pos + size;
        int idEnd = frame.indexOf(pos + 4, end, (byte) 0);
        if (idEnd < 0) {
            throw new MalformedMessageException("OP_MSG document sequence identifier is not terminated");
        }
        int doc = idEnd + 1;
        while (doc < end) {
            doc += BsonCursor.checkedLength(frame, doc, end);
        }
        return size;
    }

    public int flags() {
        return flags;
    }

    public boolean moreToCome() {
        return (flags & MORE_TO_COME) != 0;
    }

    public boolean exhaustAllowed() {
        return (flags & EXHAUST_ALLOWED) != 0;
    }

    public boolean checksumPresent() {
        return (flags & CHECKSUM_PRESENT) != 0;
    }

    /** Absolute index of the body document in the frame. */
    public int bodyOffset() {
        return bodyOffset;
    }

    /** Absolute index where the sections end (the checksum, if any, follows). */
    public int sectionsEnd() {
        return sectionsEnd;
    }

    public BsonCursor body(ByteBuf frame) {
        return BsonCursor.over(frame, bodyOffset, sectionsEnd);
    }

    /**
     * How many documents the command's {@code field} holds (an insert's documents, an update's updates), as a
     * document sequence of that identifier or as an array in the body; 0 when it has none. Reads lengths only.
     */
    public int statements(ByteBuf frame, String field) {
        int pos = frame.readerIndex() + Frames.HEADER_LENGTH + 4;
        while (pos < sectionsEnd) {
            byte kind = frame.getByte(pos++);
            int end = pos + frame.getIntLE(pos);
            if (kind == 1) {
                int idEnd = frame.indexOf(pos + 4, end, (byte) 0);
                if (frame.toString(pos + 4, idEnd - pos - 4, StandardCharsets.UTF_8).equals(field)) {
                    int count = 0;
                    for (int doc = idEnd + 1; doc < end; doc += frame.getIntLE(doc)) {
                        count++;
                    }
                    return count;
                }
            }
            pos = end;
        }
        BsonCursor body = body(frame);
        while (body.next()) {
            if (body.type() == BsonCursor.ARRAY && body.nameIs(field)) {
                BsonCursor elements = BsonCursor.over(frame, body.valueOffset(), body.valueEnd());
                int count = 0;
                while (elements.next()) {
                    count++;
                }
                return count;
            }
        }
        return 0;
    }

    /**
     * {@link #command}, or null when a document in it frames right but does not read (an unknown element type): a
     * request the proxy only notes things of goes to the member as it came, which judges it as it would without the proxy.
     */
    public BsonDocument commandIfReadable(ByteBuf frame) {
        try {
            return command(frame);
        } catch (MalformedMessageException unreadable) {
            return null;
        }
    }

    /**
     * The command as the server reads it: the body, with each document sequence (an insert's documents,
     * an update's updates) as an array under its identifier. Decodes every document: for the few requests
     * a rule asks to look into, not for every one.
     */
    public BsonDocument command(ByteBuf frame) {
        BsonDocument command = BsonIo.decode(frame, bodyOffset, sectionsEnd);
        int pos = frame.readerIndex() + Frames.HEADER_LENGTH + 4;
        while (pos < sectionsEnd) {
            byte kind = frame.getByte(pos++);
            if (kind == 0) {
                pos += frame.getIntLE(pos);
                continue;
            }
            int end = pos + frame.getIntLE(pos);
            int idEnd = frame.indexOf(pos + 4, end, (byte) 0);
            BsonArray documents = new BsonArray();
            for (int doc = idEnd + 1; doc < end; doc += frame.getIntLE(doc)) {
                documents.add(BsonIo.decode(frame, doc, end));
            }
            command.put(frame.toString(pos + 4, idEnd - pos - 4, StandardCharsets.UTF_8), documents);
            pos = end;
        }
        return command;
    }
}
