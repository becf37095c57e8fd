package io.blackpipe.pipe;

import io.blackpipe.fault.ReplyFate;
import io.blackpipe.observe.Attempt;

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

    InFlight(Attempt attempt, long fingerprint, String fault, ReplyFate fate, boolean forwarded) {
        this.attempt = attempt;
        this.fingerprint = fingerprint;
        this.fault = fault;
        this.fate = fate;
        this.forwarded = forwarded;
        this.awaitedResponseTo = attempt.facts().requestId();
    }
}
