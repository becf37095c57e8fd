package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.event.CommandStartedEvent;
import io.blackpipe.observe.HistoryEntry;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.CommandLog;
import io.blackpipe.testing.UpstreamLane;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.bson.Document;
import org.bson.UuidRepresentation;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * `blackpipe proxy --history FILE`, as a user starts it, with a rule added by `fault add --command insert
 * --reset --times 1`: once the proxy is stopped (SIGTERM), FILE holds one JSON line per command attempt the
 * driver sent, as its command monitoring reports them: the reset first insert (fault resetConnection,
 * network_error, info), its retry (same lsid and txnNumber, attempt 2, ok); the server holds the one document.
 */
class HistoryFileCliTest {
    @TempDir
    Path temp;

    private static UUID lsidOf(CommandStartedEvent event) {
        BsonBinary id = event.getCommand().getDocument("lsid").getBinary("id");
        return id.asUuid(UuidRepresentation.STANDARD);
    }

    /**
     * A history file that fails during the run (here /dev/full: "No space left on device") is named in the log line, and
     * SIGTERM, which is to complete the file, exits 1 saying why: an exit 0 let a CI job take the incomplete file as whole.
     */
    @Test
    void aHistoryFileThatFailsIsNamedAndTheExitStatusIsOne() throws Exception {
        Path full = Path.of("/dev/full");
        assumeTrue(Files.isWritable(full), "needs /dev/full (Linux)");
        String db = UpstreamLane.freshDatabaseName("historyFull");
        CliChild child = new CliChild(temp, null, Map.of(), "proxy", "--upstream", UpstreamLane.uri(), "--host", "127.0.0.1",
                "--port", "0", "--admin-port", "0", "--history", full.toString());
        try (child) {
            String admin = child.awaitLine("admin: ").substring("admin: ".length()).split("\\s+")[0].replace("/metrics", "");
            String uri = connectionString(child);
            try (MongoClient client = MongoClients.create(uri)) {
                client.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1));
            }
            String stopped = "the history file /dev/full stopped: No space left on device";
            Await.until(Duration.ofSeconds(20), child::describe, () -> stderrHolds(child, stopped));
            // said while the proxy runs too: /health still answers ok (it serves), with the failure among its warnings
            CliRun health = CliRun.of("health", "--admin", admin);
            assertEquals(0, health.exitCode(), health::toString);
            BsonDocument said = BsonDocument.parse(health.out());
            assertEquals("ok", said.getString("status").getValue(), health::toString);
            assertEquals(List.of(stopped + "; the lines after that were not written"), said.getArray("warnings").stream()
                    .map(w -> w.asString().getValue()).toList(), health::toString);
        } // SIGTERM
        assertEquals(1, child.awaitExit(), child::describe);
        assertTrue(child.stderrText().contains("blackpipe: exit status 1: the history file /dev/full stopped: No space left on device;"
                + " the lines after that were not written"), child::describe);
    }

    /**
     * A history file whose writer is stuck (a pipe nobody reads, a hung volume) is not completed within 5 s of SIGTERM:
     * the proxy exited 0 all the same, and the lines still queued were lost (a reviewer's FIFO). Now exit 1, saying so.
     */
    @Test
    void aHistoryFileStuckInAWriteIsNamedAndTheExitStatusIsOne() throws Exception {
        Path fifo = temp.resolve("history.fifo");
        assumeTrue(new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor() == 0, "needs mkfifo");
        Thread reader = new Thread(() -> {
            try (java.io.InputStream held = Files.newInputStream(fifo)) { // opened, never read: the writer blocks once the pipe is full
                Thread.sleep(120_000);
            } catch (IOException | InterruptedException e) {
                // the test ended
            }
        }, "fifo-reader-that-never-reads");
        reader.setDaemon(true);
        reader.start();
        String db = UpstreamLane.freshDatabaseName("historyStuck");
        CliChild child = new CliChild(temp, null, Map.of(), "proxy", "--upstream", UpstreamLane.uri(), "--host", "127.0.0.1",
                "--port", "0", "--admin-port", "0", "--history", fifo.toString());
        try (child) {
            String admin = child.awaitLine("admin: ").substring("admin: ".length()).split("\\s+")[0].replace("/metrics", "");
            String uri = connectionString(child);
            try (MongoClient client = MongoClients.create(uri)) {
                for (int i = 0; i < 1_500; i++) { // some 300 bytes a line: past the pipe's 64 KiB
                    client.getDatabase(db).getCollection("c").find(new Document("_id", i)).first();
                }
            }
            // said while it runs: once the writer has not moved for 5 s, /health warns (still ok: the proxy serves)
            String stuck = "the history file " + fifo + " has taken no lines for ";
            Await.until(Duration.ofSeconds(30), child::describe, () -> {
                CliRun health = CliRun.of("health", "--admin", admin);
                return health.exitCode() == 0 && health.out().contains(stuck);
            });
            BsonDocument said = BsonDocument.parse(CliRun.of("health", "--admin", admin).out());
            assertEquals("ok", said.getString("status").getValue(), said::toJson);
            assertTrue(said.getArray("warnings").get(0).asString().getValue().endsWith("(its writer is stuck writing); the lines"
                    + " since wait in memory, and are dropped if it is still stuck after 60 s or 100000 lines"), said::toJson);
        } // SIGTERM
        assertEquals(1, child.awaitExit(), child::describe);
        assertTrue(child.stderrText().contains("blackpipe: exit status 1: the history file " + fifo + " was not completed within 5 s"),
                child::describe);
        reader.interrupt();
    }

    private static String connectionString(CliChild child) throws Exception {
        return child.awaitLine("connection string: ").substring("connection string: ".length()).trim();
    }

    private static boolean stderrHolds(CliChild child, String text) {
        try {
            return child.stderrText().contains(text);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void theHistoryFileHoldsALinePerAttemptTheResetInsertThenItsRetry() throws Exception {
        Path history = temp.resolve("history.jsonl");
        String db = UpstreamLane.freshDatabaseName("historyFile");
        CommandLog driverSaw = new CommandLog();
        try (CliChild child = new CliChild(temp, null, Map.of(), "proxy", "--upstream", UpstreamLane.uri(), "--host", "127.0.0.1",
                "--port", "0", "--admin-port", "0", "--history", history.toString())) {
            String adminLine = child.awaitLine("admin: ");
            String admin = adminLine.substring("admin: ".length()).split("\\s+")[0].replace("/metrics", "");
            String uri = connectionString(child);

            CliRun added = CliRun.of("fault", "add", "--admin", admin, "--command", "insert", "--reset", "--times", "1");
            assertEquals(0, added.exitCode(), added::toString);
            try (MongoClient client = MongoClients.create(driverSaw.driverOn(CommandLog.withOptions(uri, "retryWrites=true"))
                    .applicationName("history-cli").build())) {
                client.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1).append("x", "once"));
            } // the driver's endSessions, if it sends one, is an attempt too
        } // SIGTERM: the proxy completes the file as it stops

        try (MongoClient direct = UpstreamLane.directClient()) {
            assertEquals(List.of(new Document("_id", 1).append("x", "once")),
                    direct.getDatabase(db).getCollection("c").find().into(new ArrayList<>()), "the server holds the document once");
        }

        assertTrue(Files.exists(history), "the proxy wrote " + history);
        List<HistoryEntry> entries = Files.readAllLines(history).stream().map(HistoryEntry::fromJson).toList();
        assertEquals(driverSaw.started.stream().map(CommandStartedEvent::getCommandName).toList(),
                entries.stream().map(HistoryEntry::command).toList(), "a line per command attempt the driver sent, in order");

        HistoryEntry reset = entries.get(0);
        HistoryEntry retry = entries.get(1);
        CommandStartedEvent first = driverSaw.started.get(0);
        assertEquals("insert", reset.command());
        assertEquals(db + ".c", reset.namespace());
        assertEquals("history-cli", reset.app());
        assertEquals(1, reset.attempt());
        assertEquals("resetConnection", reset.fault());
        assertEquals("network_error", reset.outcome());
        assertEquals("info", reset.type(), "a reset leaves the client not knowing: Jepsen's info");
        assertEquals(lsidOf(first), reset.lsid(), "the driver's session");
        assertEquals(first.getCommand().getInt64("txnNumber").longValue(), reset.txnNumber());

        assertEquals("insert", retry.command());
        assertEquals(2, retry.attempt(), "the retry is counted as the second attempt");
        assertNull(retry.fault());
        assertEquals("ok", retry.outcome());
        assertEquals("ok", retry.type());
        assertEquals(reset.lsid(), retry.lsid());
        assertEquals(reset.txnNumber(), retry.txnNumber(), "the retry carries the first attempt's txnNumber");
        assertTrue(retry.connectionId() != reset.connectionId(), "the retry came on a new connection, the first was reset");
        assertTrue(entries.stream().skip(2).noneMatch(e -> e.command().equals("insert")), () -> "two inserts only: " + entries);
    }
}
