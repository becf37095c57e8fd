package io.blackpipe.wire;

/**
 * The wire protocol opcodes a deployment speaks: those of today, and the legacy ones servers before 5.1
 * take from older drivers (passed as they come; the member judges them); anything else is refused.
 */
public final class OpCode {
    public static final int OP_REPLY = 1;
    public static final int OP_UPDATE = 2001;
    public static final int OP_INSERT = 2002;
    public static final int OP_QUERY = 2004;
    public static final int OP_GET_MORE = 2005;
    public static final int OP_DELETE = 2006;
    public static final int OP_KILL_CURSORS = 2007;
    public static final int OP_COMPRESSED = 2012;
    public static final int OP_MSG = 2013;

    private OpCode() {
    }

    public static boolean isKnown(int opCode) {
        return opCode == OP_REPLY || opCode == OP_QUERY || opCode == OP_COMPRESSED || opCode == OP_MSG || isLegacy(opCode);
    }

    /** OP_UPDATE, OP_INSERT, OP_GET_MORE, OP_DELETE, OP_KILL_CURSORS: PyMongo 3 still sends OP_GET_MORE to servers before 5.1. */
    public static boolean isLegacy(int opCode) {
        return opCode == OP_UPDATE || opCode == OP_INSERT || opCode == OP_GET_MORE || opCode == OP_DELETE || opCode == OP_KILL_CURSORS;
    }

    public static String name(int opCode) {
        switch (opCode) {
            case OP_REPLY: return "OP_REPLY";
            case OP_QUERY: return "OP_QUERY";
            case OP_COMPRESSED: return "OP_COMPRESSED";
            case OP_MSG: return "OP_MSG";
            case OP_UPDATE: return "OP_UPDATE";
            case OP_INSERT: return "OP_INSERT";
            case OP_GET_MORE: return "OP_GET_MORE";
            case OP_DELETE: return "OP_DELETE";
            case OP_KILL_CURSORS: return "OP_KILL_CURSORS";
            default: return "opcode " + opCode;
        }
    }
}
