package io.blackpipe.pipe;

import io.blackpipe.fault.Plural;
import io.blackpipe.topology.HostNames;
import io.blackpipe.topology.Member;
import io.blackpipe.topology.MemberAddress;
import java.net.SocketAddress;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * What the log says of members the proxy cannot dial: the first failed dial of a member a warning, the next ones counted
 * a line a second per member, and one line when a dial of it succeeds again. A line per client connection flooded the
 * log (a killed member with one driver connected gave 26 lines in 12 s, more with each client and member), and no line
 * said when the member was back.
 * <p>
 * A member that flaps (refusing some dials and answering others: restarting over and over, a load balancer in front
 * failing half its health checks) gave a warning and a "reachable again" line at every turn, each turn read as a new
 * outage. Its turns are one outage now: after the warning and the first return (both said at once, as operators and
 * tests look for them), its refusals and returns are counted, a line a second, each line saying where the member is now.
 * A line held back to keep to one a second is said when its second is up, by a flush on the proxy's event loops (whose
 * shutdown cancels it), so the latest line about a member is true within about a second even if no client dials again.
 * <p>
 * A refusal more than {@link #NEW_OUTAGE_AFTER_NANOS} (10 s) after the member was back is a new outage with its own
 * warning. A restart loop or a load balancer's failing check turns within a few seconds, so a member back for 10 s with no
 * refusal came back for real; a longer window would let a new outage soon after a real return pass as a counted line,
 * unseen by an operator's grep for the warning, and a shorter one make a slow flapper's every turn a new outage again.
 * <p>
 * Each member's state changes under its own lock: its connections live on several event loops, and a refusal on one
 * racing a return on another must neither count one return twice nor leave the last line saying the wrong state.
 */
final class UnreachableMembers {
    static final long LINE_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);
    static final long NEW_OUTAGE_AFTER_NANOS = TimeUnit.SECONDS.toNanos(10);

    /** Runs a held-back line's flush after a delay: the proxy's event loops, or a test's hand. */
    interface Later {
        /** Runs {@code flush} in {@code delayNanos}; may throw RejectedExecutionException once the proxy is closing. */
        void run(Runnable flush, long delayNanos);

        static Later on(ScheduledExecutorService executor) {
            return (flush, delayNanos) -> executor.schedule(flush, delayNanos, TimeUnit.NANOSECONDS);
        }
    }

    private final ConcurrentHashMap<MemberAddress, MemberLines> members = new ConcurrentHashMap<>();
    private final ProxyLog log;
    private final LongSupplier nanoClock;
    private final Later later;
    private final long lineIntervalNanos;
    private final long newOutageAfterNanos;

    /** Held-back lines are flushed on {@code flushes}: the proxy's event loops, so that closing the proxy cancels them. */
    UnreachableMembers(ProxyLog log, ScheduledExecutorService flushes) {
        this(log, System::nanoTime, Later.on(flushes), LINE_INTERVAL_NANOS, NEW_OUTAGE_AFTER_NANOS);
    }

    /** For tests: a clock, a scheduler and intervals of their own. */
    UnreachableMembers(ProxyLog log, LongSupplier nanoClock, Later later, long lineIntervalNanos, long newOutageAfterNanos) {
        this.log = log;
        this.nanoClock = nanoClock;
        this.later = later;
        this.lineIntervalNanos = lineIntervalNanos;
        this.newOutageAfterNanos = newOutageAfterNanos;
    }

    /** A dial of {@code member} for {@code client} failed with {@code cause}. */
    void refused(Member member, SocketAddress client, Throwable cause) {
        members.computeIfAbsent(member.upstream(), m -> new MemberLines(member)).refused(HostNames.ofPeer(client), cause.getMessage());
    }

    /** A dial of {@code member} succeeded: a member that had refused some says it is back (see the class comment). */
    void reached(Member member) {
        MemberLines lines = members.get(member.upstream());
        if (lines != null && lines.down) { // every successful dial comes here: one of a member that is up takes no lock
            lines.reached();
        }
    }

    /** One member's outage, from its first refusal, and what of it the log has said; guarded by its own lock. */
    private final class MemberLines {
        private final Member member;
        /** Volatile for reached()'s check without the lock; changed only under it. */
        private volatile boolean down;
        private long outageStartedNanos;
        private long upSinceNanos;
        private long refusedInAll;
        private long returnsInAll;
        private long refusedSinceSaid;
        private long returnsSinceSaid;
        private long lastSaidNanos;
        private boolean flushPending;
        private String lastClient;
        private String lastCause;

        MemberLines(Member member) {
            this.member = member;
        }

        synchronized void refused(String client, String cause) {
            long now = nanoClock.getAsLong();
            lastClient = client;
            lastCause = cause;
            if (refusedInAll == 0 || (!down && now - upSinceNanos > newOutageAfterNanos)) {
                beginOutage(now);
                return;
            }
            refusedInAll++;
            refusedSinceSaid++;
            down = true;
            sayOrHoldBack(now);
        }

        synchronized void reached() {
            if (!down) {
                return; // another loop's dial said it first
            }
            long now = nanoClock.getAsLong();
            down = false;
            upSinceNanos = now;
            returnsInAll++;
            returnsSinceSaid++;
            if (returnsInAll == 1) {
                say(now); // the end of a plain outage is said at once, as it always was
            } else {
                sayOrHoldBack(now);
            }
        }

        private void beginOutage(long now) {
            if (refusedSinceSaid > 0 || returnsSinceSaid > 0) {
                say(now); // the last outage's held-back line, should its flush be late: its turns come before this one
            }
            outageStartedNanos = now;
            down = true;
            refusedInAll = 1;
            returnsInAll = 0;
            refusedSinceSaid = 0;
            returnsSinceSaid = 0;
            lastSaidNanos = now;
            log.warn("upstream " + member.dial() + " unreachable for client " + lastClient + ": " + lastCause
                    + " (its clients' connections close at once until it answers; the next failed dials, and its returns if it"
                    + " flaps, are counted, a line a second)");
        }

        private void sayOrHoldBack(long now) {
            long wait = lastSaidNanos + lineIntervalNanos - now;
            if (wait <= 0) {
                say(now);
            } else if (!flushPending) {
                flushPending = true;
                try {
                    later.run(this::flush, wait);
                } catch (RejectedExecutionException closing) { // the proxy is closing: nothing more is said of its members
                    flushPending = false;
                }
            }
        }

        /** The held-back line, when its second is up. */
        synchronized void flush() {
            flushPending = false;
            if (refusedSinceSaid > 0 || returnsSinceSaid > 0) {
                sayOrHoldBack(nanoClock.getAsLong()); // said now, or later should a line have been said since it was set
            }
        }

        /** Says where the member is now, with what came since the last line: under the lock, so lines keep their order. */
        private void say(long now) {
            String over = String.format(Locale.ROOT, "%.1f s", (now - outageStartedNanos) / 1e9);
            if (returnsInAll == 0) {
                log.info("upstream " + member.dial() + " still unreachable: " + Plural.of(refusedSinceSaid, "client connection")
                        + " closed so since the last such line, " + refusedInAll + " in " + over + " (the last for client "
                        + lastClient + ": " + lastCause + ")");
            } else if (!down && returnsInAll == 1) {
                log.info("member " + member.upstream() + " reachable again after " + Plural.of(refusedInAll, "refused connection")
                        + " over " + over);
            } else {
                String turns = "flapping: back " + Plural.of(returnsSinceSaid, "time") + " and " + Plural.of(refusedSinceSaid,
                        "client connection") + " refused since its last line; " + Plural.of(returnsInAll, "return") + " and "
                        + Plural.of(refusedInAll, "refused connection") + " in " + over;
                log.info(down ? "upstream " + member.dial() + " unreachable, " + turns + " (the last refused for client " + lastClient
                        + ": " + lastCause + ")" : "member " + member.upstream() + " reachable again, " + turns
                        + " (it refuses some dials and answers others)");
            }
            refusedSinceSaid = 0;
            returnsSinceSaid = 0;
            lastSaidNanos = now;
        }
    }
}
