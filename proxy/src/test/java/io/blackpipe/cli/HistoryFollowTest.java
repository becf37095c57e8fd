package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.testing.UpstreamLane;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * `blackpipe history --follow`, run as its own process (as a CI script runs it in the background) against a real
 * proxy: the commands kept so far, then each new one as the driver sends it, until stopped.
 */
class HistoryFollowTest {
    @TempDir
    Path temp;

    private static CliChild follow(Path temp, AdminRig rig, String... more) throws Exception {
        List<String> args = new java.util.ArrayList<>(List.of("history", "--follow", "--admin", rig.url(), "--admin-token", AdminRig.TOKEN));
        args.addAll(List.of(more));
        return new CliChild(temp, temp, Map.of(), args.toArray(new String[0]));
    }

    @Test
    void followPrintsTheCommandsSoFarThenEachNewOneAsItHappens() throws Exception {
        String earlier = UpstreamLane.freshDatabaseName("cli_follow_before") + ".c";
        String later = UpstreamLane.freshDatabaseName("cli_follow_after") + ".c";
        try (AdminRig rig = AdminRig.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            HistoryCommandTest.insert(rig, earlier, new Document("_id", 1));
            try (CliChild table = follow(temp, rig); CliChild json = follow(temp, rig, "--json")) {
                assertEquals(HistoryCommandTest.HEADER, List.of(table.awaitLine("TIME").split(" {2,}")));
                awaitLineEndingWith(table, earlier); // the backlog: recorded before the child started
                String backlog = json.awaitLine("{");
                assertEquals(earlier, BsonDocument.parse(backlog).getString("ns").getValue(), backlog);

                HistoryCommandTest.insert(rig, later, new Document("_id", 1)); // while both follow
                String row = awaitLineEndingWith(table, later);
                List<String> cells = List.of(row.split(" {2,}"));
                assertEquals(List.of("insert", "1", "-", "ok", "-"), cells.subList(2, 7), row);
                assertTrue(table.process.isAlive(), "still following: " + table.describe());

                BsonDocument streamed = BsonDocument.parse(awaitJsonFor(json, later));
                assertEquals("insert", streamed.getString("command").getValue());

                // interrupted (SIGTERM, as a CI script's kill or Ctrl-C's SIGINT): it stops, whatever it was waiting for
                json.process.destroy();
                assertTrue(json.process.waitFor(15, java.util.concurrent.TimeUnit.SECONDS), json::describe);
                assertEquals(143, json.process.exitValue(), json::describe);
            }
        }
    }

    /**
     * The proxy stopping ends a follower (exit 1, saying so) rather than leaving it waiting for lines
     * that will never come: the admin server closes its open connections as it stops. Three rounds,
     * as a connection left open showed in about three of four.
     */
    @Test
    void aFollowerEndsWhenTheProxyStops() throws Exception {
        for (int round = 0; round < 3; round++) {
            AdminRig rig = AdminRig.start(ProxyConfig.embedded(UpstreamLane.uri()));
            try (CliChild json = follow(temp, rig, "--json")) {
                HistoryCommandTest.insert(rig, UpstreamLane.freshDatabaseName("cli_follow_stop") + ".c", new Document("_id", 1));
                json.awaitLine("{"); // following: the stream is open
                rig.close();
                assertTrue(json.process.waitFor(15, java.util.concurrent.TimeUnit.SECONDS), "round " + round + ": " + json.describe());
                assertEquals(1, json.process.exitValue(), json::describe);
                assertTrue(json.stderrText().contains("ended"), json::describe);
            }
        }
    }

    /**
     * `history --follow --json | head -1`: once its reader is gone, the next entry ends the follower (exit 0) and
     * its stream, instead of it following an unread pipe (and holding the proxy's stream open) forever.
     */
    @Test
    void followEndsWhenItsStdoutIsClosed() throws Exception {
        String ns = UpstreamLane.freshDatabaseName("cli_follow_closed") + ".c";
        try (AdminRig rig = AdminRig.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            HistoryCommandTest.insert(rig, ns, new Document("_id", 0)); // a backlog: the first line comes at once
            String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
            ProcessBuilder builder = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp", classPath, "io.blackpipe.cli.Main", "history", "--follow", "--json", "--admin", rig.url(),
                    "--admin-token", AdminRig.TOKEN)
                    .redirectError(temp.resolve("follow.err").toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
            builder.environment().keySet().removeIf(name -> name.startsWith("BLACKPIPE_"));
            Process follower = builder.start();
            try {
                java.io.BufferedReader out = new java.io.BufferedReader(new java.io.InputStreamReader(
                        follower.getInputStream(), java.nio.charset.StandardCharsets.UTF_8));
                String first = out.readLine();
                assertTrue(first != null && first.startsWith("{"), "first line: " + first);
                out.close(); // as `head -1` exits
                for (int i = 1; i <= 20 && follower.isAlive(); i++) {
                    HistoryCommandTest.insert(rig, ns, new Document("_id", i)); // lines it can no longer write
                    follower.waitFor(500, java.util.concurrent.TimeUnit.MILLISECONDS);
                }
                assertTrue(follower.waitFor(15, java.util.concurrent.TimeUnit.SECONDS),
                        "still following a closed stdout; stderr: " + java.nio.file.Files.readString(temp.resolve("follow.err")));
                assertEquals(0, follower.exitValue(), () -> "stderr: " + readQuietly(temp.resolve("follow.err")));
            } finally {
                follower.destroyForcibly();
                follower.waitFor(10, java.util.concurrent.TimeUnit.SECONDS);
            }
        }
    }

    private static String readQuietly(Path file) {
        try {
            return java.nio.file.Files.readString(file);
        } catch (java.io.IOException e) {
            return e.toString();
        }
    }

    private static String awaitLineEndingWith(CliChild child, String ns) throws Exception {
        String line;
        do {
            line = child.awaitLine("");
        } while (!line.endsWith(ns));
        return line;
    }

    private static String awaitJsonFor(CliChild child, String ns) throws Exception {
        String line;
        do {
            line = child.awaitLine("{");
        } while (!BsonDocument.parse(line).getString("ns").getValue().equals(ns));
        return line;
    }
}
