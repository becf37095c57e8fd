package io.blackpipe.fault;

import java.util.Locale;

/**
 * A middlebox between a member and its clients that forgets idle connections, as a cloud load balancer, a NAT
 * gateway or a firewall does: a connection that has carried nothing either way for {@code afterMillis} is forgotten.
 * The member's side ends then (its commands in flight are cut, its member connection closes); the client is not
 * told, and what it sends later is {@link Then#DROP dropped} (Azure's load balancer by default, many firewalls: the
 * client waits for its own timeout) or answered with a {@link Then#RESET reset} (AWS's Network Load Balancer and NAT
 * gateway; Azure's load balancer with TCP reset on).
 */
public record IdleTimeout(long afterMillis, Then then) {
    /** A day: a longer idle timeout cuts nothing a test waits for. */
    public static final long MAX_MILLIS = 86_400_000L;

    /** What becomes of what the client sends on a forgotten connection. */
    public enum Then {
        /** Lost: nothing comes back, not even a reset. */
        DROP,
        /** Answered with a TCP reset. */
        RESET;

        /** "drop" or "reset", case aside. */
        public static Then parse(String written) {
            return Choice.of(Then.class, "then", written);
        }

        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    public IdleTimeout {
        if (afterMillis < 1 || afterMillis > MAX_MILLIS) {
            throw new IllegalArgumentException("after: must be from 1ms to 24h, got " + afterMillis + "ms");
        }
        if (then == null) {
            throw new IllegalArgumentException("then: must be drop or reset, got null");
        }
    }

    /** "idle 30000 ms, then drop", for logs and status lines. */
    public String describe() {
        return "idle " + afterMillis + " ms, then " + then.label();
    }
}
