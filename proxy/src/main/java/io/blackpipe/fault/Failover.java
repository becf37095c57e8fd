package io.blackpipe.fault;

/**
 * A failover: the primary steps down and another member is elected. On a simulated set, {@code electionMillis} above 0
 * first leaves the set without a primary that long, as while a real set elects; {@code rollbackMillis} above 0 has the
 * old primary not have replicated its last that long: what its writes below majority did in that time is rolled back
 * (the new primary never had them), as mongod rolls back what a majority lacked.
 */
public record Failover(long electionMillis, long rollbackMillis) {
    /** The next member primary at once, nothing rolled back. */
    public static final Failover AT_ONCE = new Failover(0, 0);
    /** How far back a rollback reaches: a simulated primary's writes below majority are remembered that long. */
    public static final long MAX_ROLLBACK_MILLIS = 60_000;

    public Failover {
        if (electionMillis < 0) {
            throw new IllegalArgumentException("election: must be zero (the next member primary at once) or at least 1ms, got "
                    + electionMillis + "ms");
        }
        if (rollbackMillis < 0 || rollbackMillis > MAX_ROLLBACK_MILLIS) {
            throw new IllegalArgumentException("rollback: must be from 0 (nothing rolled back) to 60s, got " + rollbackMillis + "ms");
        }
    }

    /** Whether it needs a simulated set: a real set elects in its own time and rolls back what it must. */
    public boolean simulatedOnly() {
        return electionMillis > 0 || rollbackMillis > 0;
    }

    /** The admin API's query for it: "", "?election=5000ms", "?rollback=2000ms" or both (the CLI and RemoteBlackPipe send it). */
    public String query() {
        String election = electionMillis > 0 ? "election=" + electionMillis + "ms" : "";
        String rollback = rollbackMillis > 0 ? "rollback=" + rollbackMillis + "ms" : "";
        String both = election.isEmpty() || rollback.isEmpty() ? election + rollback : election + "&" + rollback;
        return both.isEmpty() ? "" : "?" + both;
    }

    /** "fail over", "fail over after an election of 5000 ms, rolling back the last 2000 ms", for logs and status lines. */
    public String describe() {
        return "fail over" + (electionMillis > 0 ? " after an election of " + electionMillis + " ms" : "")
                + (rollbackMillis > 0 ? (electionMillis > 0 ? "," : "") + " rolling back the old primary's last " + rollbackMillis + " ms" : "");
    }
}
