package io.blackpipe.pipe;

import io.blackpipe.wire.BsonIo;
import io.blackpipe.wire.Header;
import io.blackpipe.wire.Messages;
import io.blackpipe.wire.OpCode;
import io.blackpipe.wire.OpMsg;
import io.blackpipe.wire.ReadPreference;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import org.bson.BsonDocument;

/**
 * A command as a node that takes only primary reads (jongodb) should get it: without a
 * $readPreference other than primary. The driver chose the member by it and the member acted on it;
 * the one real node behind simulated members, or a jongodb proxied as it is, would refuse it.
 */
final class ReadPreferenceDrop {
    private ReadPreferenceDrop() {
    }

    /** {@code frame} itself when it has no such read preference (or is no OP_MSG), else a copy without it; {@code frame} is then released. */
    static ByteBuf unlessPrimary(ByteBufAllocator alloc, ByteBuf frame) {
        if (Header.opCode(frame) != OpCode.OP_MSG) {
            return frame;
        }
        OpMsg msg = OpMsg.parse(frame);
        return ReadPreference.mode(frame, msg).equals("primary") ? frame : dropped(alloc, frame, msg);
    }

    /** A copy of {@code frame} without its $readPreference; {@code frame} is released. */
    static ByteBuf dropped(ByteBufAllocator alloc, ByteBuf frame, OpMsg msg) {
        BsonDocument body = BsonIo.decode(frame, msg.bodyOffset(), msg.sectionsEnd());
        body.remove("$readPreference");
        ByteBuf stripped = Messages.opMsgWithBody(alloc, frame, msg, body);
        frame.release();
        return stripped;
    }
}
