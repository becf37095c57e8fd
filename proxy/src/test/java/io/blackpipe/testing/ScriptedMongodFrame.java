package io.blackpipe.testing;

import org.bson.BsonDocument;

/**
 * One message as {@link ScriptedMongod} saw it on the wire, received or sent.
 *
 * @param direction      RECEIVED (client to server) or SENT (server to client)
 * @param connectionId   the server-side connection number (the hello reply's connectionId)
 * @param requestId      header requestID
 * @param responseTo     header responseTo
 * @param opCode         the opcode on the wire (2012 when compressed)
 * @param originalOpCode the opcode of the (decompressed) message; equals opCode when not compressed
 * @param compressor     the OP_COMPRESSED compressor, or null when the frame was not compressed
 * @param flags          OP_MSG flagBits, OP_QUERY flags or OP_REPLY responseFlags
 * @param commandName    the command's name (first body key) for requests; for replies, the name of
 *                       the command answered; null if the frame could not be decoded
 * @param document       the OP_MSG body (requests: with kind-1 sequences merged in as arrays), the
 *                       OP_QUERY query, or the OP_REPLY document; null if undecodable
 * @param nanoTime       System.nanoTime() when the frame was read completely or written
 */
public record ScriptedMongodFrame(Direction direction, int connectionId, int requestId, int responseTo,
                                  int opCode, int originalOpCode, ScriptedMongodCompressor compressor,
                                  int flags, String commandName, BsonDocument document, byte[] raw,
                                  long nanoTime) {

    public enum Direction { RECEIVED, SENT }

    public ScriptedMongodFrame {
        raw = raw.clone();
        document = document == null ? null : document.clone();
    }

    /** The exact bytes on the wire (compressed if the frame was compressed); a copy. */
    @Override
    public byte[] raw() {
        return raw.clone();
    }

    @Override
    public BsonDocument document() {
        return document == null ? null : document.clone();
    }

    public boolean compressed() {
        return compressor != null;
    }

    public boolean isOpMsg() {
        return originalOpCode == ScriptedMongodWire.OP_MSG;
    }

    public boolean moreToCome() {
        return isOpMsg() && (flags & ScriptedMongodWire.FLAG_MORE_TO_COME) != 0;
    }

    public boolean exhaustAllowed() {
        return isOpMsg() && (flags & ScriptedMongodWire.FLAG_EXHAUST_ALLOWED) != 0;
    }

    public boolean checksumPresent() {
        return isOpMsg() && (flags & ScriptedMongodWire.FLAG_CHECKSUM_PRESENT) != 0;
    }

    @Override
    public String toString() {
        return direction + " conn#" + connectionId + " req=" + requestId + " respTo=" + responseTo
                + " op=" + opCode + (compressed() ? "(" + originalOpCode + " via " + compressor.wireName() + ")" : "")
                + " flags=0x" + Integer.toHexString(flags) + " cmd=" + commandName + " len=" + raw.length;
    }
}
