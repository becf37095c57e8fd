package io.blackpipe.wire;

import io.netty.buffer.ByteBuf;

/**
 * What counting needs from a reply: did it succeed, its error code, whether it carries a
 * writeConcernError, and whether more replies follow. Read by scanning the body's top level.
 *
 * @param writeErrors    the reply lists writeErrors (ok: 1, yet some or all of the command's writes were refused)
 * @param writeErrorCode the first write error's code, 0 when none
 * @param n              the reply's n (documents inserted, matched or deleted), -1 when it has none
 * @param writeConcernErrorCode the writeConcernError's code, 0 when none
 */
public record ReplyFacts(boolean ok, int code, boolean writeConcernError, boolean moreToCome,
                         boolean writeErrors, int writeErrorCode, long n, int writeConcernErrorCode) {
    private static final ReplyFacts OPAQUE = new ReplyFacts(true, 0, false, false, false, 0, -1, 0);

    public ReplyFacts(boolean ok, int code, boolean writeConcernError, boolean moreToCome) {
        this(ok, code, writeConcernError, moreToCome, false, 0, -1, 0);
    }

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
        boolean writeErrors = false;
        int writeErrorCode = 0;
        long n = -1;
        int writeConcernErrorCode = 0;
        while (body.next()) {
            if (body.nameIs("ok") && body.isNumber()) {
                ok = body.doubleValue() == 1.0;
            } else if (body.nameIs("code") && body.isNumber()) {
                code = (int) body.longValue();
            } else if (body.nameIs("writeConcernError") && body.type() == BsonCursor.DOCUMENT) {
                writeConcernError = true;
                BsonCursor wce = body.documentValue();
                if (wce.find("code") && wce.isNumber()) {
                    writeConcernErrorCode = (int) wce.longValue();
                }
            } else if (body.nameIs("n") && body.isNumber()) {
                n = body.longValue();
            } else if (body.nameIs("writeErrors") && body.type() == BsonCursor.ARRAY) {
                BsonCursor errors = body.documentValue();
                if (errors.next()) { // an empty array refuses nothing
                    writeErrors = true;
                    if (errors.type() == BsonCursor.DOCUMENT) {
                        BsonCursor first = errors.documentValue();
                        if (first.find("code") && first.isNumber()) {
                            writeErrorCode = (int) first.longValue();
                        }
                    }
                }
            }
        }
        return new ReplyFacts(ok, code, writeConcernError, moreToCome, writeErrors, writeErrorCode, n, writeConcernErrorCode);
    }
}
