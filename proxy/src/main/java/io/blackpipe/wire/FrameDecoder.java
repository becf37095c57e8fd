package io.blackpipe.wire;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.util.List;

/**
 * Cuts the byte stream into whole messages. Each message is passed on as a retained slice of
 * the received bytes, so forwarding it untouched sends exactly what arrived.
 *
 * <p>Only the header is checked here (length bounds, known opcode); the body is checked by the
 * view of its opcode. A violation raises {@link MalformedMessageException}.
 */
public final class FrameDecoder extends ByteToMessageDecoder {
    private final int maxMessageSize;
    /** A client's requests: a message cut while it came hands on the command it began with (see {@link TruncatedFrame}). */
    private final boolean keepsCutCommands;
    private boolean failed; // a bad header was seen: the stream cannot be framed any more

    public FrameDecoder() {
        this(Frames.MAX_MESSAGE_SIZE, false);
    }

    public FrameDecoder(int maxMessageSize) {
        this(maxMessageSize, false);
    }

    private FrameDecoder(int maxMessageSize, boolean keepsCutCommands) {
        this.maxMessageSize = maxMessageSize;
        this.keepsCutCommands = keepsCutCommands;
    }

    /** The decoder of a client's requests, whose cut message hands on its command; a member's replies need none. */
    public static FrameDecoder forRequests() {
        return new FrameDecoder(Frames.MAX_MESSAGE_SIZE, true);
    }

    /**
     * The common case, one read holding exactly one message with nothing buffered before it, passes
     * the received buffer itself: no slice to allocate and, when it is written on, no second NIO view
     * of it. Everything else (partial, several, or bad messages) goes through the cumulating decoder.
     */
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        if (msg instanceof ByteBuf in && !failed && !internalBuffer().isReadable() && isOneWholeFrame(in)) {
            ctx.fireChannelRead(in);
            return;
        }
        super.channelRead(ctx, msg);
    }

    private boolean isOneWholeFrame(ByteBuf in) {
        int readable = in.readableBytes();
        if (readable < Frames.HEADER_LENGTH) {
            return false;
        }
        int length = in.getIntLE(in.readerIndex());
        return length == readable && length <= maxMessageSize && OpCode.isKnown(in.getIntLE(in.readerIndex() + 12));
    }

    /**
     * One message a call: the next is cut only once this one was handled, and not at all once that one failed the
     * connection ({@link #discardTheRestOf}).
     */
    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        cut(in, out);
    }

    /**
     * {@code channel} failed on a message the next handlers read (a body its view refused): nothing after it is cut. The
     * rest, cut anyway, logged each its own refusal, and the bytes left at the close a message cut short: up to 25 lines
     * for one bad message.
     */
    public static void discardTheRestOf(Channel channel) {
        FrameDecoder decoder = channel.pipeline().get(FrameDecoder.class);
        if (decoder != null) {
            decoder.failed = true;
        }
    }

    private void cut(ByteBuf in, List<Object> out) {
        if (failed) {
            in.skipBytes(in.readableBytes());
            return;
        }
        if (in.readableBytes() >= Frames.HEADER_LENGTH) {
            int start = in.readerIndex();
            int length = in.getIntLE(start);
            try {
                checkHeader(length, in.getIntLE(start + 12));
            } catch (MalformedMessageException e) {
                // Discard what is buffered, or the close that follows decodes it again and raises twice.
                failed = true;
                String speaking = OtherProtocols.spokenBy(in, start);
                in.skipBytes(in.readableBytes());
                throw speaking == null ? e : new MalformedMessageException(e.getMessage() + " (" + speaking + ")");
            }
            if (in.readableBytes() < length) {
                return;
            }
            out.add(in.readRetainedSlice(length));
        }
    }

    private void checkHeader(int length, int opCode) {
        if (length < Frames.HEADER_LENGTH) {
            throw new MalformedMessageException("message length " + length + " is shorter than the 16-byte header");
        }
        if (length > maxMessageSize) {
            throw new MalformedMessageException(
                    "message length " + length + " exceeds the limit of " + maxMessageSize + " bytes");
        }
        if (!OpCode.isKnown(opCode)) {
            throw new MalformedMessageException("unknown opcode " + opCode);
        }
    }

    @Override
    protected void decodeLast(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        int cutBefore;
        do { // the peer closed: what it sent whole still counts
            cutBefore = out.size();
            cut(in, out);
        } while (out.size() > cutBefore);
        if (in.isReadable()) {
            int missing = in.readableBytes() >= 4 ? in.getIntLE(in.readerIndex()) - in.readableBytes() : -1;
            byte[] head = keepsCutCommands ? commandHeadOf(in) : null;
            in.skipBytes(in.readableBytes());
            ctx.fireUserEventTriggered(new TruncatedFrame(missing, head));
        }
    }

    /**
     * An OP_MSG of its own made of a cut OP_MSG's first part, when that part is whole: the header, flags (without a
     * checksum, which covered the whole) and body, without the document sequences after it; null for anything else.
     * The body comes first and names the command, its lsid and txnNumber: enough to count the attempt a driver made.
     */
    private static byte[] commandHeadOf(ByteBuf in) {
        int start = in.readerIndex();
        int headerAndFlags = Frames.HEADER_LENGTH + 4;
        if (in.readableBytes() < headerAndFlags + 1 + 4 || in.getIntLE(start + 12) != OpCode.OP_MSG
                || in.getByte(start + headerAndFlags) != 0) {
            return null;
        }
        int bodyLength = in.getIntLE(start + headerAndFlags + 1);
        if (bodyLength < 5 || in.readableBytes() < headerAndFlags + 1 + bodyLength) { // the header bounded the whole
            return null;
        }
        byte[] head = new byte[headerAndFlags + 1 + bodyLength];
        in.getBytes(start, head);
        int length = head.length;
        int flags = in.getIntLE(start + Frames.HEADER_LENGTH) & ~OpMsg.CHECKSUM_PRESENT;
        for (int i = 0; i < 4; i++) {
            head[i] = (byte) (length >>> (8 * i));
            head[Frames.HEADER_LENGTH + i] = (byte) (flags >>> (8 * i));
        }
        return head;
    }

    /**
     * Fired when the peer closed in the middle of a message; {@code missingBytes} is -1 when unknown; {@code commandHead}
     * is the command the message began with, as an OP_MSG of its own, when its body came whole, else null.
     */
    public record TruncatedFrame(int missingBytes, byte[] commandHead) {
        /** Only the count, with no head. */
        public TruncatedFrame(int missingBytes) {
            this(missingBytes, null);
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof TruncatedFrame that && missingBytes == that.missingBytes
                    && java.util.Arrays.equals(commandHead, that.commandHead);
        }

        @Override
        public int hashCode() {
            return 31 * missingBytes + java.util.Arrays.hashCode(commandHead);
        }

        @Override
        public String toString() {
            return "TruncatedFrame[missingBytes=" + missingBytes + ", commandHead=" + (commandHead == null ? "none" : commandHead.length + " bytes") + "]";
        }

        /** What was missing, for the log. */
        public String describe() {
            return missingBytes < 0 ? "header incomplete" : missingBytes + (missingBytes == 1 ? " byte" : " bytes") + " missing";
        }
    }
}
