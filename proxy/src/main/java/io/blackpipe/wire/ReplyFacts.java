package io.blackpipe.wire;

import io.netty.buffer.ByteBuf;

/**
 * What counting needs from a reply: did it succeed, its error code, whether it carries a
 * writeConcernError, and whether more replies follow. Read by scanning the body's top level.
 */
public record ReplyFacts(boolean ok, int code, boolean writeConcernError, boolean moreToCome) {
    private static final ReplyFacts OPAQUE = new ReplyFacts(true, 0, false, false);

    public boolean isError() {
        return !ok || writeConcernError;
    }

    public static ReplyFacts of(ByteBuf frame) {
        int opCode = Header.opCode(frame);
        BsonCursor body;
        boolean moreToCome = false;
        if (opCode == OpCode.OP_MSG) {
            OpMsg msg = OpMsg.parse(frame);
            moreToCome = msg.moreToCome();
            body = msg.body(frame);
        } else if (opCode == OpCode.OP_REPLY) {
            OpReply reply = OpReply.parse(frame);
            if (reply.numberReturned() < 1) {
                return OPAQUE;
            }
            body = BsonCursor.over(frame, reply.firstDocumentOffset(), reply.end());
        } else {
            return OPAQUE; // OP_COMPRESSED: never negotiated through the proxy, counted as delivered
        }
        boolean ok = false;
        int code = 0;
        boolean writeConcernError = false;
        while (body.next()) {
            if (body.nameIs("ok") && body.isNumber()) {
                ok = body.doubleValue() == 1.0;
            } else if (body.nameIs("code") && body.isNumber()) {
                code = (int) body.longValue();
            } else if (body.nameIs("writeConcernError") && body.type() == BsonCursor.DOCUMENT) {
                writeConcernError = true;
            }
        }
        return new ReplyFacts(ok, code, writeConcernError, moreToCome);
    }
}
