package io.blackpipe.cli;

import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Locale;
import org.bson.BsonDocument;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

@Command(name = "history", mixinStandardHelpOptions = true, versionProvider = Version.class,
        description = {"The latest application commands the proxy saw (up to 10,000), one row each: when it was invoked"
                + " (UTC), member, command, attempt (2 and on: a retry), outcome (with the error code), the fault that"
                + " broke it, how long it took, and its namespace.",
                "With --json, the API's lines (one JSON document per command, Jepsen-style) unchanged, for jq."})
final class HistoryCommand extends AdminCommand {
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss.SSS", Locale.ROOT).withZone(ZoneOffset.UTC);
    /** The namespace comes last: a long one lengthens its own line instead of pushing every column after it. */
    private static final String[] HEADER = {"TIME", "MEMBER", "COMMAND", "ATTEMPT", "RETRY", "OUTCOME", "FAULT", "DURATION", "NS"};
    /** --follow's column widths, as its rows are printed before the widest is known: enough for the usual values. */
    private static final int[] FOLLOW_WIDTHS = {12, 15, 13, 7, 5, 13, 15, 9, 0};

    @Option(names = "--since", paramLabel = "INSTANT",
            description = "Only the commands recorded from this instant on (ISO-8601 in UTC, the proxy's clock, as `blackpipe reset` prints it).")
    String since;

    @Option(names = "--follow", description = "Stream: the commands kept so far, then each new one as it completes, until interrupted"
            + " or the proxy stops (exit 1).")
    boolean follow;

    @Option(names = "--json", description = "Print the API's JSON lines unchanged instead of a table.")
    boolean json;

    /**
     * Stdout went away (`history --follow | head`): nobody reads the stream any more. picocli's writer wraps
     * System.out in an OutputStreamWriter, and System.out, a PrintStream, swallows the broken pipe: only its
     * own checkError() tells, the writer's never does.
     */
    private static final class OutputClosed extends RuntimeException {
        OutputClosed() {
            super(null, null, false, false);
        }
    }

    /** The proxy ended the stream with a line that says why. */
    private static final class StreamEnded extends RuntimeException {
        StreamEnded(String why) {
            super(why, null, false, false);
        }
    }

    @Override
    int run(AdminClient admin, PrintWriter out) throws AdminClient.Failure {
        checkArguments();
        if (follow) {
            return follow(admin, out);
        }
        String lines = admin.call("GET", "history" + (since == null ? "" : "?since=" + AdminClient.encode(since)), null).body();
        if (json) {
            out.print(lines);
            return 0;
        }
        Table table = new Table(HEADER);
        lines.lines().filter(line -> !line.isBlank()).forEach(line -> table.row(cells(line)));
        if (table.isEmpty()) {
            out.println(since == null ? "no commands recorded" : "no commands recorded since " + since);
        } else {
            table.print(out);
        }
        return 0;
    }

    /** Caught here, before anything is sent, as usage errors (exit 2): the API would refuse them with a 400. */
    private void checkArguments() {
        if (since == null) {
            return;
        }
        if (follow) {
            throw new ParameterException(spec.commandLine(), "--since and --follow cannot be combined: --follow streams every command kept");
        }
        try {
            Instant.parse(since);
        } catch (DateTimeParseException e) {
            throw new ParameterException(spec.commandLine(), "--since '" + since
                    + "' is not an instant such as 2025-01-31T12:00:00.000001Z (ISO-8601, UTC)");
        }
    }

    /** Prints each line as it arrives; the proxy ending the stream (it stopped) is a failure: nothing more will come. */
    private int follow(AdminClient admin, PrintWriter out) throws AdminClient.Failure {
        Table table = new Table(HEADER);
        Runnable header = () -> { // once the proxy said yes: a refusal prints nothing on stdout
            if (!json) {
                table.printHeader(out, FOLLOW_WIDTHS);
                out.flush();
            }
        };
        try {
            admin.streamLines("history?follow=true", header, line -> {
                if (line.isBlank()) {
                    return;
                }
                if (line.startsWith("{\"error\": ")) { // the proxy ended the stream, saying why (this follower fell behind)
                    throw new StreamEnded(BsonDocument.parse(line).getString("error").getValue());
                }
                if (json) {
                    out.println(line);
                } else {
                    table.printRow(out, FOLLOW_WIDTHS, cells(line));
                }
                out.flush();
                if (out.checkError() || System.out.checkError()) {
                    throw new OutputClosed();
                }
            });
        } catch (OutputClosed e) {
            return 0;
        } catch (StreamEnded e) {
            throw new AdminClient.Failure(e.getMessage());
        }
        throw new AdminClient.Failure("the stream of " + admin.base() + "/api/v1/history?follow=true ended; did the proxy stop?");
    }

    /** One history line as the table's cells, in {@link #HEADER}'s order. */
    static Object[] cells(String line) {
        BsonDocument entry = BsonDocument.parse(line);
        Instant invoke = instant(entry, "invoke");
        Instant complete = instant(entry, "complete");
        long attempt = entry.isNumber("attempt") ? entry.getNumber("attempt").longValue() : 0;
        String outcome = ScenarioCommand.string(entry, "outcome") + (entry.isNumber("code") ? " " + entry.getNumber("code").intValue() : "");
        return List.of(invoke == null ? "" : TIME.format(invoke), ScenarioCommand.string(entry, "member"),
                ScenarioCommand.string(entry, "command"), attempt == 0 ? "" : Long.toString(attempt), attempt > 1 ? "retry" : "",
                outcome, entry.isString("fault") ? entry.getString("fault").getValue() : "",
                invoke == null || complete == null ? "" : duration(Duration.between(invoke, complete)),
                ScenarioCommand.string(entry, "ns")).toArray();
    }

    private static Instant instant(BsonDocument entry, String key) {
        try {
            return entry.isString(key) ? Instant.parse(entry.getString(key).getValue()) : null;
        } catch (DateTimeParseException e) {
            return null; // a line from a newer proxy: show what can be shown
        }
    }

    /** Milliseconds with one decimal (the history keeps microseconds): "0.4ms", "1500.0ms". */
    private static String duration(Duration took) {
        return String.format(Locale.ROOT, "%.1fms", took.toNanos() / 1_000_000.0);
    }
}
