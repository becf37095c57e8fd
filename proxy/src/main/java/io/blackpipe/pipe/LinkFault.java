package io.blackpipe.pipe;

import io.blackpipe.topology.MemberAddress;

/**
 * One kind of fault on a member's links to its clients (a latency, a bandwidth, an idle timeout): the one in force,
 * which each connection reads as its bytes go, with the marks and timed end of its kind ({@link FaultClock}).
 * Changed under its MemberListener's lock.
 */
final class LinkFault<T> {
    final FaultClock clock = new FaultClock();
    /** "latency", "bandwidth", "idle timeout": for the log. */
    private final String kind;
    private volatile T inForce;

    LinkFault(String kind) {
        this.kind = kind;
    }

    /** The one in force, or null. */
    T inForce() {
        return inForce;
    }

    /** {@code fault} is in force from now, in place of the last one. */
    void put(T fault) {
        inForce = fault;
    }

    /**
     * Ends the one in force now, and logs it. What is on its way already keeps its pace, and what is sent from now on
     * goes at once; the connections an idle timeout forgot stay so (their clients learn of it when they send).
     */
    void end(ProxyLog log, MemberAddress member) {
        clock.cancel();
        if (inForce != null) {
            inForce = null;
            log.info(kind + " of member " + member + " ended");
        }
    }

    /** The listener closes: nothing is in force any more, and nothing ends on time. */
    void close() {
        clock.cancel();
        inForce = null;
    }
}
