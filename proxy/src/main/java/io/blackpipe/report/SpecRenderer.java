package io.blackpipe.report;

import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;

/** {@code report --spec} as a terminal table, Markdown or JSON. */
final class SpecRenderer {
    private static final String[] HEADERS = {"group", "case", "expected per spec", "attempts", "retried", "driver raised", "verdict"};
    private static final int[] WIDTHS = {22, 53, 33, 9, 8, 35, 0};

    private SpecRenderer() {
    }

    static String text(String upstream, String driver, List<SpecResult> results) {
        StringBuilder out = new StringBuilder("upstream: " + upstream + "\ndriver: " + driver + "\n\n");
        row(out, HEADERS);
        for (SpecResult r : results) {
            row(out, cells(r));
        }
        long matched = results.stream().filter(SpecResult::matches).count();
        out.append('\n').append(matched).append('/').append(results.size()).append(" cases match the retryable reads/writes specs")
                .append(matched == results.size() ? ".\n" : "; see MISMATCH rows.\n")
                .append("attempts: what blackpipe counted for the case's command (blackpipe_command_attempts_total); "
                        + "txnNumber: the lsid and txnNumber its history recorded for each attempt.\n");
        return out.toString();
    }

    static String markdown(String upstream, String driver, List<SpecResult> results) {
        StringBuilder out = new StringBuilder("Upstream: " + upstream + "  \nDriver: " + driver + "\n\n|");
        for (String header : HEADERS) {
            out.append(' ').append(header).append(" |");
        }
        out.append("\n|").append("---|".repeat(HEADERS.length)).append('\n');
        for (SpecResult r : results) {
            out.append('|');
            for (String cell : cells(r)) {
                out.append(' ').append(cell.replace("|", "\\|")).append(" |");
            }
            out.append('\n');
        }
        return out.toString();
    }

    static String json(String upstream, String driver, List<SpecResult> results) {
        BsonArray array = new BsonArray();
        for (SpecResult r : results) {
            SpecCase c = r.specCase();
            array.add(new BsonDocument("group", new BsonString(c.group()))
                    .append("operation", new BsonString(c.operation()))
                    .append("command", new BsonString(c.command()))
                    .append("fault", c.errorCode() == null ? new BsonString("resetConnection") : new BsonString("errorCode"))
                    .append("errorCode", c.errorCode() == null ? BsonNull.VALUE : new BsonInt32(c.errorCode()))
                    .append("errorLabels", c.errorLabels() == null ? BsonNull.VALUE
                            : new BsonArray(c.errorLabels().stream().map(BsonString::new).toList()))
                    .append("times", new BsonInt32(c.times()))
                    .append("expected", new BsonString(c.expectation()))
                    .append("expectedAttempts", new BsonInt32(c.expectedAttempts()))
                    .append("attempts", new BsonInt64(r.attempts()))
                    .append("retried", BsonBoolean.valueOf(r.retried()))
                    .append("transactionId", new BsonString(c.transactionId().name()))
                    .append("transactionProblem", r.transactionProblem() == null ? BsonNull.VALUE : new BsonString(r.transactionProblem()))
                    .append("raised", new BsonString(r.raised()))
                    .append("verdict", new BsonString(r.verdict())));
        }
        long matched = results.stream().filter(SpecResult::matches).count();
        return new BsonDocument("upstream", new BsonString(upstream)).append("driver", new BsonString(driver))
                .append("matched", new BsonInt64(matched)).append("total", new BsonInt32(results.size()))
                .append("cases", array).toJson(JsonWriterSettings.builder().outputMode(JsonMode.RELAXED).indent(true).build());
    }

    private static String[] cells(SpecResult r) {
        SpecCase c = r.specCase();
        return new String[] {c.group(), c.name(), c.expectation(), Long.toString(r.attempts()), r.retried() ? "yes" : "no",
            r.raised(), r.verdict()};
    }

    private static void row(StringBuilder out, String[] cells) {
        for (int i = 0; i < cells.length; i++) {
            int width = WIDTHS[i];
            String text = cells[i];
            if (width == 0) {
                out.append(text);
            } else {
                out.append(text.length() >= width ? text.substring(0, width - 2) + "~ " : text + " ".repeat(width - text.length()));
            }
        }
        out.append('\n');
    }
}
