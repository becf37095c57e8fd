package io.blackpipe.pipe;

import io.blackpipe.fault.Plural;
import io.blackpipe.observe.ConnectionMeters;
import io.blackpipe.topology.HostNames;
import io.blackpipe.topology.MemberAddress;
import io.netty.channel.Channel;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code --max-connections}: the most client connections open at once across all members. A
 * connection beyond it is closed as soon as it is accepted; the log says so at most once a second,
 * with how many were refused since the last such line.
 */
final class ConnectionLimit {
    private final int max;
    private final ProxyLog log;
    private final AtomicInteger open = new AtomicInteger();
    private final OncePerSecond refusals = new OncePerSecond();

    ConnectionLimit(int max, ProxyLog log) {
        this.max = max;
        this.log = log;
    }

    /** Counts an accepted connection until it closes; beyond the limit closes it, counts it refused, and returns false. */
    boolean admit(Channel client, MemberAddress member, ConnectionMeters meters) {
        if (open.incrementAndGet() > max) {
            open.decrementAndGet();
            meters.refused();
            refused(client, member); // before the close: a client that sees it closed finds its refusal counted (and logged, if due)
            client.close();
            return false;
        }
        client.closeFuture().addListener(f -> open.decrementAndGet());
        return true;
    }

    int open() {
        return open.get();
    }

    private void refused(Channel client, MemberAddress member) {
        refusals.count(count -> log.warn("refused client " + HostNames.ofPeer(client.remoteAddress()) + " on member " + member + ": --max-connections "
                + max + " reached (" + Plural.of(count, "connection") + " refused since the last such line)"));
    }
}
