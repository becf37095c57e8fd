package io.blackpipe.wire;

/** Facts about the message header shared by every opcode. */
public final class Frames {
    /** The server's maxMessageSizeBytes: nothing larger is a legal message. */
    public static final int MAX_MESSAGE_SIZE = 48_000_000;
    public static final int HEADER_LENGTH = 16;

    private Frames() {
    }
}
