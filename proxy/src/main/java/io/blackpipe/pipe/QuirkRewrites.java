package io.blackpipe.pipe;

import io.blackpipe.topology.MemberQuirks;
import io.blackpipe.wire.BsonCursor;
import io.blackpipe.wire.BsonIo;
import io.blackpipe.wire.Header;
import io.blackpipe.wire.Messages;
import io.blackpipe.wire.OpCode;
import io.blackpipe.wire.OpMsg;
import io.blackpipe.wire.ReadPreference;
import io.blackpipe.wire.WriteConcern;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import org.bson.BsonDocument;
import org.bson.BsonInt32;

/**
 * A command as a member with {@link MemberQuirks} (jongodb) takes what a mongod would take as it
 * came: without a $readPreference other than primary (the driver chose the member by it, and the
 * member acted on it), a transaction's end without any $readPreference where the member refuses even primary
 * there, and with w:1 for w:0 (the request still asks for no reply, and the reply the
 * member sends all the same is dropped: see AwaitedReplies). The one real node behind simulated
 * members always gets its read preferences dropped.
 */
final class QuirkRewrites {
    /** The one real node behind simulated members, as a simulated secondary passes it what it serves. */
    static final MemberQuirks SIMULATED_NODE = new MemberQuirks(true, false, false, false, false, false, false, false, false);

    private QuirkRewrites() {
    }

    /** {@code frame} itself when nothing in it is refused (or it is no OP_MSG), else a copy as the member takes it; {@code frame} is then released. */
    static ByteBuf asTheMemberTakesIt(ByteBufAllocator alloc, ByteBuf frame, MemberQuirks quirks) {
        if (!quirks.rewritesRequests() || Header.opCode(frame) != OpCode.OP_MSG) {
            return frame;
        }
        OpMsg msg = OpMsg.parse(frame);
        boolean readPreference = quirks.primaryReadsOnly() && !ReadPreference.mode(frame, msg).equals("primary")
                || quirks.transactionEndsRefuseReadPreference() && endsATransaction(frame, msg) && ReadPreference.carried(frame, msg);
        boolean unacknowledged = quirks.refusesUnacknowledged() && WriteConcern.unacknowledged(frame, msg);
        if (!readPreference && !unacknowledged) {
            return frame;
        }
        BsonDocument body = BsonIo.decode(frame, msg.bodyOffset(), msg.sectionsEnd());
        if (readPreference) {
            body.remove("$readPreference");
        }
        if (unacknowledged) {
            body.getDocument("writeConcern").put("w", new BsonInt32(1));
        }
        return rewritten(alloc, frame, msg, body);
    }

    private static boolean endsATransaction(ByteBuf frame, OpMsg msg) {
        BsonCursor body = msg.body(frame);
        return body.next() && (body.nameIs("commitTransaction") || body.nameIs("abortTransaction"));
    }

    /** A copy of {@code frame} without its $readPreference; {@code frame} is released. */
    static ByteBuf withoutReadPreference(ByteBufAllocator alloc, ByteBuf frame, OpMsg msg) {
        BsonDocument body = BsonIo.decode(frame, msg.bodyOffset(), msg.sectionsEnd());
        body.remove("$readPreference");
        return rewritten(alloc, frame, msg, body);
    }

    private static ByteBuf rewritten(ByteBufAllocator alloc, ByteBuf frame, OpMsg msg, BsonDocument body) {
        ByteBuf copy = Messages.opMsgWithBody(alloc, frame, msg, body);
        frame.release();
        return copy;
    }
}
