package io.blackpipe.wire;

import io.netty.buffer.ByteBuf;

/** The writeConcern of an OP_MSG command, read by scanning. */
public final class WriteConcern {
    private WriteConcern() {
    }

    /** Whether the command asks for no acknowledgement: a writeConcern whose w is the number 0. */
    public static boolean unacknowledged(ByteBuf frame, OpMsg msg) {
        BsonCursor body = msg.body(frame);
        if (body.find("writeConcern") && body.type() == BsonCursor.DOCUMENT) {
            BsonCursor concern = body.documentValue();
            return concern.find("w") && concern.isNumber() && concern.doubleValue() == 0;
        }
        return false;
    }

    /** The writeConcern's w when it is a number; NaN without one (the server's default) or for a name (majority, a tag set). */
    public static double numericW(ByteBuf frame, OpMsg msg) {
        BsonCursor body = msg.body(frame);
        if (body.find("writeConcern") && body.type() == BsonCursor.DOCUMENT) {
            BsonCursor concern = body.documentValue();
            if (concern.find("w") && concern.isNumber()) {
                return concern.doubleValue();
            }
        }
        return Double.NaN;
    }
}
