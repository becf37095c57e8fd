package io.blackpipe.wire;

import io.netty.buffer.ByteBuf;
import java.util.zip.CRC32C;

/** The OP_MSG checksum: CRC-32C over every byte of the message before the checksum itself. */
public final class Crc32c {
    private Crc32c() {
    }

    public static int compute(ByteBuf buf, int index, int length) {
        CRC32C crc = new CRC32C();
        if (buf.nioBufferCount() == 1) {
            crc.update(buf.nioBuffer(index, length));
        } else {
            byte[] bytes = new byte[length];
            buf.getBytes(index, bytes);
            crc.update(bytes);
        }
        return (int) crc.getValue();
    }
}
