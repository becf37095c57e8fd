package io.blackpipe.wire;

import io.netty.buffer.ByteBuf;
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
        BsonCursor body = msg.body(frame);
        while (body.next()) {
            if (body.nameIs("$clusterTime") || body.nameIs("readConcern") || body.nameIs("lsid")
                    || body.nameIs("txnNumber") || body.nameIs("maxTimeMS")) {
                continue;
            }
            int start = body.elementOffset();
            update(crc, frame, start, body.valueEnd() - start);
        }
        // the kind-1 sections, before and after the body section (its kind byte precedes bodyOffset)
        int sectionsStart = frame.readerIndex() + Frames.HEADER_LENGTH + 4;
        int bodyEnd = msg.bodyOffset() + frame.getIntLE(msg.bodyOffset());
        update(crc, frame, sectionsStart, msg.bodyOffset() - 1 - sectionsStart);
        update(crc, frame, bodyEnd, msg.sectionsEnd() - bodyEnd);
        return crc.getValue();
    }

    private static void update(CRC32C crc, ByteBuf frame, int start, int length) {
        if (length <= 0) {
            return;
        }
        if (frame.nioBufferCount() == 1) {
            crc.update(frame.nioBuffer(start, length));
        } else {
            byte[] bytes = new byte[length];
            frame.getBytes(start, bytes);
            crc.update(bytes);
        }
    }
}
