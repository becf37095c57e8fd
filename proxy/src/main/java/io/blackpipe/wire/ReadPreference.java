package io.blackpipe.wire;

import io.netty.buffer.ByteBuf;

/** The $readPreference mode of an OP_MSG command, read by scanning; "primary" when absent. */
public final class ReadPreference {
    private ReadPreference() {
    }

    public static String mode(ByteBuf frame, OpMsg msg) {
        BsonCursor body = msg.body(frame);
        if (body.find("$readPreference") && body.type() == BsonCursor.DOCUMENT) {
            BsonCursor preference = body.documentValue();
            if (preference.find("mode") && preference.type() == BsonCursor.STRING) {
                return preference.stringValue();
            }
        }
        return "primary";
    }

    /** Whether the command carries a $readPreference at all, primary included. */
    public static boolean carried(ByteBuf frame, OpMsg msg) {
        return msg.body(frame).find("$readPreference");
    }
}
