package io.blackpipe.admin;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.TreeMap;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * The command counters as JSON, one row per (command, member, app) with attempts, retries,
 * outcomes and faults: the same numbers /metrics exposes, shaped for the CLI's stats table.
 */
public final class StatsJson {
    private StatsJson() {
    }

    /** {@code run}: a name of the proxy's run, a new one at each start, which counts only grow within. */
    static BsonDocument of(MeterRegistry registry, String run) {
        Map<String, BsonDocument> rows = new TreeMap<>();
        for (Counter counter : registry.find("blackpipe.command.attempts").counters()) {
            row(rows, counter).put("attempts", count(counter));
        }
        for (Counter counter : registry.find("blackpipe.command.retries").counters()) {
            row(rows, counter).put("retries", count(counter));
        }
        Map<String, BsonDocument> outcomes = new TreeMap<>();
        for (Counter counter : registry.find("blackpipe.command.outcomes").counters()) {
            if (counter.count() > 0) {
                String key = tag(counter, "command") + '\u0000' + tag(counter, "member");
                outcomes.computeIfAbsent(key, k -> new BsonDocument("command", new BsonString(tag(counter, "command")))
                                .append("member", new BsonString(tag(counter, "member"))))
                        .put(tag(counter, "outcome"), count(counter));
            }
        }
        BsonArray faults = new BsonArray();
        for (Counter counter : registry.find("blackpipe.faults.injected").counters()) {
            faults.add(new BsonDocument("fault", new BsonString(tag(counter, "fault")))
                    .append("command", new BsonString(tag(counter, "command")))
                    .append("member", new BsonString(tag(counter, "member")))
                    .append("count", count(counter)));
        }
        BsonArray commands = new BsonArray();
        rows.values().forEach(commands::add);
        BsonArray outcomeRows = new BsonArray();
        outcomes.values().forEach(outcomeRows::add);
        return new BsonDocument("commands", commands).append("outcomes", outcomeRows).append("faults", faults)
                .append("run", new BsonString(run));
    }

    /**
     * Whether two stats are of one run of a proxy, so that the later's counts less the earlier's are what it counted
     * between them; true where either is from a proxy that names no run (older than the field).
     */
    public static boolean sameRun(BsonDocument earlier, BsonDocument later) {
        BsonValue then = earlier.get("run");
        BsonValue now = later.get("run");
        return then == null || now == null || then.equals(now);
    }

    /**
     * The sum of {@code field} over the rows of {@code table} ("commands", "outcomes" or "faults") whose
     * keys have the given values ({@code "command", "insert"}, ...): over the members and apps not named.
     */
    public static long sum(BsonDocument stats, String table, String field, String... keyValuePairs) {
        long total = 0;
        for (BsonValue value : stats.getArray(table, new BsonArray())) {
            BsonDocument row = value.asDocument();
            boolean matches = row.isNumber(field);
            for (int i = 0; matches && i + 1 < keyValuePairs.length; i += 2) {
                matches = row.get(keyValuePairs[i], new BsonString("")).equals(new BsonString(keyValuePairs[i + 1]));
            }
            if (matches) {
                total += row.getNumber(field).longValue();
            }
        }
        return total;
    }

    private static BsonDocument row(Map<String, BsonDocument> rows, Meter meter) {
        String key = tag(meter, "command") + '\u0000' + tag(meter, "member") + '\u0000' + tag(meter, "app");
        return rows.computeIfAbsent(key, k -> new BsonDocument("command", new BsonString(tag(meter, "command")))
                .append("member", new BsonString(tag(meter, "member")))
                .append("app", new BsonString(tag(meter, "app")))
                .append("attempts", new BsonInt64(0))
                .append("retries", new BsonInt64(0)));
    }

    private static BsonInt64 count(Counter counter) {
        return new BsonInt64((long) counter.count());
    }

    private static String tag(Meter meter, String key) {
        String value = meter.getId().getTag(key);
        return value == null ? "" : value;
    }
}
