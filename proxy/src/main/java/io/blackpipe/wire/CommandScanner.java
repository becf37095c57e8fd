package io.blackpipe.wire;

import io.netty.buffer.ByteBuf;
import java.util.UUID;

/**
 * Reads the {@link CommandFacts} of one connection's requests, keeping what every scan needs from
 * one command to the next instead of allocating it anew: the names the connection sent lately,
 * the fingerprint's runs and checksum, and the last session id (a pooled session often comes
 * back on the same connection). Not thread-safe: one per connection, on its event loop. What it
 * returns does not change when it scans again (a session id handed out twice is one immutable UUID).
 *
 * <p>The cursors are not kept: a cursor moved from frame to frame (its fields no longer final, a
 * buffer reference stored into a long-lived object) made reading a find about 10% slower in
 * bench/per-command than a new cursor per document.
 */
public final class CommandScanner {
    final RecentStrings recent = new RecentStrings();
    final CommandFingerprint.Runs runs = new CommandFingerprint.Runs();
    private UUID lastSessionId;

    /** The facts of an OP_MSG request. */
    public CommandFacts ofOpMsg(ByteBuf frame, OpMsg msg) {
        return CommandFacts.scan(frame, msg, OpCode.OP_MSG, msg.flags(), msg.body(frame), null, this);
    }

    /** The session id of 16 bytes at {@code index}, the same instance as the last one when the bytes are. */
    UUID sessionId(ByteBuf frame, int index) {
        long high = frame.getLong(index);
        long low = frame.getLong(index + 8);
        UUID last = lastSessionId;
        if (last == null || last.getMostSignificantBits() != high || last.getLeastSignificantBits() != low) {
            last = new UUID(high, low);
            lastSessionId = last;
        }
        return last;
    }
}
