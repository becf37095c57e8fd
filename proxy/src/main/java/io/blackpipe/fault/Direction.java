package io.blackpipe.fault;

import java.util.Locale;

/**
 * Which way a fault on a member's link acts (its latency, its bandwidth): on what the member sends its clients, on
 * what they send it, or both, as Toxiproxy's toxics act on a stream (downstream, upstream).
 */
public enum Direction {
    /** Both ways. */
    BOTH("each way"),
    /** Only what the member sends its clients: replies, hellos, TLS records (Toxiproxy's downstream). */
    REPLIES("towards the clients"),
    /** Only what the clients send the member: commands and the documents they carry (Toxiproxy's upstream). */
    REQUESTS("towards the member");

    private final String way;

    Direction(String way) {
        this.way = way;
    }

    /** "both", "replies" or "requests", case aside. */
    public static Direction parse(String written) {
        return Choice.of(Direction.class, "direction", written);
    }

    /** Whether it acts on what the member sends its clients. */
    public boolean towardsClients() {
        return this != REQUESTS;
    }

    /** Whether it acts on what the clients send the member. */
    public boolean towardsMember() {
        return this != REPLIES;
    }

    /**
     * The API's {@code &direction=} parameter for this direction, or nothing when it is the one the API takes without it
     * ({@code absent}): a proxy older than directions takes that request too.
     */
    public String parameterUnless(Direction absent) {
        return this == absent ? "" : "&direction=" + label();
    }

    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** "each way", "towards the clients", "towards the member": for logs and status lines. */
    public String way() {
        return way;
    }
}
