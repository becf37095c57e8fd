package io.blackpipe.observe;

import static com.mongodb.client.model.Filters.eq;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.InsertManyOptions;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.UpstreamLane;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.bson.BsonValue;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The operation history file: one JSON line per application command the driver sent, in Jepsen's
 * shape, with the outcome as the client can know it (ok, fail: it did not happen, info: it may have).
 */
class HistoryTest {
    @TempDir
    Path dir;

    @Test
    void everyApplicationCommandIsOneJsonLineWithItsAttemptFaultAndOutcome() throws Exception {
        Path file = dir.resolve("history.jsonl");
        String db = UpstreamLane.freshDatabaseName("history");
        try (MongoClient direct = UpstreamLane.directClient()) {
            direct.getDatabase(db).getCollection("c").insertOne(new Document("_id", "seed"));
        }
        DriverEvents driver = new DriverEvents();
        String member;
        ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()).withHistoryFile(file));
        try {
            try (MongoClient client = CountersMatchDriverTest.client(proxy, "bp-history", driver, "retryWrites=true&retryReads=true")) {
                MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
                // 1. an insert whose first attempt gets NotWritablePrimary (fail), retried (ok)
                CountersMatchDriverTest.rule(proxy, "{configureFailPoint: 'failCommand', mode: {times: 1}, "
                        + "data: {failCommands: ['insert'], errorCode: 10107}}");
                c.insertOne(new Document("_id", 1));
                // 2. a find whose reply is dropped (info), retried (ok)
                CountersMatchDriverTest.rule(proxy, "{configureFailPoint: 'failCommand', mode: {times: 1}, "
                        + "data: {failCommands: ['find'], dropReply: true}}");
                assertEquals("seed", c.find(eq("_id", "seed")).first().getString("_id"));
                // 3. an insert refused for good (fail, not retried)
                CountersMatchDriverTest.rule(proxy, "{configureFailPoint: 'failCommand', mode: {times: 1}, "
                        + "data: {failCommands: ['insert'], errorCode: 13}}");
                assertEquals(13, assertThrows(MongoCommandException.class, () -> c.insertOne(new Document("_id", 2))).getErrorCode());
            }
            member = CountersMatchDriverTest.primaryLabel(proxy);
        } finally {
            proxy.close(); // flushes the history file
        }

        List<Document> lines = new ArrayList<>();
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            if (!line.isBlank()) {
                lines.add(Document.parse(line));
            }
        }
        List<DriverEvents.Started> sent = driver.started();
        assertEquals(sent.size(), lines.size(), "one line per command the driver sent: " + names(sent) + " vs " + lines);
        for (int i = 0; i < lines.size(); i++) {
            Document line = lines.get(i);
            DriverEvents.Started event = sent.get(i);
            String context = "line " + (i + 1) + " " + line.toJson();
            assertEquals(event.name(), line.getString("command"), context);
            assertFalse(Set.of("hello", "isMaster", "ismaster").contains(line.getString("command")), context);
            Instant invoke = Instant.parse(line.getString("invoke"));
            Instant complete = Instant.parse(line.getString("complete"));
            assertFalse(complete.isBefore(invoke), context + ": invoke <= complete");
            assertEquals(member, line.getString("member"), context);
            assertEquals("bp-history", line.getString("app"), context);
            BsonValue lsid = event.command().get("lsid");
            if (lsid == null) {
                assertNull(line.get("lsid"), context);
            } else {
                UUID expected = lsid.asDocument().getBinary("id").asUuid();
                assertEquals(expected.toString(), line.getString("lsid"), context);
            }
            BsonValue txnNumber = event.command().get("txnNumber");
            if (txnNumber == null) {
                assertNull(line.get("txnNumber"), context);
            } else {
                assertEquals(txnNumber.asNumber().longValue(), ((Number) line.get("txnNumber")).longValue(), context);
            }
            if (i > 0) {
                assertFalse(Instant.parse(lines.get(i - 1).getString("invoke")).isAfter(invoke), context + ": in invocation order");
            }
        }

        // the workload line by line (endSessions, if the driver sent it at close, follows)
        assertLine(lines.get(0), "insert", db + ".c", 1, "errorReply", "error", "fail");
        assertEquals(10107, lines.get(0).getInteger("code"));
        assertLine(lines.get(1), "insert", db + ".c", 2, null, "ok", "ok");
        assertEquals(lines.get(0).get("lsid"), lines.get(1).get("lsid"), "the retry is in the same session");
        assertEquals(lines.get(0).get("txnNumber"), lines.get(1).get("txnNumber"), "with the same txnNumber");
        assertTrue(lines.get(0).get("txnNumber") != null);
        assertLine(lines.get(2), "find", db + ".c", 1, "dropReply", "network_error", "info");
        assertLine(lines.get(3), "find", db + ".c", 2, null, "ok", "ok");
        assertEquals(lines.get(2).get("lsid"), lines.get(3).get("lsid"));
        assertNull(lines.get(2).get("txnNumber"), "a read has no txnNumber");
        assertLine(lines.get(4), "insert", db + ".c", 1, "errorReply", "error", "fail");
        assertEquals(13, lines.get(4).getInteger("code"));
        if (lines.get(4).get("lsid").equals(lines.get(0).get("lsid"))) {
            assertTrue(((Number) lines.get(4).get("txnNumber")).longValue() > ((Number) lines.get(0).get("txnNumber")).longValue(),
                    "the session's next write takes the next txnNumber");
        }
        for (int i = 5; i < lines.size(); i++) {
            assertEquals("endSessions", lines.get(i).getString("command"));
            // whatever the upstream made of it (jongodb has no endSessions): as the driver saw it
            assertEquals(driver.failed(sent.get(i)) ? "fail" : "ok", lines.get(i).getString("type"), lines.get(i).toJson());
            assertNull(lines.get(i).get("fault"));
        }
        assertTheReadmeNamesEveryKey(lines);
    }

    /** Users read the lines with jq: the README's history paragraph names each key as it is written ("ns", not "namespace"). */
    private static void assertTheReadmeNamesEveryKey(List<Document> lines) throws Exception {
        Path readme = Path.of("").toAbsolutePath();
        while (!Files.isRegularFile(readme.resolve("README.md")) || !Files.isDirectory(readme.resolve("fault-scripts"))) {
            readme = readme.getParent();
        }
        String text = Files.readString(readme.resolve("README.md"));
        int start = text.indexOf("`--history FILE` (and `GET /api/v1/history`");
        String paragraph = text.substring(start, text.indexOf("\n\n", start));
        for (Document line : lines) {
            for (String key : line.keySet()) {
                assertTrue(paragraph.contains("`" + key + "`"), () -> "the README's history paragraph names `" + key + "`: " + paragraph);
            }
        }
    }

    @Test
    void aHistoryFileIsAppendedToAndANetworkErrorOnAForwardedCommandIsInfo() throws Exception {
        Path file = dir.resolve("appended.jsonl");
        Files.writeString(file, "{\"earlier\": true}\n");
        String db = UpstreamLane.freshDatabaseName("history_append");
        DriverEvents driver = new DriverEvents();
        ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()).withHistoryFile(file));
        try {
            CountersMatchDriverTest.rule(proxy, "{configureFailPoint: 'failCommand', mode: {times: 1}, "
                    + "data: {failCommands: ['insert'], resetConnection: true}}");
            try (MongoClient client = CountersMatchDriverTest.client(proxy, "bp-history-2", driver, "retryWrites=false")) {
                assertThrows(com.mongodb.MongoSocketException.class,
                        () -> client.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1)));
            }
        } finally {
            proxy.close();
        }
        List<String> raw = Files.readAllLines(file, StandardCharsets.UTF_8);
        assertEquals("{\"earlier\": true}", raw.get(0), "the file is appended to, not replaced");
        Document insert = Document.parse(raw.get(1));
        assertLine(insert, "insert", db + ".c", 1, "resetConnection", "network_error", "info");
        assertEquals(raw.size() - 1, driver.started().size());
    }

    @Test
    void aWriteTheServerRefusedWithWriteErrorsIsFailAndOnePartlyAppliedIsInfo() throws Exception {
        // A duplicate key comes back as ok: 1 with writeErrors (the driver's CommandSucceededEvent), yet the
        // insert did not happen: Jepsen's fail, not ok. An unordered batch of which one write landed may
        // have changed something: info.
        // (against the scripted mongod: jongodb answers a duplicate key with ok: 0, where mongod sends writeErrors)
        String db = "history_write_errors";
        DriverEvents driver = new DriverEvents();
        try (ScriptedMongod scripted = ScriptedMongod.start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(scripted.uri("replicaSet=" + ScriptedMongod.SET_NAME)))) {
            try (MongoClient client = CountersMatchDriverTest.client(proxy, "bp-history-we", driver, "retryWrites=true")) {
                MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
                c.insertOne(new Document("_id", 1));
                MongoWriteException duplicate = assertThrows(MongoWriteException.class, () -> c.insertOne(new Document("_id", 1)));
                assertEquals(11000, duplicate.getCode());
                assertThrows(MongoBulkWriteException.class, () -> c.insertMany(
                        List.of(new Document("_id", 2), new Document("_id", 1)), new InsertManyOptions().ordered(false)));
            }
            List<HistoryEntry> inserts = proxy.history().recent().stream().filter(e -> e.command().equals("insert")).toList();
            assertEquals(3, inserts.size(), String.valueOf(inserts));
            assertEquals("ok", inserts.get(0).type(), inserts.get(0).toJson());
            assertEquals("ok", inserts.get(1).outcome(), "the outcome is the driver's: the command succeeded");
            assertEquals("fail", inserts.get(1).type(), "nothing of it happened: " + inserts.get(1).toJson());
            assertEquals(11000, inserts.get(1).errorCode(), inserts.get(1).toJson());
            assertEquals("info", inserts.get(2).type(), "one of its writes happened: " + inserts.get(2).toJson());
            assertEquals(11000, inserts.get(2).errorCode(), inserts.get(2).toJson());
        }
    }

    @Test
    void aWriteConcernErrorIsInfoWithItsCode() throws Exception {
        String db = UpstreamLane.freshDatabaseName("history_wce");
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            CountersMatchDriverTest.rule(proxy, "{configureFailPoint: 'failCommand', mode: {times: 1}, "
                    + "data: {failCommands: ['insert'], writeConcernError: {code: 64, errmsg: 'waiting for replication timed out'}}}");
            try (MongoClient client = CountersMatchDriverTest.client(proxy, "bp-history-wce", new DriverEvents(), "retryWrites=false")) {
                assertThrows(com.mongodb.MongoWriteConcernException.class,
                        () -> client.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1)));
            }
            HistoryEntry insert = proxy.history().recent().stream().filter(e -> e.command().equals("insert")).findFirst().orElseThrow();
            assertEquals("error", insert.outcome(), insert.toJson());
            assertEquals("info", insert.type(), "the write happened on the member: " + insert.toJson());
            assertEquals(64, insert.errorCode(), "the line names the error: " + insert.toJson());
        }
    }

    @Test
    void eachLineReachesTheFileWhileTheProxyRunsNotOnlyWhenItCloses() throws Exception {
        // tail -f on the history during a run: a line written but left in the writer's buffer is one
        // nobody sees until the proxy stops (or never, if it is killed)
        Path file = dir.resolve("live.jsonl");
        String db = UpstreamLane.freshDatabaseName("history_live");
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()).withHistoryFile(file));
             MongoClient client = CountersMatchDriverTest.client(proxy, "bp-history-live", new DriverEvents(), "retryWrites=true")) {
            client.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1));
            io.blackpipe.testing.Await.until(java.time.Duration.ofSeconds(10),
                    () -> "the insert's line in the file while the proxy still runs: " + read(file),
                    () -> read(file).stream().anyMatch(l -> l.contains("\"insert\"") && l.contains(db + ".c")));
            client.getDatabase(db).getCollection("c").find().first();
            io.blackpipe.testing.Await.until(java.time.Duration.ofSeconds(10),
                    () -> "the find's line too: " + read(file),
                    () -> read(file).stream().anyMatch(l -> l.contains("\"find\"") && l.contains(db + ".c")));
        }
    }

    @Test
    void aLineReadsBackAsTheSameEntryFieldForField() {
        // what a client of GET /api/v1/history gets back: the entries the proxy recorded, not an approximation
        String db = UpstreamLane.freshDatabaseName("history_back");
        List<HistoryEntry> recorded;
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()));
             MongoClient client = CountersMatchDriverTest.client(proxy, "bp-history-back", new DriverEvents(), "retryWrites=true")) {
            CountersMatchDriverTest.rule(proxy, "{configureFailPoint: 'failCommand', mode: {times: 1}, "
                    + "data: {failCommands: ['insert'], error: 'NotWritablePrimary'}}");
            client.getDatabase(db).getCollection("c.with.dots").insertOne(new Document("_id", 1)); // faulted, retried
            client.getDatabase(db).runCommand(new Document("ping", 1)); // no collection
            recorded = proxy.history().recent();
        }
        assertTrue(recorded.stream().anyMatch(e -> e.fault() != null && e.errorCode() == 10107 && e.txnNumber() >= 0),
                "an entry with a fault, a code and a txnNumber: " + recorded);
        assertTrue(recorded.stream().anyMatch(e -> e.command().equals("ping") && e.collection().isEmpty()), recorded.toString());
        List<HistoryEntry> all = new ArrayList<>(recorded);
        all.add(new HistoryEntry(1_700_000_000_123_456L, 1_700_000_000_223_457L, "db:27017", "", 7, "find", "shop", "orders",
                null, -1, 1, null, "no_reply", "info", 0)); // no session, no transaction, no fault
        for (HistoryEntry entry : all) {
            assertEquals(entry, HistoryEntry.fromJson(entry.toJson()));
        }
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, () -> HistoryEntry.fromJson("{\"type\": \"ok\"}"));
        assertTrue(bad.getMessage().startsWith("not a history line ("), bad.getMessage());
    }

    private static List<String> read(Path file) {
        try {
            return Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static void assertLine(Document line, String command, String ns, int attempt, String fault, String outcome, String type) {
        String context = line.toJson();
        assertEquals(command, line.getString("command"), context);
        assertEquals(ns, line.getString("ns"), context);
        assertEquals(attempt, line.getInteger("attempt"), context);
        assertEquals(fault, line.get("fault"), context);
        assertEquals(outcome, line.getString("outcome"), context);
        assertEquals(type, line.getString("type"), context);
        assertTrue(line.containsKey("lsid") && line.containsKey("txnNumber") && line.containsKey("connection"), context);
    }

    private static List<String> names(List<DriverEvents.Started> events) {
        return events.stream().map(DriverEvents.Started::name).toList();
    }
}
