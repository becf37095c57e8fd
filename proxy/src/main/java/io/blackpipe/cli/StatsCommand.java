package io.blackpipe.cli;

import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "stats", mixinStandardHelpOptions = true, versionProvider = Version.class,
        description = {"What the proxy counted, one row per command and member: attempts, retries (attempts after the"
                + " first of one operation), outcomes (ok, error, network_error, no_reply) and faults injected."})
final class StatsCommand extends AdminCommand {
    @Option(names = "--json", description = "Print the API's JSON (rows per command, member and app) instead of a table.")
    boolean json;

    /** One table row: a command on a member, summed over client apps. */
    private static final class Row {
        long attempts;
        long retries;
        final Map<String, Long> outcomes = new TreeMap<>();
        final Map<String, Long> faults = new TreeMap<>();
    }

    @Override
    int run(AdminClient admin, PrintWriter out) throws AdminClient.Failure {
        if (json) {
            out.print(admin.call("GET", "stats", null).body());
            return 0;
        }
        BsonDocument stats = admin.get("stats");
        Map<List<String>, Row> rows = new TreeMap<>((a, b) -> a.get(0).equals(b.get(0))
                ? a.get(1).compareTo(b.get(1)) : a.get(0).compareTo(b.get(0)));
        for (BsonDocument entry : documents(stats, "commands")) {
            Row row = rows.computeIfAbsent(key(entry), k -> new Row());
            row.attempts += count(entry, "attempts");
            row.retries += count(entry, "retries");
        }
        for (BsonDocument entry : documents(stats, "outcomes")) {
            Row row = rows.computeIfAbsent(key(entry), k -> new Row());
            for (String outcome : entry.keySet()) {
                if (!outcome.equals("command") && !outcome.equals("member")) {
                    row.outcomes.merge(outcome, count(entry, outcome), Long::sum);
                }
            }
        }
        for (BsonDocument entry : documents(stats, "faults")) {
            long n = count(entry, "count");
            if (n > 0) {
                rows.computeIfAbsent(key(entry), k -> new Row()).faults.merge(text(entry, "fault"), n, Long::sum);
            }
        }
        if (rows.isEmpty()) {
            out.println("no commands counted yet");
            return 0;
        }
        Table table = new Table("COMMAND", "MEMBER", "ATTEMPTS", "RETRIES", "OUTCOMES", "FAULTS");
        for (Map.Entry<List<String>, Row> entry : rows.entrySet()) {
            Row row = entry.getValue();
            table.row(entry.getKey().get(0), entry.getKey().get(1), row.attempts, row.retries, join(row.outcomes), join(row.faults));
        }
        table.print(out);
        return 0;
    }

    private static List<String> key(BsonDocument entry) {
        return List.of(text(entry, "command"), text(entry, "member"));
    }

    private static List<BsonDocument> documents(BsonDocument stats, String key) {
        BsonArray array = stats.isArray(key) ? stats.getArray(key) : new BsonArray();
        return array.stream().filter(BsonValue::isDocument).map(BsonValue::asDocument).toList();
    }

    private static long count(BsonDocument entry, String key) {
        return entry.isNumber(key) ? entry.getNumber(key).longValue() : 0;
    }

    private static String text(BsonDocument entry, String key) {
        return entry.isString(key) ? entry.getString(key).getValue() : "";
    }

    private static String join(Map<String, Long> counts) {
        Map<String, Long> shown = new LinkedHashMap<>(counts);
        StringBuilder text = new StringBuilder();
        shown.forEach((name, n) -> text.append(text.length() == 0 ? "" : " ").append(name).append('=').append(n));
        return text.toString();
    }
}
