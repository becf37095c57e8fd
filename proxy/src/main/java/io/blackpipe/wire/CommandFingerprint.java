package io.blackpipe.wire;

import io.netty.buffer.ByteBuf;
import java.util.zip.CRC32C;

/**
 * A hash of a command body that stays the same when a driver retries it: the fields that
 * legitimately change between attempts ($clusterTime gossip, readConcern's afterClusterTime)
 * and the session fields are left out.
 */
public final class CommandFingerprint {
    private CommandFingerprint() {
    }

    public static long of(ByteBuf frame, OpMsg msg) {
        CRC32C crc = new CRC32C();
        BsonCursor body = msg.body(frame);
        while (body.next()) {
            if (body.nameIs("$clusterTime") || body.nameIs("readConcern") || body.nameIs("lsid")
                    || body.nameIs("txnNumber")) {
                continue;
            }
            int start = body.elementOffset();
            int length = body.valueEnd() - start;
            if (frame.nioBufferCount() == 1) {
                crc.update(frame.nioBuffer(start, length));
            } else {
                byte[] bytes = new byte[length];
                frame.getBytes(start, bytes);
                crc.update(bytes);
            }
        }
        return crc.getValue();
    }
}
