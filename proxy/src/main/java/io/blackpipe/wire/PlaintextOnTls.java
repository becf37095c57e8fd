package io.blackpipe.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.ssl.NotSslRecordException;
import java.util.List;

/**
 * Goes just before a TLS listener's SslHandler and refuses a connection whose first bytes are a MongoDB
 * message header in the clear, as mongod refuses plaintext on a TLS-only port; anything else passes on to
 * the SslHandler, and this handler leaves the pipeline.
 *
 * <p>Netty's own check misses about one plaintext first message in 256: when the length's low byte is under 128 and
 * the requestID's low byte is 2 or 3, it reads the header as an SSLv2 record's (of up to 16 KB) and waits for
 * the rest. The connection then sat out the handshake timeout, with nothing in the log, instead of closing at
 * once named. A TLS record cannot pass for a header here: its first bytes read as a length of 66 KB or more,
 * and its bytes 12 to 15 (the client's random) would have to spell a known opcode.
 */
public final class PlaintextOnTls extends ByteToMessageDecoder {
    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) throws NotSslRecordException {
        if (in.readableBytes() < Frames.HEADER_LENGTH) {
            return; // a record header or a message header comes whole soon enough; the handshake timeout runs meanwhile
        }
        int start = in.readerIndex();
        int length = in.getIntLE(start);
        int opCode = in.getIntLE(start + 12);
        if (length >= Frames.HEADER_LENGTH && length <= Frames.MAX_MESSAGE_SIZE && OpCode.isKnown(opCode)) {
            String header = ByteBufUtil.hexDump(in, start, Frames.HEADER_LENGTH);
            in.skipBytes(in.readableBytes()); // else the close that follows decodes it again
            throw new NotSslRecordException("an " + OpCode.name(opCode) + " message in plaintext (header " + header + ")");
        }
        ctx.pipeline().remove(this); // what is buffered goes on to the SslHandler
    }
}
