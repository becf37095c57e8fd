package io.blackpipe.fault;

/**
 * A member's clean restart, as in a rolling restart or a cloud's maintenance: a primary steps down first; the member
 * quiesces for {@code quiesceMillis} (since MongoDB 5.0, mongod answers every hello with ShutdownInProgress then, so
 * that drivers stop selecting it while its operations go on; 0: no quiesce, as before 5.0), then exits (what still
 * runs is interrupted, its connections close) and is down for {@code downMillis} before it listens again.
 */
public record Restart(long quiesceMillis, long downMillis) {
    /** mongod's quiesce for a SIGTERM since 5.0 (shutdownTimeoutMillisForSignaledShutdown). */
    public static final long DEFAULT_QUIESCE_MILLIS = 15_000;
    /** How long a restarted member takes to listen again, unless told: a mongod's start is seconds. */
    public static final long DEFAULT_DOWN_MILLIS = 10_000;
    /** A day: a longer restart is an outage. */
    public static final long MAX_MILLIS = 86_400_000L;

    public Restart {
        if (quiesceMillis < 0 || quiesceMillis > MAX_MILLIS) {
            throw new IllegalArgumentException("quiesce: must be from 0 to 24h, got " + quiesceMillis + "ms");
        }
        if (downMillis < 1 || downMillis > MAX_MILLIS) {
            throw new IllegalArgumentException("down: must be from 1ms to 24h, got " + downMillis + "ms");
        }
    }

    /** The admin API's query for it: "?quiesce=15000ms&down=10000ms" (the CLI and RemoteBlackPipe send it). */
    public String query() {
        return "?quiesce=" + quiesceMillis + "ms&down=" + downMillis + "ms";
    }

    /** "quiesce 15000 ms, down 10000 ms", for logs and status lines. */
    public String describe() {
        return "quiesce " + quiesceMillis + " ms, down " + downMillis + " ms";
    }
}
