package io.blackpipe.wire;

/** The wire protocol opcodes a modern deployment speaks; anything else is refused. */
public final class OpCode {
    public static final int OP_REPLY = 1;
    public static final int OP_QUERY = 2004;
    public static final int OP_COMPRESSED = 2012;
    public static final int OP_MSG = 2013;

    private OpCode() {
    }

    public static boolean isKnown(int opCode) {
        return opCode == OP_REPLY || opCode == OP_QUERY || opCode == OP_COMPRESSED || opCode == OP_MSG;
    }

    public static String name(int opCode) {
        switch (opCode) {
            case OP_REPLY: return "OP_REPLY";
            case OP_QUERY: return "OP_QUERY";
            case OP_COMPRESSED: return "OP_COMPRESSED";
            case OP_MSG: return "OP_MSG";
            default: return "opcode " + opCode;
        }
    }
}
