package io.blackpipe.wire;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;

/**
 * A checked view of an OP_QUERY frame: drivers send it for the legacy handshake, and older ones (PyMongo 3.x)
 * for a legacy find, which passes as it came.
 */
public final class OpQuery {
    private final int flags;
    private final String fullCollectionName;
    private final int queryOffset;
    private final int queryEnd;

    private OpQuery(int flags, String fullCollectionName, int queryOffset, int queryEnd) {
        this.flags = flags;
        this.fullCollectionName = fullCollectionName;
        this.queryOffset = queryOffset;
        this.queryEnd = queryEnd;
    }

    public static OpQuery parse(ByteBuf frame) {
        int start = frame.readerIndex();
        int end = start + Header.messageLength(frame);
        int pos = start + Frames.HEADER_LENGTH;
        if (end - pos < 4 + 1 + 8 + 5) {
            throw new MalformedMessageException("OP_QUERY too short");
        }
        int flags = frame.getIntLE(pos);
        pos += 4;
        int nameEnd = frame.indexOf(pos, end, (byte) 0);
        if (nameEnd < 0) {
            throw new MalformedMessageException("OP_QUERY collection name is not terminated");
        }
        String name = frame.toString(pos, nameEnd - pos, StandardCharsets.UTF_8);
        pos = nameEnd + 1 + 8; // numberToSkip, numberToReturn
        int queryLength = BsonCursor.checkedLength(frame, pos, end);
        int afterQuery = pos + queryLength;
        if (afterQuery < end) {
            BsonCursor.checkedLength(frame, afterQuery, end); // returnFieldsSelector
        }
        return new OpQuery(flags, name, pos, afterQuery);
    }

    public int flags() {
        return flags;
    }

    public String fullCollectionName() {
        return fullCollectionName;
    }

    /** The database part of the collection name ("admin" for "admin.$cmd"). */
    public String database() {
        int dot = fullCollectionName.indexOf('.');
        return dot < 0 ? fullCollectionName : fullCollectionName.substring(0, dot);
    }

    public int queryOffset() {
        return queryOffset;
    }

    public int queryEnd() {
        return queryEnd;
    }

    /** The command document, looking inside a legacy {$query: {...}} wrapper if there is one. */
    public BsonCursor command(ByteBuf frame) {
        BsonCursor query = BsonCursor.over(frame, queryOffset, queryEnd);
        if (query.next() && query.nameIs("$query") && query.type() == BsonCursor.DOCUMENT) {
            return query.documentValue();
        }
        return BsonCursor.over(frame, queryOffset, queryEnd);
    }

    /** {@link #command} decoded whole (see {@link OpMsg#command}). */
    public org.bson.BsonDocument commandDocument(ByteBuf frame) {
        org.bson.BsonDocument query = BsonIo.decode(frame, queryOffset, queryEnd);
        return !query.isEmpty() && query.getFirstKey().equals("$query") && query.isDocument("$query") ? query.getDocument("$query") : query;
    }
}
