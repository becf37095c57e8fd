package io.blackpipe.wire;

import io.netty.buffer.ByteBuf;

/** Reads the 16-byte header every message starts with, from a frame that starts at its reader index. */
public final class Header {
    private Header() {
    }

    public static int messageLength(ByteBuf frame) {
        return frame.getIntLE(frame.readerIndex());
    }

    public static int requestId(ByteBuf frame) {
        return frame.getIntLE(frame.readerIndex() + 4);
    }

    public static int responseTo(ByteBuf frame) {
        return frame.getIntLE(frame.readerIndex() + 8);
    }

    public static int opCode(ByteBuf frame) {
        return frame.getIntLE(frame.readerIndex() + 12);
    }

    /** Writes a header; the caller patches messageLength when the body's size is known. */
    public static void write(ByteBuf out, int messageLength, int requestId, int responseTo, int opCode) {
        out.writeIntLE(messageLength).writeIntLE(requestId).writeIntLE(responseTo).writeIntLE(opCode);
    }
}
