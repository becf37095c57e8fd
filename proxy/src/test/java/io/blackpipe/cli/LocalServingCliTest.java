package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.blackpipe.testing.UpstreamLane;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * `blackpipe local` without --check, as the README has a user run it: it starts its own upstream,
 * serves an app's driver through the proxy until stopped, and on SIGTERM (Ctrl-C) stops the
 * upstream it started, so nothing is left running.
 */
class LocalServingCliTest {
    @TempDir
    Path temp;

    private static MongoClient client(String uri) {
        return MongoClients.create(MongoClientSettings.builder().applyConnectionString(new ConnectionString(uri))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(2, TimeUnit.SECONDS)).build());
    }

    @Test
    void localServesAnAppThroughTheProxyAndStopsItsUpstreamWithIt() throws Exception {
        String upstreamUri;
        try (CliChild local = new CliChild(temp, null, Map.of(), "local", "--port", "0", "--admin-port", "0")) {
            upstreamUri = local.awaitLine("upstream uri: ").substring("upstream uri: ".length()).trim();
            String admin = local.awaitLine("admin: http://").split("\\s+")[1].replace("/metrics", "");
            String proxied = local.awaitLine("connection string: ").substring("connection string: ".length()).trim();
            local.awaitLine("serving;");
            // local's own check of the path is no application command: before, its ping counted as one
            String stats = java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(
                    java.net.URI.create(admin + "/api/v1/stats")).build(), java.net.http.HttpResponse.BodyHandlers.ofString()).body();
            assertEquals(0, org.bson.BsonDocument.parse(stats).getArray("commands").size(), stats);
            try (MongoClient app = client(proxied); MongoClient direct = client(upstreamUri)) {
                MongoCollection<Document> orders = app.getDatabase("local_serving").getCollection("orders");
                orders.insertOne(new Document("_id", 1).append("item", "tea"));
                assertEquals("tea", orders.find().first().getString("item"), "read back through the proxy");
                assertEquals(1, direct.getDatabase("local_serving").getCollection("orders").countDocuments(),
                        "the upstream local started holds it");
            }
            local.process.destroy(); // SIGTERM, as a CI job's kill
            assertTrue(local.process.waitFor(30, TimeUnit.SECONDS), local::describe);
            // a stop asked for is no failure: `kill $PID; wait $PID` under `set -e` went on only with `|| true` (143)
            assertEquals(0, local.process.exitValue(), local::describe);
        }
        try (MongoClient direct = client(upstreamUri)) {
            assertThrows(MongoException.class, () -> direct.getDatabase("admin").runCommand(new Document("ping", 1)),
                    "the upstream local started is gone with it");
        }
    }

    /**
     * A CI job's teardown may fire while `local` still starts (a step before it failed): the stop is taken then too, and
     * the command stops as soon as what it started can be closed, exit 0 (the JVM ended with 143), its upstream with it.
     */
    @Test
    void aStopWhileLocalStillStartsIsACleanStopToo() throws Exception {
        try (CliChild local = new CliChild(temp, null, Map.of(), "local", "--port", "0", "--admin-port", "-1")) {
            local.awaitLine("starting a local upstream ..."); // printed once the signals are taken
            // SIGTERM while the upstream starts, by kill: Process.destroy() would close this side's pipe of the child's output
            assertEquals(0, new ProcessBuilder("kill", "-TERM", Long.toString(local.process.pid())).inheritIO().start().waitFor());
            assertTrue(local.process.waitFor(60, TimeUnit.SECONDS), local::describe);
            assertEquals(0, local.process.exitValue(), local::describe);
            assertTrue(local.stderrText().contains("blackpipe: stopping once the start is done (SIGTERM again to end it now)"),
                    local::describe);
            String out = local.stdoutText();
            assertFalse(out.contains("serving;"), local::describe);
            java.util.regex.Matcher uri = java.util.regex.Pattern.compile("upstream uri: (\\S+)").matcher(out);
            assertTrue(uri.find(), "the upstream it started, named before the stop: " + out);
            try (MongoClient direct = client(uri.group(1))) {
                assertThrows(MongoException.class, () -> direct.getDatabase("admin").runCommand(new Document("ping", 1)),
                        "the upstream it started is gone with it");
            }
        }
    }

    /** Ctrl-C is SIGINT: the same clean stop, exit 0 (the JVM ended with 130). */
    @Test
    void ctrlCStopsTheProxyCleanlyWithExitZero() throws Exception {
        // a child inherits an ignored SIGINT, and a JVM takes no handler for it then (the README says to use kill)
        assumeFalse(sigintIgnoredHere(), "this JVM started with SIGINT ignored (a background job of a shell without job control):"
                + " its child would ignore it too");
        try (CliChild proxy = new CliChild(temp, null, Map.of(), "proxy", "--upstream", UpstreamLane.uri(), "--port", "0",
                "--admin-port", "-1")) {
            String proxied = proxy.awaitLine("connection string: ").substring("connection string: ".length()).trim();
            try (MongoClient app = client(proxied)) {
                assertEquals(1.0, app.getDatabase("admin").runCommand(new Document("ping", 1)).get("ok", Number.class).doubleValue());
            }
            Process kill = new ProcessBuilder("kill", "-INT", Long.toString(proxy.process.pid())).inheritIO().start();
            assertEquals(0, kill.waitFor(), "kill -INT was sent");
            assertTrue(proxy.process.waitFor(30, TimeUnit.SECONDS), proxy::describe);
            assertEquals(0, proxy.process.exitValue(), proxy::describe);
            assertThrows(MongoException.class, () -> {
                try (MongoClient app = client(proxied)) {
                    app.getDatabase("admin").runCommand(new Document("ping", 1));
                }
            }, "the proxy is gone");
        }
    }

    /** Whether this process ignores SIGINT (Linux says so in /proc/self/status; elsewhere taken as not). */
    private static boolean sigintIgnoredHere() throws IOException {
        Path status = Path.of("/proc/self/status");
        if (!Files.isReadable(status)) {
            return false;
        }
        for (String line : Files.readAllLines(status)) {
            if (line.startsWith("SigIgn:")) {
                return (Long.parseUnsignedLong(line.substring("SigIgn:".length()).trim(), 16) & (1L << (2 - 1))) != 0; // SIGINT is 2
            }
        }
        return false;
    }

    /** The check goes before the scenario: one whose first step is an outage failed it, and `local` exited 1. */
    @Test
    void aScenarioThatBeginsWithAnOutageStartsAfterTheCheck() throws Exception {
        try (io.blackpipe.testing.LogCapture log = io.blackpipe.testing.LogCapture.start()) {
            CliRun run = CliRun.of("local", "--check", "--port", "0", "--admin-port", "-1", "--scenario", "persistent-outage");
            assertEquals(0, run.exitCode(), run::toString);
            assertTrue(run.out().contains(", ok: 1"), run::toString);
            assertTrue(log.messages().stream().anyMatch(m -> m.startsWith("scenario 'persistent-outage' started")),
                    () -> String.join("\n", log.messages()));
        }
    }

    /**
     * Over jongodb, `local` says where it differs from mongod in a way an app or a test meets: the
     * commands and update operators it lacks (JongodbUpstreamTest checks the list). Its refusals of
     * read preferences other than primary and of w:0 writes, its lack of endSessions, its second run
     * of a retried write and its applying none of a batch insert that meets a duplicate key are not said:
     * blackpipe makes up for them (MemberQuirksTest, RetriedWritesTest, DuplicateKeyDriverTest).
     * A mongod on PATH (a real set) gets no note.
     */
    @Test
    void localNotesWhereJongodbDiffersFromMongod() {
        CliRun plain = CliRun.of("local", "--check", "--port", "0", "--admin-port", "-1");
        assertEquals(0, plain.exitCode(), plain::toString);
        boolean jongodb = plain.out().contains("upstream: jongodb ");
        String lacks = "\nnote: jongodb 0.1.6 has no create, drop, dropDatabase, dropIndexes, renameCollection, listCollections or"
                + " listDatabases command";
        assertEquals(jongodb, plain.out().contains(lacks), plain::toString);
        assertFalse(plain.out().contains("batch insert"), plain::toString);
        assertFalse(plain.out().contains("retried write"), plain::toString);
        assertFalse(plain.out().contains("note: jongodb refuses"), plain::toString);
        assertFalse(plain.out().contains("read preference"), plain::toString);
        CliRun simulated = CliRun.of("local", "--check", "--simulate-members", "3", "--port", "0", "--admin-port", "-1");
        assertEquals(0, simulated.exitCode(), simulated::toString);
        assertEquals(jongodb, simulated.out().contains(lacks), simulated::toString);
        assertFalse(plain.out().contains("awaitable hello"), "plain local holds and streams hellos as mongod does: " + plain.out());
    }

    /** As `blackpipe proxy` does (EnvironmentVariablesCliTest): a compose file's unusable file blames its variable, not a flag nobody typed. */
    @Test
    void aFailedStartAboutAnOptionOnlyItsVariableSetNamesTheVariable() throws Exception {
        String[] args = {"local", "--check", "--port", "0", "--admin-port", "-1"};
        try (CliChild local = new CliChild(temp, null, Map.of("BLACKPIPE_HISTORY", "/nowhere/history.jsonl"), args)) {
            assertEquals(1, local.awaitExit(), local::describe);
            assertTrue(local.stderrText().contains("blackpipe: cannot open the history file /nowhere/history.jsonl: its directory"
                    + " /nowhere does not exist (set by BLACKPIPE_HISTORY)"), local::describe);
        }
        CliRun typed = CliRun.of("local", "--check", "--port", "0", "--admin-port", "-1", "--history", "/nowhere/history.jsonl");
        assertEquals(1, typed.exitCode(), typed::toString);
        assertTrue(typed.err().contains("blackpipe: cannot open the history file"), typed::toString);
        assertFalse(typed.err().contains("set by"), typed::toString);
    }
}
