package io.blackpipe.wire;

import io.netty.buffer.ByteBuf;

/** The cursor id a getMore asks for, and the one a cursor-opening reply returns; 0 when there is none. */
public final class CursorIds {
    private CursorIds() {
    }

    /** getMore's own value: {@code {getMore: <id>, collection: ...}}. */
    public static long ofGetMore(ByteBuf frame) {
        BsonCursor body = OpMsg.parse(frame).body(frame);
        return body.next() && body.type() == BsonCursor.INT64 ? body.longValue() : 0;
    }

    /** {@code cursor.id} of a find's or aggregate's reply. */
    public static long ofReply(ByteBuf frame) {
        if (Header.opCode(frame) != OpCode.OP_MSG) {
            return 0;
        }
        BsonCursor body = OpMsg.parse(frame).body(frame);
        if (!body.find("cursor") || body.type() != BsonCursor.DOCUMENT) {
            return 0;
        }
        BsonCursor cursor = body.documentValue();
        return cursor.find("id") && cursor.type() == BsonCursor.INT64 ? cursor.longValue() : 0;
    }
}
