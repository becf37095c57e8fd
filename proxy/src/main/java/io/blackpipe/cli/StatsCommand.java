package io.blackpipe.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

@Command(name = "stats", mixinStandardHelpOptions = true, versionProvider = Version.class,
        description = {"What the proxy counted, one row per command and member: attempts, retries (attempts after the"
                + " first of one operation), outcomes (ok, error, network_error, no_reply) and faults injected."})
final class StatsCommand extends AdminCommand {
    @Option(names = "--json", description = "Print the API's JSON (rows per command, member and app) instead of a table.")
    boolean json;

    @Option(names = "--baseline", paramLabel = "FILE", converter = OptionalPath.class,
            description = "Show what was counted since the counts FILE holds (saved with `blackpipe stats --json > FILE`),"
                    + " as `blackpipe expect --baseline` counts; not with --json.")
    Path baselineFile;

    /** One table row: a command on a member, summed over client apps. */
    private static final class Row {
        long attempts;
        long retries;
        final Map<String, Long> outcomes = new TreeMap<>();
        final Map<String, Long> faults = new TreeMap<>();

        /**
         * This row ({@code name}: "insert on db:27017") less {@code earlier}'s counts; a count that would fall below zero
         * (counts only grow) is the failure that {@code file} is no earlier moment of this proxy, naming that count.
         */
        void subtract(Row earlier, String name, Path file) throws AdminClient.Failure {
            attempts = since(file, "attempts of " + name, attempts, earlier.attempts);
            retries = since(file, "retries of " + name, retries, earlier.retries);
            for (Map.Entry<String, Long> outcome : earlier.outcomes.entrySet()) {
                outcomes.put(outcome.getKey(), since(file, outcome.getKey() + " outcomes of " + name,
                        outcomes.getOrDefault(outcome.getKey(), 0L), outcome.getValue()));
            }
            for (Map.Entry<String, Long> fault : earlier.faults.entrySet()) {
                faults.put(fault.getKey(), since(file, fault.getKey() + " faults on " + name,
                        faults.getOrDefault(fault.getKey(), 0L), fault.getValue()));
            }
            outcomes.values().removeIf(n -> n == 0);
            faults.values().removeIf(n -> n == 0);
        }

        private static long since(Path file, String what, long now, long then) throws AdminClient.Failure {
            if (now < then) {
                throw StatsBaseline.countedLessThan(file, what, now, then);
            }
            return now - then;
        }

        boolean isEmpty() {
            return attempts == 0 && retries == 0 && outcomes.isEmpty() && faults.isEmpty();
        }
    }

    @Override
    int run(AdminClient admin, PrintWriter out) throws AdminClient.Failure {
        if (json && baselineFile != null) {
            throw new ParameterException(spec.commandLine(), "--baseline: not with --json, which prints the API's counts as they are");
        }
        BsonDocument baseline = baselineFile == null ? null : StatsBaseline.read(spec.commandLine(), baselineFile);
        if (json) {
            out.print(admin.call("GET", "stats", null).body());
            return 0;
        }
        BsonDocument stats = admin.get("stats");
        Map<List<String>, Row> rows = rows(stats);
        if (baseline != null) {
            StatsBaseline.checkSameRun(stats, baseline, baselineFile);
            Map<List<String>, Row> earlier = rows(baseline);
            for (Map.Entry<List<String>, Row> entry : earlier.entrySet()) {
                rows.computeIfAbsent(entry.getKey(), k -> new Row()).subtract(entry.getValue(), String.join(" on ", entry.getKey()), baselineFile);
            }
            rows.values().removeIf(Row::isEmpty);
        }
        if (rows.isEmpty()) {
            out.println(baseline == null ? "no commands counted yet" : "no commands counted since " + baselineFile);
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

    /** The API's counts as table rows: per command and member, summed over apps. */
    private static Map<List<String>, Row> rows(BsonDocument stats) {
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
        return rows;
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
