package io.blackpipe.report;

import io.blackpipe.fault.Plural;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;

/** The report as a terminal table, Markdown or JSON. */
final class ReportRenderer {
    private ReportRenderer() {
    }

    static String text(String upstream, List<Cell> cells) {
        Set<String> faults = columns(cells);
        Set<String> strategies = rows(cells);
        int first = Math.max(26, strategies.stream().mapToInt(String::length).max().orElse(0) + 2);
        int width = 24;
        StringBuilder out = new StringBuilder("upstream: " + upstream + "\n\n");
        out.append(pad("strategy \\ fault", first));
        faults.forEach(f -> out.append(pad(f, width)));
        out.append('\n');
        for (String strategy : strategies) {
            out.append(pad(strategy, first));
            for (String fault : faults) {
                Cell cell = find(cells, fault, strategy);
                out.append(pad(cell.verdict(), width));
            }
            out.append('\n');
            out.append(pad("", first));
            for (String fault : faults) {
                Cell cell = find(cells, fault, strategy);
                out.append(pad(cell.counter() + "/" + cell.expected() + " " + cell.errors() + "err "
                        + seconds(cell.millis()) + " r" + cell.retries(), width));
            }
            out.append("\n");
        }
        out.append("\nEach cell: verdict; counter/expected, errors the app saw, time spent, retries the proxy counted.\n");
        return out.toString();
    }

    static String markdown(String upstream, List<Cell> cells) {
        Set<String> faults = columns(cells);
        StringBuilder out = new StringBuilder("Upstream: " + upstream + "\n\n| strategy |");
        faults.forEach(f -> out.append(' ').append(f).append(" |"));
        out.append("\n|---|");
        faults.forEach(f -> out.append("---|"));
        out.append('\n');
        for (String strategy : rows(cells)) {
            out.append("| ").append(strategy).append(" |");
            for (String fault : faults) {
                Cell cell = find(cells, fault, strategy);
                out.append(' ').append(cell.verdict()).append("<br>counter ").append(cell.counter()).append('/')
                        .append(cell.expected()).append(", ").append(Plural.of(cell.errors(), "error")).append(", ")
                        .append(seconds(cell.millis())).append(", ").append(Plural.of(cell.attempts(), "attempt")).append(", ")
                        .append(cell.retries() == 1 ? "1 retry" : cell.retries() + " retries").append(" |");
            }
            out.append('\n');
        }
        return out.toString();
    }

    static String json(String upstream, int iterations, List<Cell> cells) {
        BsonArray array = new BsonArray();
        for (Cell cell : cells) {
            BsonDocument kinds = new BsonDocument();
            for (Map.Entry<String, Integer> kind : cell.errorKinds().entrySet()) {
                kinds.put(kind.getKey(), new BsonInt32(kind.getValue()));
            }
            array.add(new BsonDocument("fault", new BsonString(cell.fault()))
                    .append("strategy", new BsonString(cell.strategy()))
                    .append("verdict", new BsonString(cell.verdict()))
                    .append("expected", new BsonInt32(cell.expected()))
                    .append("counter", new BsonInt64(cell.counter()))
                    .append("errors", new BsonInt32(cell.errors()))
                    .append("errorKinds", kinds)
                    .append("millis", new BsonInt64(cell.millis()))
                    .append("attempts", new BsonInt64(cell.attempts()))
                    .append("retries", new BsonInt64(cell.retries())));
        }
        return new BsonDocument("upstream", new BsonString(upstream)).append("iterations", new BsonInt32(iterations))
                .append("cells", array).toJson(JsonWriterSettings.builder().outputMode(JsonMode.RELAXED).indent(true).build());
    }

    private static Set<String> columns(List<Cell> cells) {
        Set<String> faults = new LinkedHashSet<>();
        cells.forEach(c -> faults.add(c.fault()));
        return faults;
    }

    private static Set<String> rows(List<Cell> cells) {
        Set<String> strategies = new LinkedHashSet<>();
        cells.forEach(c -> strategies.add(c.strategy()));
        return strategies;
    }

    private static Cell find(List<Cell> cells, String fault, String strategy) {
        return cells.stream().filter(c -> c.fault().equals(fault) && c.strategy().equals(strategy)).findFirst().orElseThrow();
    }

    private static String seconds(long millis) {
        return String.format("%.1fs", millis / 1000.0);
    }

    private static String pad(String text, int width) {
        return text.length() >= width ? text.substring(0, width - 1) + " " : text + " ".repeat(width - text.length());
    }
}
