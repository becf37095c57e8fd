package io.blackpipe.wire;

import io.netty.buffer.ByteBuf;
import io.netty.util.internal.PlatformDependent;
import java.nio.charset.StandardCharsets;

/**
 * The last few strings one connection decoded (command names, databases, collections). A
 * connection repeats the same few names with every command, so comparing bytes against them
 * spares decoding a new String each time. Not thread-safe: one per connection, on its event loop.
 */
public final class RecentStrings {
    private static final int SLOTS = 8;

    private final byte[][] encoded = new byte[SLOTS][];
    private final String[] decoded = new String[SLOTS];
    private int nextSlot;

    /** The UTF-8 string at {@code [offset, offset + length)} of {@code buf}. */
    public String get(ByteBuf buf, int offset, int length) {
        return get(buf, 0, offset, length);
    }

    /**
     * The same, compared in the buffer's memory at {@code address} when it is not 0: for a caller
     * that has checked {@code [offset, offset + length)} lies within the buffer ({@link BsonCursor}).
     */
    String get(ByteBuf buf, long address, int offset, int length) {
        for (int i = 0; i < SLOTS; i++) {
            byte[] bytes = encoded[i];
            if (bytes != null && bytes.length == length
                    && (address != 0 ? sameBytes(address + offset, bytes) : sameBytes(buf, offset, bytes))) {
                return decoded[i];
            }
        }
        byte[] bytes = new byte[length];
        buf.getBytes(offset, bytes);
        String string = new String(bytes, StandardCharsets.UTF_8);
        encoded[nextSlot] = bytes;
        decoded[nextSlot] = string;
        nextSlot = (nextSlot + 1) % SLOTS;
        return string;
    }

    private static boolean sameBytes(long address, byte[] bytes) {
        for (int i = 0; i < bytes.length; i++) {
            if (PlatformDependent.getByte(address + i) != bytes[i]) {
                return false;
            }
        }
        return true;
    }

    private static boolean sameBytes(ByteBuf buf, int offset, byte[] bytes) {
        for (int i = 0; i < bytes.length; i++) {
            if (buf.getByte(offset + i) != bytes[i]) {
                return false;
            }
        }
        return true;
    }
}
