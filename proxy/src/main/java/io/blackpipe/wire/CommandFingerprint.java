package io.blackpipe.wire;

import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * A hash of a command that stays the same when a driver retries it: the fields that
 * legitimately change between attempts ($clusterTime gossip, readConcern's afterClusterTime,
 * maxTimeMS, which a driver with timeoutMS recomputes for every attempt) and the session fields
 * are left out. Document sequences (an insert's documents, an update's updates) are part of it.
 */
public final class CommandFingerprint {
    private CommandFingerprint() {
    }

    public static long of(ByteBuf frame, OpMsg msg) {
        CRC32C crc = new CRC32C();
        // One NIO view of the frame serves every range (a view per range was an allocation per BSON
        // field of every command with a session: the proxy's largest allocation site). The internal
        // view of a pooled buffer is reused, not made anew; it is only read here, on this thread.
        ByteBuffer view = frame.nioBufferCount() == 1 ? frame.internalNioBuffer(frame.readerIndex(), frame.readableBytes()) : null;
        int viewStart = view == null ? 0 : view.position();
        BsonCursor body = msg.body(frame);
        // Kept elements that follow each other are hashed in one update: the same CRC, fewer calls.
        int runStart = 0;
        int runEnd = 0;
        while (body.next()) {
            if (body.nameIs("$clusterTime") || body.nameIs("readConcern") || body.nameIs("lsid")
                    || body.nameIs("txnNumber") || body.nameIs("maxTimeMS")) {
                update(crc, frame, view, viewStart, runStart, runEnd - runStart);
                runStart = runEnd = 0;
                continue;
            }
            if (runEnd == 0) {
                runStart = body.elementOffset();
            }
            runEnd = body.valueEnd();
        }
        update(crc, frame, view, viewStart, runStart, runEnd - runStart);
        // the kind-1 sections, before and after the body section (its kind byte precedes bodyOffset)
        int sectionsStart = frame.readerIndex() + Frames.HEADER_LENGTH + 4;
        int bodyEnd = msg.bodyOffset() + frame.getIntLE(msg.bodyOffset());
        update(crc, frame, view, viewStart, sectionsStart, msg.bodyOffset() - 1 - sectionsStart);
        update(crc, frame, view, viewStart, bodyEnd, msg.sectionsEnd() - bodyEnd);
        return crc.getValue();
    }

    private static void update(CRC32C crc, ByteBuf frame, ByteBuffer view, int viewStart, int start, int length) {
        if (length <= 0) {
            return;
        }
        if (view != null) {
            // the view starts where the frame does, at whatever position the view gave it
            int offset = viewStart + start - frame.readerIndex();
            view.limit(offset + length); // first the limit (a position beyond it is pulled back), then the position
            view.position(offset);
            crc.update(view);
        } else {
            byte[] bytes = new byte[length];
            frame.getBytes(start, bytes);
            crc.update(bytes);
        }
    }
}
