package io.blackpipe.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class Crc32cTest {
    /** The CRC-32C check value of "123456789" (RFC 3720, appendix B.4). */
    private static final int CHECK = 0xE3069283;
    private static final byte[] DIGITS = "123456789".getBytes(StandardCharsets.US_ASCII);

    @Test
    void knownCheckValueOverAHeapBufferRegion() {
        byte[] padded = WireFixtures.concat(new byte[] {42, 42, 42}, DIGITS, new byte[] {7});
        WireFixtures.useBuf(padded, buf -> assertEquals(CHECK, Crc32c.compute(buf, 3, DIGITS.length)));
    }

    @Test
    void directBufferGivesTheSameValue() {
        ByteBuf direct = ByteBufAllocator.DEFAULT.directBuffer().writeBytes(DIGITS);
        try {
            assertEquals(CHECK, Crc32c.compute(direct, 0, DIGITS.length));
        } finally {
            ReferenceCountUtil.release(direct);
        }
    }

    @Test
    void compositeBufferSpanningComponentsGivesTheSameValue() {
        CompositeByteBuf composite = ByteBufAllocator.DEFAULT.compositeBuffer();
        try {
            composite.addComponent(true, ByteBufAllocator.DEFAULT.buffer().writeBytes(new byte[] {9, '1', '2', '3', '4'}));
            composite.addComponent(true, ByteBufAllocator.DEFAULT.buffer().writeBytes(new byte[] {'5', '6', '7', '8', '9'}));
            assertEquals(2, composite.nioBufferCount(), "the region really spans two components");
            assertEquals(CHECK, Crc32c.compute(composite, 1, DIGITS.length));
        } finally {
            ReferenceCountUtil.release(composite);
        }
    }

    @Test
    void matchesJavaUtilCrc32cOverAWholeMessage() {
        byte[] frame = WireFixtures.opMsg(3, 0, 0).body("{hello: 1, $db: 'admin'}").build();
        WireFixtures.useBuf(frame, buf ->
                assertEquals(WireFixtures.crc32c(frame, 0, frame.length), Crc32c.compute(buf, 0, frame.length)));
    }
}
