package io.blackpipe.wire;

import io.netty.buffer.ByteBuf;

/** A checked view of an OP_REPLY frame (answers to the legacy OP_QUERY handshake). */
public final class OpReply {
    static final int FIELDS_LENGTH = 4 + 8 + 4 + 4;

    private final int responseFlags;
    private final long cursorId;
    private final int startingFrom;
    private final int numberReturned;
    private final int firstDocumentOffset;
    private final int end;

    private OpReply(int responseFlags, long cursorId, int startingFrom, int numberReturned, int firstDocumentOffset, int end) {
        this.responseFlags = responseFlags;
        this.cursorId = cursorId;
        this.startingFrom = startingFrom;
        this.numberReturned = numberReturned;
        this.firstDocumentOffset = firstDocumentOffset;
        this.end = end;
    }

    public static OpReply parse(ByteBuf frame) {
        int start = frame.readerIndex();
        int end = start + Header.messageLength(frame);
        int pos = start + Frames.HEADER_LENGTH;
        if (end - pos < FIELDS_LENGTH) {
            throw new MalformedMessageException("OP_REPLY too short");
        }
        int flags = frame.getIntLE(pos);
        long cursorId = frame.getLongLE(pos + 4);
        int startingFrom = frame.getIntLE(pos + 12);
        int numberReturned = frame.getIntLE(pos + 16);
        int documents = pos + FIELDS_LENGTH;
        int doc = documents;
        for (int i = 0; i < numberReturned; i++) {
            doc += BsonCursor.checkedLength(frame, doc, end);
        }
        if (numberReturned < 0 || doc != end) {
            throw new MalformedMessageException("OP_REPLY numberReturned " + numberReturned + " does not match its documents");
        }
        return new OpReply(flags, cursorId, startingFrom, numberReturned, documents, end);
    }

    public int responseFlags() {
        return responseFlags;
    }

    public long cursorId() {
        return cursorId;
    }

    public int startingFrom() {
        return startingFrom;
    }

    public int numberReturned() {
        return numberReturned;
    }

    public int firstDocumentOffset() {
        return firstDocumentOffset;
    }

    public int end() {
        return end;
    }
}
