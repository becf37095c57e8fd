package io.blackpipe.wire;

import static io.blackpipe.wire.WireFixtures.bson;
import static io.blackpipe.wire.WireFixtures.buf;
import static io.blackpipe.wire.WireFixtures.bytesOf;
import static io.blackpipe.wire.WireFixtures.opMsg;
import static io.blackpipe.wire.WireFixtures.opQuery;
import static io.blackpipe.wire.WireFixtures.range;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.ssl.NotSslRecordException;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class PlaintextOnTlsTest {
    /** The first record a JDK TLS client sends: its ClientHello. */
    private static byte[] clientHello() throws Exception {
        SSLEngine client = SSLContext.getDefault().createSSLEngine("localhost", 27017);
        client.setUseClientMode(true);
        client.beginHandshake();
        ByteBuffer out = ByteBuffer.allocate(client.getSession().getPacketBufferSize());
        client.wrap(ByteBuffer.allocate(0), out);
        out.flip();
        byte[] record = new byte[out.remaining()];
        out.get(record);
        return record;
    }

    /** What passes the guard, each buffer's bytes in order; the buffers released. */
    private static byte[] passedOn(EmbeddedChannel channel) {
        ByteArrayOutputStream passed = new ByteArrayOutputStream();
        for (ByteBuf piece; (piece = channel.readInbound()) != null; ) {
            passed.writeBytes(bytesOf(piece));
            piece.release();
        }
        return passed.toByteArray();
    }

    @Test
    void aTlsClientHelloPassesWholeInItsPiecesAndTheGuardLeaves() throws Exception {
        byte[] hello = clientHello();
        assertEquals(0x16, hello[0], "a TLS handshake record");
        EmbeddedChannel channel = new EmbeddedChannel(new PlaintextOnTls());
        channel.writeInbound(buf(range(hello, 0, 5)));
        channel.writeInbound(buf(range(hello, 5, 12)));
        assertNotNull(channel.pipeline().get(PlaintextOnTls.class), "12 bytes do not tell: it waits for a header's 16");
        assertEquals(0, passedOn(channel).length, "nothing passes before it knows");
        channel.writeInbound(buf(range(hello, 12, hello.length)));
        assertNull(channel.pipeline().get(PlaintextOnTls.class), "it leaves once it knows");
        assertArrayEquals(hello, passedOn(channel), "the record passes byte for byte");
        channel.writeInbound(buf(new byte[] {0x17, 0x03, 0x03}));
        assertArrayEquals(new byte[] {0x17, 0x03, 0x03}, passedOn(channel), "what follows passes as it comes");
        assertTrue(!channel.finish());
    }

    /** 2 and 3 are the requestIDs Netty's own check took for an SSLv2 record's version. */
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 0x7f03})
    void aPlaintextOpMsgIsRefusedAsNoTlsRecordNamingItsHeader(int requestId) {
        byte[] hello = opMsg(requestId, 0, 0).body("{hello: 1, $db: 'admin'}").build();
        EmbeddedChannel channel = new EmbeddedChannel(new PlaintextOnTls());
        ByteBuf in = buf(hello);
        DecoderException refused = assertThrows(DecoderException.class, () -> channel.writeInbound(in));
        NotSslRecordException cause = assertInstanceOf(NotSslRecordException.class, refused.getCause());
        assertTrue(cause.getMessage().startsWith("an OP_MSG message in plaintext (header "), cause.getMessage());
        assertEquals(0, in.refCnt(), "the refused bytes are released");
        assertEquals(0, passedOn(channel).length, "nothing reaches the TLS layer");
        channel.finishAndReleaseAll();
    }

    @Test
    void aLegacyOpQueryHandshakeInPlaintextIsRefusedToo() {
        byte[] isMaster = opQuery(2, 0, "admin.$cmd", 0, -1, bson("{isMaster: 1}"), null);
        EmbeddedChannel channel = new EmbeddedChannel(new PlaintextOnTls());
        channel.writeInbound(buf(range(isMaster, 0, 8))); // a header can come in pieces
        DecoderException refused = assertThrows(DecoderException.class,
                () -> channel.writeInbound(buf(range(isMaster, 8, isMaster.length))));
        assertTrue(refused.getCause().getMessage().startsWith("an OP_QUERY message in plaintext"), refused.getCause().getMessage());
        channel.finishAndReleaseAll();
    }

    @Test
    void sixteenBytesThatAreNoMongoDbHeaderPassOn() {
        byte[] noise = new byte[16]; // length 0: no header; whatever the TLS layer makes of it is its to say
        EmbeddedChannel channel = new EmbeddedChannel(new PlaintextOnTls());
        channel.writeInbound(ByteBufAllocator.DEFAULT.buffer().writeBytes(noise));
        assertArrayEquals(noise, passedOn(channel));
        assertNull(channel.pipeline().get(PlaintextOnTls.class));
        channel.finishAndReleaseAll();
    }
}
