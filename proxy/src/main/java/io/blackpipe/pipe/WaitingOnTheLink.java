package io.blackpipe.pipe;

import io.netty.channel.ChannelPromise;
import java.util.ArrayList;
import java.util.List;

/**
 * A write or a close waiting on a {@link ClientLink}: when it goes (arrives at the client), and, for a write, when its
 * bytes are carried, that is, on their way (a narrow link carries one piece after another; a latency is the time on
 * the way).
 */
final class WaitingOnTheLink {
    final long dueNanos;
    final long carriedNanos;
    /** Null for a write. */
    final ChannelPromise close;
    /** The replies whose last byte this is, told when it arrives or is lost. */
    private List<Delivery> deliveries;

    WaitingOnTheLink(long dueNanos, long carriedNanos, ChannelPromise close) {
        this.dueNanos = dueNanos;
        this.carriedNanos = carriedNanos;
        this.close = close;
    }

    boolean carriedBy(long now) {
        return carriedNanos - now <= 0;
    }

    void add(Delivery delivery) {
        if (deliveries == null) {
            deliveries = new ArrayList<>(1);
        }
        deliveries.add(delivery);
    }

    /** Tells the replies whose last byte this is that it arrived or was lost. */
    void tell(boolean arrived) {
        if (deliveries != null) {
            deliveries.forEach(arrived ? Delivery::arrived : Delivery::lost);
        }
    }
}
