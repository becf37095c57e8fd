package io.blackpipe.fault.action;

import io.blackpipe.fault.FaultAction;
import io.blackpipe.fault.Interception;

/**
 * Forward at once and cut the reply off: the client gets its first bytes, then the connection
 * closes (FIN), as after Toxiproxy's limit_data. The command ran; the client cannot know.
 */
public final class TruncateReply implements FaultAction {
    private final int bytes;

    /** @param bytes at least 1; a reply this long or shorter loses its last byte, so it is always cut */
    public TruncateReply(long bytes) {
        this.bytes = (int) Math.min(bytes, Integer.MAX_VALUE); // a frame is at most 48 MB anyway
    }

    @Override
    public String name() {
        return "truncateReply";
    }

    @Override
    public void apply(Interception command) {
        command.forward(reply -> reply.truncateAndClose(bytes));
    }
}
