package io.blackpipe.pipe;

import io.blackpipe.fault.Plural;
import io.blackpipe.topology.HostNames;
import io.blackpipe.topology.Member;
import java.net.SocketAddress;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the log says of members the proxy cannot dial: the first failed dial of a member a warning, the next ones counted
 * a line a second per member, and one line when a dial of it succeeds again. A line per client connection flooded the
 * log (a killed member with one driver connected gave 26 lines in 12 s, more with each client and member), and no line
 * said when the member was back.
 */
final class UnreachableMembers {
    private final ConcurrentHashMap<String, Outage> outages = new ConcurrentHashMap<>();
    private final ProxyLog log;

    UnreachableMembers(ProxyLog log) {
        this.log = log;
    }

    /** Since the first failed dial of a member, until one succeeds. */
    private static final class Outage {
        final long startedNanos = System.nanoTime();
        final AtomicLong refused = new AtomicLong();
        /** The first refusal is said at once, as a warning: the counted lines start a second after it. */
        final OncePerSecond repeats = OncePerSecond.saidJustNow();
    }

    /** A dial of {@code member} for {@code client} failed with {@code cause}. */
    void refused(Member member, SocketAddress client, Throwable cause) {
        String key = member.upstream().toString();
        Outage outage = outages.computeIfAbsent(key, k -> new Outage());
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

    /** A dial of {@code member} succeeded: a member that had refused some says it is back, once. */
    void reached(Member member) {
        Outage outage = outages.remove(member.upstream().toString());
        if (outage != null) {
            log.info("member " + member.upstream() + " reachable again after " + Plural.of(outage.refused.get(), "refused connection")
                    + " over " + seconds(outage));
        }
    }

    private static String seconds(Outage outage) {
        return String.format(Locale.ROOT, "%.1f s", (System.nanoTime() - outage.startedNanos) / 1e9);
    }
}
