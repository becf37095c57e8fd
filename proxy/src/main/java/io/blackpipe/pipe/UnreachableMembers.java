package io.blackpipe.pipe;

import io.blackpipe.fault.Plural;
import io.blackpipe.topology.HostNames;
import io.blackpipe.topology.Member;
import java.net.SocketAddress;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the log says of members the proxy cannot dial: the first failed dial of a member a warning, the next ones counted
 * a line a second per member, and one line when a dial of it succeeds again. A line per client connection flooded the
 * log (a killed member with one driver connected gave 26 lines in 12 s, more with each client and member), and no line
 * said when the member was back. A member refusing again soon after it was back (one that flaps: restarting over and
 * over, a backlog refusing some dials) goes on in the same outage, its lines counted as before, rather than a warning
 * and a "reachable again" at each turn.
 */
final class UnreachableMembers {
    /** How soon after a member was back a refusal goes on in the same outage, as the member's flapping. */
    static final long FLAPPING_WITHIN_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final ConcurrentHashMap<String, Outage> outages = new ConcurrentHashMap<>();
    private final ProxyLog log;
    private final long flappingWithinNanos;

    UnreachableMembers(ProxyLog log) {
        this(log, FLAPPING_WITHIN_NANOS);
    }

    /** @param flappingWithinNanos how soon after a member was back a refusal goes on in the same outage */
    UnreachableMembers(ProxyLog log, long flappingWithinNanos) {
        this.log = log;
        this.flappingWithinNanos = flappingWithinNanos;
    }

    /** Since the first failed dial of a member, until one succeeds and none fails for a while after (flapping's window). */
    private static final class Outage {
        final long startedNanos = System.nanoTime();
        final AtomicLong refused = new AtomicLong();
        /** The first refusal is said at once, as a warning: the counted lines start a second after it. */
        final OncePerSecond repeats = OncePerSecond.saidJustNow();
        /** "reachable again": the first said at once, the next (a flapping member's) counted, a line a second. */
        final OncePerSecond recoveries = new OncePerSecond();
        /** When a dial succeeded since the last refusal; 0 while the member refuses. */
        volatile long reachedNanos;

        boolean endedBefore(long now, long flappingWithinNanos) {
            long reached = reachedNanos;
            return reached != 0 && now - reached > flappingWithinNanos;
        }
    }

    /** A dial of {@code member} for {@code client} failed with {@code cause}. */
    void refused(Member member, SocketAddress client, Throwable cause) {
        String key = member.upstream().toString();
        long now = System.nanoTime();
        Outage outage = outages.compute(key, (k, known) -> known == null || known.endedBefore(now, flappingWithinNanos) ? new Outage() : known);
        outage.reachedNanos = 0;
        long total = outage.refused.incrementAndGet();
        if (total == 1) {
            log.warn("upstream " + member.dial() + " unreachable for client " + HostNames.ofPeer(client) + ": " + cause.getMessage()
                    + " (its clients' connections close at once until it answers; the next failed dials are counted, a line a second)");
            return;
        }
        outage.repeats.count(count -> log.info("upstream " + member.dial() + " still unreachable: " + Plural.of(count, "client connection")
                + " closed so since the last such line, " + outage.refused.get() + " in " + seconds(outage) + " (the last for client "
                + HostNames.ofPeer(client) + ": " + cause.getMessage() + ")"));
    }

    /**
     * A dial of {@code member} succeeded: a member that had refused some says it is back, once; when it flaps, at most a
     * line a second, counting its returns.
     */
    void reached(Member member) {
        Outage outage = outages.get(member.upstream().toString());
        if (outage == null || outage.reachedNanos != 0) {
            return; // never refused, or back already
        }
        outage.reachedNanos = System.nanoTime();
        outage.recoveries.count(count -> log.info("member " + member.upstream() + " reachable again after "
                + Plural.of(outage.refused.get(), "refused connection") + " over " + seconds(outage) + (count == 1 ? ""
                : " (back " + count + " times since the last such line: it refuses some dials and answers others)")));
    }

    private static String seconds(Outage outage) {
        return String.format(Locale.ROOT, "%.1f s", (System.nanoTime() - outage.startedNanos) / 1e9);
    }
}
