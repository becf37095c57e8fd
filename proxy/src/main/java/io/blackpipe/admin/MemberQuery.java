package io.blackpipe.admin;

import io.blackpipe.fault.Bandwidth;
import io.blackpipe.fault.Direction;
import io.blackpipe.fault.Durations;
import io.blackpipe.fault.Failover;
import io.blackpipe.fault.IdleTimeout;
import io.blackpipe.fault.Latency;
import io.blackpipe.fault.Restart;
import java.util.List;
import java.util.Map;

/** The query parameters of the member actions and of a failover, each refused naming the parameter. */
final class MemberQuery {
    private MemberQuery() {
    }

    /**
     * POST /failover?election=5s&rollback=2s: how long a simulated set has no primary first, and how far back the old
     * primary's writes below majority are rolled back (without either, none: the next member at once, nothing lost).
     */
    static Failover failover(Map<String, List<String>> query) {
        return new Failover(query.containsKey("election") ? millis(query, "election") : 0,
                query.containsKey("rollback") ? millis(query, "rollback") : 0);
    }

    /** ?duration=5s: how long a member's fault lasts, in ms; without it, 0: until restore. */
    static long durationMillis(Map<String, List<String>> query) {
        if (!query.containsKey("duration")) {
            return 0;
        }
        long millis = millis(query, "duration");
        if (millis < 1) {
            // 0 is how "until restore" is told to the proxy: a zero duration would last forever
            throw new IllegalArgumentException("duration: must be at least 1ms, got '" + query.get("duration").get(0)
                    + "' (leave duration out to last until restore)");
        }
        return millis;
    }

    /**
     * ?delay=200ms (required) and ?jitter=50ms, each a duration as --duration takes it, and ?direction=replies|requests|both
     * (replies without it): a member's latency.
     */
    static Latency latency(Map<String, List<String>> query) {
        if (!query.containsKey("delay")) {
            throw new IllegalArgumentException("delay: required (e.g. ?delay=200ms)");
        }
        Direction direction = query.containsKey("direction") ? Direction.parse(query.get("direction").get(0)) : Latency.DEFAULT_DIRECTION;
        return new Latency(millis(query, "delay"), query.containsKey("jitter") ? millis(query, "jitter") : 0, direction);
    }

    /**
     * ?rate=64KiB/s (required, as {@link Bandwidth#parse} takes it) and ?direction=both|replies|requests (both without
     * it): a member's bandwidth.
     */
    static Bandwidth bandwidth(Map<String, List<String>> query) {
        if (!query.containsKey("rate")) {
            throw new IllegalArgumentException("rate: required (e.g. ?rate=64KiB/s)");
        }
        Bandwidth rate;
        try {
            rate = Bandwidth.parse(query.get("rate").get(0));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("rate: " + e.getMessage(), e);
        }
        return query.containsKey("direction") ? rate.towards(Direction.parse(query.get("direction").get(0))) : rate;
    }

    /** ?after=30s (required, at least 1ms) and ?then=drop|reset (drop without it): a member's idle timeout. */
    static IdleTimeout idleTimeout(Map<String, List<String>> query) {
        if (!query.containsKey("after")) {
            throw new IllegalArgumentException("after: required (e.g. ?after=30s)");
        }
        long after = millis(query, "after");
        IdleTimeout.Then then = query.containsKey("then") ? IdleTimeout.Then.parse(query.get("then").get(0)) : IdleTimeout.Then.DROP;
        return new IdleTimeout(after, then);
    }

    /** ?quiesce=15s and ?down=10s, each with {@link Restart}'s default without it: a member's restart. */
    static Restart restart(Map<String, List<String>> query) {
        return new Restart(query.containsKey("quiesce") ? millis(query, "quiesce") : Restart.DEFAULT_QUIESCE_MILLIS,
                query.containsKey("down") ? millis(query, "down") : Restart.DEFAULT_DOWN_MILLIS);
    }

    private static long millis(Map<String, List<String>> query, String name) {
        try {
            return Durations.millis(query.get(name).get(0));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(name + ": " + e.getMessage(), e);
        }
    }
}
