package io.blackpipe.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.List;
import org.bson.BsonDocument;

/**
 * Builds the messages the proxy writes itself: synthesized replies and rewritten copies of
 * received ones. Every built message carries a correct length, and a checksum when its flags
 * ask for one.
 */
public final class Messages {
    private Messages() {
    }

    public static ByteBuf opMsg(ByteBufAllocator alloc, int requestId, int responseTo, int flags, BsonDocument body) {
        byte[] bson = BsonIo.encode(body);
        ByteBuf out = alloc.buffer(Frames.HEADER_LENGTH + 4 + 1 + bson.length + 4);
        Header.write(out, 0, requestId, responseTo, OpCode.OP_MSG);
        out.writeIntLE(flags).writeByte(0).writeBytes(bson);
        return finishOpMsg(out, flags);
    }

    /**
     * A copy of {@code frame} with its body section replaced; header ids, flags and any document
     * sequences are kept, and the checksum is recomputed when the original had one.
     */
    public static ByteBuf opMsgWithBody(ByteBufAllocator alloc, ByteBuf frame, OpMsg msg, BsonDocument body) {
        byte[] bson = BsonIo.encode(body);
        int start = frame.readerIndex();
        int oldBodyLength = frame.getIntLE(msg.bodyOffset());
        ByteBuf out = alloc.buffer(Header.messageLength(frame) - oldBodyLength + bson.length);
        out.writeBytes(frame, start, msg.bodyOffset() - start); // header, flags, sections before the body
        out.writeBytes(bson);
        int afterBody = msg.bodyOffset() + oldBodyLength;
        out.writeBytes(frame, afterBody, msg.sectionsEnd() - afterBody);
        return finishOpMsg(out, msg.flags());
    }

    private static ByteBuf finishOpMsg(ByteBuf out, int flags) {
        if ((flags & OpMsg.CHECKSUM_PRESENT) != 0) {
            out.setIntLE(0, out.writerIndex() + 4);
            out.writeIntLE(Crc32c.compute(out, 0, out.writerIndex()));
        }
        out.setIntLE(0, out.writerIndex());
        return out;
    }

    public static ByteBuf opReply(ByteBufAllocator alloc, int requestId, int responseTo, int responseFlags,
                                  long cursorId, int startingFrom, List<BsonDocument> documents) {
        ByteBuf out = alloc.buffer();
        Header.write(out, 0, requestId, responseTo, OpCode.OP_REPLY);
        out.writeIntLE(responseFlags).writeLongLE(cursorId).writeIntLE(startingFrom).writeIntLE(documents.size());
        for (BsonDocument document : documents) {
            out.writeBytes(BsonIo.encode(document));
        }
        out.setIntLE(0, out.writerIndex());
        return out;
    }

    /** A copy of an OP_REPLY with its documents replaced; header ids and reply fields are kept. */
    public static ByteBuf opReplyWithDocuments(ByteBufAllocator alloc, ByteBuf frame, OpReply reply, List<BsonDocument> documents) {
        return opReply(alloc, Header.requestId(frame), Header.responseTo(frame), reply.responseFlags(),
                reply.cursorId(), reply.startingFrom(), documents);
    }

    /** A copy of an OP_QUERY with its query document replaced (the field selector, if any, is kept). */
    public static ByteBuf opQueryWithQuery(ByteBufAllocator alloc, ByteBuf frame, OpQuery query, BsonDocument replacement) {
        byte[] bson = BsonIo.encode(replacement);
        int start = frame.readerIndex();
        int end = start + Header.messageLength(frame);
        ByteBuf out = alloc.buffer(end - start + bson.length);
        out.writeBytes(frame, start, query.queryOffset() - start);
        out.writeBytes(bson);
        out.writeBytes(frame, query.queryEnd(), end - query.queryEnd());
        out.setIntLE(0, out.writerIndex());
        return out;
    }
}
