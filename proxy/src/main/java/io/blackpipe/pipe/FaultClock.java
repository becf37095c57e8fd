package io.blackpipe.pipe;

import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The marks and the timed end of one kind of fault, used under its MemberListener's lock. The mark moves on with
 * every fault of its kind, restore and close: an end (timed, or a scenario's) made for an older mark ends
 * nothing, as a timed end that fired while another operation held the listener (too late to cancel, it
 * waited for the lock) must not end the fault that replaced its own.
 */
final class FaultClock {
    /**
     * Ends timed faults. Not a Netty executor: MemberListener.restore() waits for its bind, and a Netty promise
     * refuses to be waited on from an event executor's own thread (GlobalEventExecutor included,
     * which a bind's promise uses until the channel is registered): the end would fail, leaving the
     * member down and an untracked listener bound to its port.
     */
    private static final ScheduledExecutorService FAULT_ENDS = faultEnds();

    private static ScheduledExecutorService faultEnds() {
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, r -> {
            Thread thread = new Thread(r, "blackpipe-fault-end");
            thread.setDaemon(true);
            return thread;
        });
        // a cancelled end (a restore, a newer fault, the proxy closed) leaves the queue at once: kept to its time, an
        // hour's outage held its closed proxy in memory for that hour
        executor.setRemoveOnCancelPolicy(true);
        return executor;
    }

    /** How many timed ends wait in the queue (for tests). */
    static int endsQueued() {
        return ((ScheduledThreadPoolExecutor) FAULT_ENDS).getQueue().size();
    }

    private long mark;
    private ScheduledFuture<?> pendingEnd;

    /** A new fault of this kind: the last one's timed end is off. Returns the new fault's mark. */
    long begin() {
        cancel();
        return mark;
    }

    void endAfter(long millis, Runnable end) {
        if (millis > 0) {
            pendingEnd = FAULT_ENDS.schedule(end, millis, TimeUnit.MILLISECONDS);
        }
    }

    boolean isCurrent(long faultMark) {
        return faultMark == mark;
    }

    void cancel() {
        mark++;
        if (pendingEnd != null) {
            pendingEnd.cancel(false);
            pendingEnd = null;
        }
    }
}
