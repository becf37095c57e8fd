package io.blackpipe.pipe;

import io.blackpipe.fault.ReplyFate;
import io.blackpipe.observe.Attempt;
import io.netty.buffer.ByteBuf;

/** The application command a connection is waiting on, until its last reply (or the connection's end). */
final class InFlight {
    final Attempt attempt;
    final long fingerprint;
    final String fault;
    final ReplyFate fate;
    final boolean forwarded;
    /** The responseTo the next reply carries: the request id, then each streamed reply's own id. */
    int awaitedResponseTo;
    boolean fateDecided;
    /** The proxy's answer to it, waiting for the replies to the commands sent before it (see {@link AwaitedReplies}); else null. */
    ByteBuf answer;

    InFlight(Attempt attempt, long fingerprint, String fault, ReplyFate fate, boolean forwarded) {
        this.attempt = attempt;
        this.fingerprint = fingerprint;
        this.fault = fault;
        this.fate = fate;
        this.forwarded = forwarded;
        this.awaitedResponseTo = attempt.facts().requestId();
    }
}
