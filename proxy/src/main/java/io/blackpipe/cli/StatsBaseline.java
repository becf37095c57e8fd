package io.blackpipe.cli;

import io.blackpipe.admin.StatsJson;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;

/**
 * The counts `blackpipe expect --baseline FILE` and `blackpipe stats --baseline FILE` count from: FILE as `blackpipe stats --json` wrote it. A file that is
 * not that is a usage error naming what is wrong with it, never a baseline of zero (which would pass a count from the
 * start as one since).
 */
final class StatsBaseline {
    private static final List<String> TABLES = List.of("commands", "outcomes", "faults");

    private StatsBaseline() {
    }

    static BsonDocument read(CommandLine command, Path file) {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw new ParameterException(command, "--baseline: cannot read " + file + ": no such file");
        } catch (IOException | RuntimeException e) {
            throw new ParameterException(command, "--baseline: cannot read " + file + " (" + e + ")");
        }
        if (text.isBlank()) {
            throw notStats(command, file, "it is empty");
        }
        BsonDocument stats;
        try {
            stats = BsonDocument.parse(text);
        } catch (RuntimeException e) { // JsonParseException, or the bson reader's own for a document cut short
            throw notStats(command, file, "not a JSON document: " + e.getMessage());
        }
        for (String table : TABLES) {
            BsonValue rows = stats.get(table);
            if (rows == null || !rows.isArray() || !rows.asArray().stream().allMatch(BsonValue::isDocument)) {
                throw notStats(command, file, "no '" + table + "' array of rows");
            }
        }
        return stats;
    }

    /**
     * Fails when {@code stats} are of another run of a proxy than {@code file}'s: the proxy started again since the file
     * was saved, or it is another, and what it counted since is unknown (its counts began anew), whichever counts grew.
     */
    static void checkSameRun(BsonDocument stats, BsonDocument baseline, Path file) throws AdminClient.Failure {
        if (!StatsJson.sameRun(baseline, stats)) {
            throw new AdminClient.Failure("the proxy is not the run " + file + " was saved from: it started again since, or it is"
                    + " another proxy, so what it counted since the file is unknown");
        }
    }

    /**
     * Why counts below a baseline's are no counts since it (counts only grow), as a failure naming the first such count:
     * {@code what} ("attempts insert"), {@code now} what the proxy counted and {@code then} what {@code file} holds.
     */
    static AdminClient.Failure countedLessThan(Path file, String what, long now, long then) {
        return new AdminClient.Failure("the proxy counted less than " + file + " holds (" + what + ": " + now + ", the file "
                + then + "): it is not the proxy the file was saved from, or it started again since");
    }

    private static ParameterException notStats(CommandLine command, Path file, String why) {
        return new ParameterException(command, "--baseline: " + file + " is not what `blackpipe stats --json` writes (" + why + ")");
    }
}
