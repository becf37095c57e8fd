package io.blackpipe.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.Test;

class HeaderTest {
    @Test
    void readsTheFourFieldsRelativeToTheReaderIndex() {
        byte[] bytes = WireFixtures.concat(new byte[] {-1, -1}, WireFixtures.header(0x01020304, -77, 0x7FFFFFFF, 2013));
        WireFixtures.useBuf(bytes, buf -> {
            buf.readerIndex(2);
            assertEquals(0x01020304, Header.messageLength(buf));
            assertEquals(-77, Header.requestId(buf));
            assertEquals(0x7FFFFFFF, Header.responseTo(buf));
            assertEquals(2013, Header.opCode(buf));
            assertEquals(2, buf.readerIndex());
        });
    }

    @Test
    void writesLittleEndianFields() {
        ByteBuf out = ByteBufAllocator.DEFAULT.buffer();
        try {
            Header.write(out, 48, 5, 6, 1);
            assertArrayEquals(WireFixtures.header(48, 5, 6, 1), WireFixtures.bytesOf(out));
        } finally {
            ReferenceCountUtil.release(out);
        }
    }
}
