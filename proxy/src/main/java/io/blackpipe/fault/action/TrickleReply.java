package io.blackpipe.fault.action;

import io.blackpipe.fault.FaultAction;
import io.blackpipe.fault.Interception;

/**
 * Forward at once and send the reply in pieces, one every interval: a slow link, for one command.
 * Each read of the client gets bytes well within its socket timeout, so only an operation timeout
 * (the driver's timeoutMS) ends the wait.
 */
public final class TrickleReply implements FaultAction {
    private final int bytesPerPiece;
    private final long intervalMillis;

    /** @param bytesPerPiece at least 1; more than a reply has sends it whole */
    public TrickleReply(long bytesPerPiece, long intervalMillis) {
        this.bytesPerPiece = (int) Math.min(bytesPerPiece, Integer.MAX_VALUE); // a frame is at most 48 MB anyway
        this.intervalMillis = intervalMillis;
    }

    @Override
    public String name() {
        return "trickleReply";
    }

    @Override
    public void apply(Interception command) {
        command.forward(reply -> reply.passInPieces(bytesPerPiece, intervalMillis));
    }
}
