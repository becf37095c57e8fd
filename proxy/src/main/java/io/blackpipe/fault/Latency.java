package io.blackpipe.fault;

import java.util.SplittableRandom;

/**
 * A slow link between a member and its clients (Toxiproxy's latency toxic, for every connection of a member): each
 * message the member's side sends reaches the client {@code delayMillis} late, or a time drawn evenly from
 * delay - jitter to delay + jitter (never below 0), in the order sent, as over a slow network; what the clients send
 * reaches the member's side late instead, or too, when its {@link Direction} says so (replies unless told).
 */
public record Latency(long delayMillis, long jitterMillis, Direction direction) {
    /** Unless told otherwise, a latency delays what the member sends: a round trip takes the delay longer. */
    public static final Direction DEFAULT_DIRECTION = Direction.REPLIES;
    /** A day: a longer wait is a hang, which a blackhole or a rule's hang says better. */
    public static final long MAX_MILLIS = 86_400_000L;

    public Latency {
        if (delayMillis < 0 || delayMillis > MAX_MILLIS) {
            throw new IllegalArgumentException("delay: must be from 0 to 24h, got " + delayMillis + "ms");
        }
        if (jitterMillis < 0 || jitterMillis > MAX_MILLIS) {
            throw new IllegalArgumentException("jitter: must be from 0 to 24h, got " + jitterMillis + "ms");
        }
        if (delayMillis == 0 && jitterMillis == 0) {
            throw new IllegalArgumentException("delay: a latency of 0 without a jitter slows nothing (to end one, restore the member)");
        }
        if (direction == null) {
            throw new IllegalArgumentException("direction: must be both, replies or requests, got null");
        }
    }

    /** A latency on what the member sends its clients: each round trip takes {@code delayMillis} longer. */
    public Latency(long delayMillis, long jitterMillis) {
        this(delayMillis, jitterMillis, DEFAULT_DIRECTION);
    }

    /** The delay of the next message, drawn from {@code random} when there is a jitter. */
    public long drawMillis(SplittableRandom random) {
        if (jitterMillis == 0) {
            return delayMillis;
        }
        return Math.max(0, delayMillis - jitterMillis + random.nextLong(2 * jitterMillis + 1));
    }

    /** "200 ms" or "200 ms +/- 50 ms", for logs and status lines (ASCII, as a terminal in the C locale prints it). */
    public String describe() {
        return delayMillis + " ms" + (jitterMillis > 0 ? " +/- " + jitterMillis + " ms" : "");
    }

    /** "200 ms towards the clients", "200 ms +/- 50 ms each way": the delay and the way it acts. */
    public String describeAndWay() {
        return describe() + " " + direction.way();
    }
}
