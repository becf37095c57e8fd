package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoWriteException;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.UpdateOptions;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.CommandLog;
import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.ScriptedMongodFrame;
import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.testing.WireSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * jongodb refuses what every mongod takes: a command with any read preference but primary, hellos
 * included (through it the Go driver's heartbeats, primaryPreferred, failed, the Node.js driver's
 * handshakes under a URI's readPreference failed, and so did every secondaryPreferred read), and a
 * w:0 write (a fire-and-forget write never landed); and it has no endSessions (every client's close
 * was an error in the counts). blackpipe asks each member at start and sends a member that refuses
 * them what it takes: no read preference, w:1 for w:0 (its reply, which no client asked for,
 * dropped); it answers endSessions itself as mongod does. A member that takes them gets them as sent.
 */
class MemberQuirksTest {
    private static final String SAID = "refuses a read preference other than primary";
    private static final String SAID_W0 = "refuses w:0 writes";
    private static final String SAID_RETRIES = "runs a retried write again";
    private static final String SAID_DUPLICATES = "answers a write's duplicate key as the command's error";
    private static final String SAID_TRANSACTION_ENDS = "refuses a commitTransaction or abortTransaction that carries a read preference";
    private static final String SAID_LEGACY = "answers a legacy OP_QUERY find or OP_GET_MORE as an unknown command";
    private static final String SAID_SUPERSEDED = "keeps a session's transaction open when the session starts a newer one";
    private static final int MORE_TO_COME = 1 << 1;

    private static BsonDocument readPreference(String mode) {
        return new BsonDocument("mode", new BsonString(mode));
    }

    @Test
    void aMemberThatRefusesReadPreferencesGetsCommandsWithoutThem() throws Exception {
        try (ScriptedMongod member = ScriptedMongod.builder().primaryReadsOnly().start();
             LogCapture log = LogCapture.start();
             ProxyServer proxy = ScriptedProxy.start(member)) {
            log.await(m -> m.startsWith("member " + member.address() + " " + SAID), Duration.ofSeconds(5), "noting the member");
            try (MongoClient client = MongoClients.create(CommandLog.withOptions(proxy.connectionString(),
                    "readPreference=secondaryPreferred"))) {
                MongoCollection<Document> orders = client.getDatabase("shop").getCollection("orders");
                orders.insertOne(new Document("_id", 1));
                assertEquals(List.of(new Document("_id", 1)), orders.find().into(new ArrayList<>()), "a secondaryPreferred read");
                assertEquals(List.of(new Document("_id", 1)), orders.withReadPreference(com.mongodb.ReadPreference.nearest())
                        .find().into(new ArrayList<>()), "a nearest read");
            }
            List<ScriptedMongodFrame> finds = member.commandsReceived("find").stream()
                    .filter(f -> f.document().getString("$db").getValue().equals("shop")).toList();
            assertEquals(2, finds.size());
            finds.forEach(find -> assertFalse(find.document().containsKey("$readPreference"), find.document()::toJson));

            // a heartbeat as the Go driver sends it, and a handshake as the Node.js driver's under readPreference=...
            try (WireSocket wire = ScriptedProxy.wire(proxy)) {
                int hello = wire.sendMsg(0, new BsonDocument("hello", new BsonInt32(1)).append("$db", new BsonString("admin"))
                        .append("$readPreference", readPreference("primaryPreferred")));
                assertTrue(wire.readOk(hello).getBoolean("isWritablePrimary").getValue());
                wire.sendRaw(ScriptedMongodWire.buildOpQuery(200, 0, "admin.$cmd", 0, -1,
                        new BsonDocument("isMaster", new BsonInt32(1)).append("$readPreference", readPreference("secondary"))));
                BsonDocument legacy = ScriptedMongodWire.parseOpReply(wire.read()).documents().get(0);
                assertEquals(1.0, legacy.getNumber("ok").doubleValue(), legacy::toJson);
            }
            assertEquals(1, log.messages().stream().filter(m -> m.contains(SAID)).count(), "said once");
        }
    }

    @Test
    void aMemberThatTakesReadPreferencesGetsThemAsSent() throws Exception {
        try (ScriptedMongod member = ScriptedMongod.start();
             LogCapture log = LogCapture.start();
             ProxyServer proxy = ScriptedProxy.start(member);
             MongoClient client = MongoClients.create(CommandLog.withOptions(proxy.connectionString(),
                     "readPreference=secondaryPreferred"))) {
            MongoCollection<Document> orders = client.getDatabase("shop").getCollection("orders");
            orders.insertOne(new Document("_id", 1));
            assertEquals(1, orders.find().into(new ArrayList<>()).size());
            BsonDocument find = member.commandsReceived("find").get(0).document();
            assertEquals(readPreference("secondaryPreferred"), find.getDocument("$readPreference"), find::toJson);
            assertTrue(log.messages().stream().noneMatch(m -> m.contains(SAID)), () -> String.join("\n", log.messages()));
        }
    }

    @Test
    void aMemberThatRefusesW0GetsW1AndTheDriverNeitherWaitsNorReadsTheReply() throws Exception {
        try (ScriptedMongod member = ScriptedMongod.builder().refusesUnacknowledged().start();
             LogCapture log = LogCapture.start();
             ProxyServer proxy = ScriptedProxy.start(member)) {
            log.await(m -> m.startsWith("member " + member.address() + " " + SAID_W0), Duration.ofSeconds(5), "noting the member");
            try (MongoClient client = MongoClients.create(CommandLog.withOptions(proxy.connectionString(), "maxPoolSize=1"))) {
                MongoCollection<Document> events = client.getDatabase("app").getCollection("events");
                for (int id = 1; id <= 3; id++) {
                    events.withWriteConcern(WriteConcern.UNACKNOWLEDGED).insertOne(new Document("_id", id));
                    // the one pooled connection: the member's reply to the w:0 insert must not answer this find
                    assertEquals(1, events.countDocuments(new Document("_id", id)));
                }
            }
            assertEquals(3, member.documents("app", "events").size(), "every fire-and-forget write landed");
            List<ScriptedMongodFrame> inserts = member.commandsReceived("insert").stream()
                    .filter(f -> f.document().getString("$db").getValue().equals("app")).toList();
            assertEquals(3, inserts.size());
            for (ScriptedMongodFrame insert : inserts) {
                assertEquals(1, insert.document().getDocument("writeConcern").getNumber("w").intValue(), insert.document()::toJson);
                assertEquals(MORE_TO_COME, insert.flags() & MORE_TO_COME, "still asks for no reply");
            }
            assertTrue(log.messages().stream().noneMatch(m -> m.contains("asked for no reply")),
                    "the reply dropped was expected: " + String.join("\n", log.messages()));
        }
    }

    @Test
    void aMemberThatTakesW0GetsItAsSent() throws Exception {
        try (ScriptedMongod member = ScriptedMongod.start();
             LogCapture log = LogCapture.start();
             ProxyServer proxy = ScriptedProxy.start(member);
             MongoClient client = MongoClients.create(proxy.connectionString())) {
            MongoCollection<Document> events = client.getDatabase("app").getCollection("events");
            events.withWriteConcern(WriteConcern.UNACKNOWLEDGED).insertOne(new Document("_id", 1));
            Await.until(Duration.ofSeconds(5), "the insert to land", () -> member.documents("app", "events").size() == 1);
            BsonDocument insert = member.commandsReceived("insert").get(0).document();
            assertEquals(0, insert.getDocument("writeConcern").getNumber("w").intValue(), insert::toJson);
            assertTrue(log.messages().stream().noneMatch(m -> m.contains(SAID_W0)), () -> String.join("\n", log.messages()));
        }
    }

    /**
     * A test suite that starts a proxy per class in front of one upstream reads a member's differences in full once:
     * the next proxy's log names how many there are (a JUnit user's suite logged 247 lines for 16 classes).
     */
    @Test
    void aMembersDifferencesAreToldInFullOncePerProcess() throws Exception {
        try (ScriptedMongod member = ScriptedMongod.builder().withoutEndSessions().start()) {
            try (LogCapture first = LogCapture.start(); ProxyServer proxy = ScriptedProxy.start(member)) {
                first.await(m -> m.startsWith("member " + member.address() + " has no endSessions command"), Duration.ofSeconds(5),
                        "noting the member");
            }
            try (LogCapture again = LogCapture.start(); ProxyServer proxy = ScriptedProxy.start(member)) {
                again.await(m -> m.equals("member " + member.address() + " differs from mongod in one way told earlier in this"
                        + " process (lacksEndSessions), and blackpipe works around it alike"), Duration.ofSeconds(5), "noting the member by count");
                assertTrue(again.messages().stream().noneMatch(m -> m.contains("has no endSessions command")),
                        () -> String.join("\n", again.messages()));
                CommandLog driver = new CommandLog();
                try (MongoClient client = MongoClients.create(driver.driverOn(proxy.connectionString()).build())) {
                    client.getDatabase("app").getCollection("c").insertOne(new Document("_id", 1));
                }
                assertEquals(List.of(), driver.failed, "worked around all the same: the driver's endSessions answered");
            }
        }
    }

    @Test
    void aMemberWithoutEndSessionsHasItAnsweredAsMongodAnswersIt() throws Exception {
        try (ScriptedMongod member = ScriptedMongod.builder().withoutEndSessions().start();
             LogCapture log = LogCapture.start();
             ProxyServer proxy = ScriptedProxy.start(member)) {
            log.await(m -> m.startsWith("member " + member.address() + " has no endSessions command"), Duration.ofSeconds(5),
                    "noting the member");
            int probes = member.commandsReceived("endSessions").size(); // the start's own, which it refused
            CommandLog driver = new CommandLog();
            try (MongoClient client = MongoClients.create(driver.driverOn(proxy.connectionString()).build())) {
                client.getDatabase("app").getCollection("c").insertOne(new Document("_id", 1));
            } // the driver ends its sessions as it closes
            assertEquals(1, driver.startedCount("endSessions"));
            assertTrue(driver.failed.isEmpty(), driver.failed::toString);
            assertEquals(1, member.documents("app", "c").size());
            Await.until(Duration.ofSeconds(5), "the endSessions counted ok", () -> Meters.outcomes(proxy.registry(), "endSessions", "ok") == 1);
            assertEquals(0, Meters.outcomes(proxy.registry(), "endSessions", "error"));
            assertEquals(probes, member.commandsReceived("endSessions").size(), "the member never saw the driver's");
        }
    }

    /**
     * A member that runs a retried write again (jongodb) has the retry answered with its reply to the first run:
     * the driver's update, whose reply a rule lost, is applied once, and the retry never reaches the member.
     */
    @Test
    void aMemberThatRunsARetriedWriteAgainHasTheRetryAnsweredFromTheFirstRun() throws Exception {
        try (ScriptedMongod member = ScriptedMongod.builder().withoutEndSessions().reappliesRetriedWrites().start();
             LogCapture log = LogCapture.start();
             ProxyServer proxy = ScriptedProxy.start(member)) {
            log.await(m -> m.startsWith("member " + member.address() + " " + SAID_RETRIES), Duration.ofSeconds(5), "noting the member");
            assertEquals(List.of(), member.documents("blackpipe_probe", "writes"), "the start's question left nothing");
            proxy.rules().put(proxy.ruleParser().parse("lost", BsonDocument.parse("{configureFailPoint: 'failCommand',"
                    + " mode: {times: 1}, data: {failCommands: ['update'], dropReply: true}}")));
            int probes = member.commandsReceived("update").size();
            try (MongoClient client = MongoClients.create(CommandLog.withOptions(proxy.connectionString(), "retryWrites=true"))) {
                client.getDatabase("shop").getCollection("counters").updateOne(new Document("_id", "day"),
                        new Document("$inc", new Document("n", 1)), new UpdateOptions().upsert(true));
            }
            assertEquals(List.of(BsonDocument.parse("{_id: 'day', n: 1}")), member.documents("shop", "counters"), "applied once");
            assertEquals(probes + 1, member.commandsReceived("update").size(), "the retry was answered in the member's place");
        }
    }

    /**
     * The write ran and its reply was on its way when a blackhole began, and the client gave up on it: its retry,
     * held by the blackhole until it ends, is answered from that run, as mongod would answer it.
     */
    @Test
    void aRetryAfterAReplyHeldInABlackholeIsAnsweredFromTheRun() throws Exception {
        try (ScriptedMongod member = ScriptedMongod.builder().withoutEndSessions().reappliesRetriedWrites().start();
             LogCapture log = LogCapture.start();
             ProxyServer proxy = ScriptedProxy.start(member);
             MongoClient client = MongoClients.create(CommandLog.withOptions(proxy.connectionString(),
                     "retryWrites=true&socketTimeoutMS=1500"))) {
            log.await(m -> m.startsWith("member " + member.address() + " " + SAID_RETRIES), Duration.ofSeconds(5), "noting the member");
            MongoCollection<Document> counters = client.getDatabase("shop").getCollection("counters");
            counters.find().first(); // a pooled connection: the update reaches the member at once
            member.delayReplies("update", 800);
            CompletableFuture<Void> increment = CompletableFuture.runAsync(() -> counters.updateOne(new Document("_id", "day"),
                    new Document("$inc", new Document("n", 1)), new UpdateOptions().upsert(true)));
            Thread.sleep(300); // the update ran; its reply leaves the member at 800 ms, into the blackhole
            proxy.blackhole("primary", 2500);
            increment.get(20, TimeUnit.SECONDS); // the first attempt timed out at 1.5 s; the retry waited for the blackhole's end
            assertEquals(List.of(BsonDocument.parse("{_id: 'day', n: 1}")), member.documents("shop", "counters"), "applied once");
        }
    }

    /** A member that answers a retried write from its first run, as mongod does, gets its retries: it is asked no write at start either. */
    @Test
    void aMemberThatAnswersRetriesItselfGetsThem() throws Exception {
        try (ScriptedMongod member = ScriptedMongod.builder().withoutEndSessions().start();
             LogCapture log = LogCapture.start();
             ProxyServer proxy = ScriptedProxy.start(member)) {
            log.await(m -> m.startsWith("member " + member.address() + " has no endSessions"), Duration.ofSeconds(5), "noting the member");
            assertEquals(2, member.commandsReceived("update").size(), "asked, as a member that refused what mongod takes");
            proxy.rules().put(proxy.ruleParser().parse("lost", BsonDocument.parse("{configureFailPoint: 'failCommand',"
                    + " mode: {times: 1}, data: {failCommands: ['update'], dropReply: true}}")));
            try (MongoClient client = MongoClients.create(CommandLog.withOptions(proxy.connectionString(), "retryWrites=true"))) {
                client.getDatabase("shop").getCollection("counters").updateOne(new Document("_id", "day"),
                        new Document("$inc", new Document("n", 1)), new UpdateOptions().upsert(true));
            }
            assertEquals(List.of(BsonDocument.parse("{_id: 'day', n: 1}")), member.documents("shop", "counters"));
            assertEquals(4, member.commandsReceived("update").size(), "the first run and the retry reached the member");
            assertTrue(log.messages().stream().noneMatch(m -> m.contains(SAID_RETRIES)), () -> String.join("\n", log.messages()));
        }
        try (ScriptedMongod mongod = ScriptedMongod.start();
             ProxyServer proxy = ScriptedProxy.start(mongod)) {
            assertEquals(List.of(), mongod.commandsReceived("update"), "a member that refused nothing is asked no write");
        }
    }

    /**
     * A member that answers a one-document insert's duplicate key as the command's error (jongodb) has it answered as
     * mongod answers it: the driver raises the write error an idempotent insert catches; a batch, as mongod applies it.
     */
    @Test
    void aMemberThatAnswersADuplicateKeyAsACommandErrorHasItAnsweredAsMongodDoes() throws Exception {
        try (ScriptedMongod member = ScriptedMongod.builder().withoutEndSessions().duplicateKeyAsCommandError().start();
             LogCapture log = LogCapture.start();
             ProxyServer proxy = ScriptedProxy.start(member);
             MongoClient client = MongoClients.create(CommandLog.withOptions(proxy.connectionString(), "retryWrites=true"))) {
            log.await(m -> m.startsWith("member " + member.address() + " " + SAID_DUPLICATES), Duration.ofSeconds(5), "noting the member");
            MongoCollection<Document> orders = client.getDatabase("shop").getCollection("orders");
            orders.insertOne(new Document("_id", 1));
            MongoWriteException duplicate = assertThrows(MongoWriteException.class, () -> orders.insertOne(new Document("_id", 1)));
            assertEquals(ErrorCategory.DUPLICATE_KEY, duplicate.getError().getCategory());
            assertEquals(11000, duplicate.getError().getCode());
            assertTrue(duplicate.getError().getMessage().startsWith("E11000 duplicate key error"), duplicate.getError().getMessage());
            assertEquals(2, Meters.outcomes(proxy.registry(), "insert", "ok"), "counted as mongod's is: ok, with a write error");
            // the member applies none of a batch that meets one: it is inserted again, in parts, as mongod would have
            int insertsBefore = member.commandsReceived("insert").size();
            MongoBulkWriteException batch = assertThrows(MongoBulkWriteException.class,
                    () -> orders.insertMany(List.of(new Document("_id", 2), new Document("_id", 1), new Document("_id", 3))));
            assertEquals(1, batch.getWriteResult().getInsertedCount(), batch::getMessage);
            assertEquals(1, batch.getWriteErrors().get(0).getIndex(), batch::getMessage);
            assertEquals(List.of(BsonDocument.parse("{_id: 1}"), BsonDocument.parse("{_id: 2}")), member.documents("shop", "orders"),
                    "the one before the duplicate, and not the one after it (ordered)");
            assertEquals(insertsBefore + 4, member.commandsReceived("insert").size(), () -> "the batch, then its parts [2], [1, 3] and [1]: " + member.commandsReceived("insert"));
            assertTrue(log.messages().stream().noneMatch(m -> m.contains(SAID_LEGACY)),
                    "it refuses a legacy find as mongod 5.1+ does (QueryFailure), so that is left to it: " + log.messages());
        }
    }

    @Test
    void aMemberThatAnswersDuplicateKeysAsMongodGetsNoWord() throws Exception {
        try (ScriptedMongod member = ScriptedMongod.builder().withoutEndSessions().start();
             LogCapture log = LogCapture.start();
             ProxyServer proxy = ScriptedProxy.start(member);
             MongoClient client = MongoClients.create(proxy.connectionString())) {
            log.await(m -> m.startsWith("member " + member.address() + " has no endSessions"), Duration.ofSeconds(5), "noting the member");
            MongoCollection<Document> orders = client.getDatabase("shop").getCollection("orders");
            orders.insertOne(new Document("_id", 1));
            MongoWriteException duplicate = assertThrows(MongoWriteException.class, () -> orders.insertOne(new Document("_id", 1)));
            assertTrue(duplicate.getError().getMessage().contains("collection: shop.orders index: _id_"),
                    "the member's own write error, as it came: " + duplicate.getError().getMessage());
            assertTrue(log.messages().stream().noneMatch(m -> m.contains(SAID_DUPLICATES)), () -> String.join("\n", log.messages()));
        }
    }

    /** On every lane a client's close ends its sessions without an error: jongodb's lack of endSessions is made up for. */
    @Test
    void aClientsCloseIsNoErrorThroughTheProxyOnTheLane() throws Exception {
        String db = UpstreamLane.freshDatabaseName("endsessions");
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            CommandLog driver = new CommandLog();
            try (MongoClient client = MongoClients.create(driver.driverOn(proxy.connectionString()).build())) {
                client.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1));
            }
            assertEquals(1, driver.startedCount("endSessions"));
            assertTrue(driver.failed.isEmpty(), driver.failed::toString);
            Await.until(Duration.ofSeconds(5), "the endSessions counted ok", () -> Meters.outcomes(proxy.registry(), "endSessions", "ok") == 1);
            assertEquals(0, Meters.outcomes(proxy.registry(), "endSessions", "error"), UpstreamLane.name());
        }
    }

    /** On every lane a fire-and-forget write through the proxy lands, as on mongod: jongodb gets it as w:1. */
    @Test
    void aW0WriteLandsThroughTheProxyOnTheLane() throws Exception {
        String db = UpstreamLane.freshDatabaseName("w0");
        try (LogCapture log = LogCapture.start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()));
             MongoClient client = MongoClients.create(proxy.connectionString());
             MongoClient direct = UpstreamLane.directClient()) {
            client.getDatabase(db).getCollection("c").withWriteConcern(WriteConcern.UNACKNOWLEDGED).insertOne(new Document("_id", 1));
            Await.until(Duration.ofSeconds(10), "the server to hold the w:0 insert",
                    () -> direct.getDatabase(db).getCollection("c").countDocuments() == 1);
            boolean said = log.toldOfAMember(SAID_W0, "refusesUnacknowledged");
            assertEquals(UpstreamLane.isJongodb(), said, () -> UpstreamLane.name() + ": " + String.join("\n", log.messages()));
        }
    }

    /** On jongodb (here) the proxy drops them; on mongod it passes them on, and the reads run either way. */
    @Test
    void secondaryPreferredReadsRunThroughTheProxyOnTheLane() throws Exception {
        String db = UpstreamLane.freshDatabaseName("readpref");
        try (LogCapture log = LogCapture.start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()));
             MongoClient client = MongoClients.create(CommandLog.withOptions(proxy.connectionString(),
                     "readPreference=secondaryPreferred"));
             MongoClient direct = UpstreamLane.directClient()) {
            direct.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1).append("sku", "B2"));
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            // a secondary of a real set may not have it yet
            Await.until(Duration.ofSeconds(10), "the read to find the document",
                    () -> c.find(new Document("sku", "B2")).into(new ArrayList<>()).size() == 1);
            assertEquals(1, c.countDocuments(), "an aggregate, secondaryPreferred too");
            boolean said = log.toldOfAMember(SAID, "primaryReadsOnly");
            assertEquals(UpstreamLane.isJongodb(), said, () -> UpstreamLane.name() + ": " + String.join("\n", log.messages()));
        }
    }

    /**
     * A member that refused a read preference is asked whether it also refuses one of primary on a transaction's end
     * (jongodb does): this one answers both of the start's abortTransactions alike, so a commit keeps it.
     */
    @Test
    void aMemberThatEndsTransactionsWithAReadPreferenceGetsItAsSent() throws Exception {
        try (ScriptedMongod member = ScriptedMongod.builder().primaryReadsOnly().start();
             LogCapture log = LogCapture.start();
             ProxyServer proxy = ScriptedProxy.start(member)) {
            log.await(m -> m.startsWith("member " + member.address() + " " + SAID), Duration.ofSeconds(5), "noting the member");
            List<ScriptedMongodFrame> asked = member.commandsReceived("abortTransaction");
            assertEquals(2, asked.size(), "the start asked it twice");
            assertEquals(readPreference("primary"), asked.get(1).document().getDocument("$readPreference"), asked.get(1).document()::toJson);
            try (WireSocket wire = ScriptedProxy.wire(proxy)) {
                wire.sendMsg(0, BsonDocument.parse("{commitTransaction: 1, txnNumber: {$numberLong: '1'}, autocommit: false,"
                        + " $db: 'admin', $readPreference: {mode: 'primary'}}"));
                wire.read();
            }
            BsonDocument commit = member.commandsReceived("commitTransaction").get(0).document();
            assertEquals(readPreference("primary"), commit.getDocument("$readPreference"), commit::toJson);
            assertTrue(log.messages().stream().noneMatch(m -> m.contains(SAID_TRANSACTION_ENDS)), () -> String.join("\n", log.messages()));
        }
    }

    /**
     * On jongodb (here) the proxy says it drops a transaction's end's read preference, and that it aborts a session's open
     * transaction before its newer one; on mongod it says neither.
     */
    @ParameterizedTest
    @ValueSource(strings = {SAID_TRANSACTION_ENDS, SAID_SUPERSEDED})
    void aTransactionQuirkIsSaidOnlyOnJongodb(String said) throws Exception {
        try (LogCapture log = LogCapture.start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            boolean saidIt = log.toldOfAMember(said, Map.of(SAID_TRANSACTION_ENDS, "transactionEndsRefuseReadPreference",
                    SAID_SUPERSEDED, "keepsSupersededTransactions").get(said));
            assertEquals(UpstreamLane.isJongodb(), saidIt, () -> UpstreamLane.name() + ": " + String.join("\n", log.messages()));
        }
    }

    /**
     * A member asked at start whether a session's newer transaction ends the open one: this one has no transactions
     * (it refuses the find that starts the first, so the second is not asked), so the session's newer transaction goes
     * to it as sent, with no abort before it.
     */
    @Test
    void aMemberThatKeepsNoTransactionOpenGetsNoAbortBeforeTheNewerOne() throws Exception {
        try (ScriptedMongod member = ScriptedMongod.builder().primaryReadsOnly().start();
             LogCapture log = LogCapture.start();
             ProxyServer proxy = ScriptedProxy.start(member)) {
            log.await(m -> m.startsWith("member " + member.address() + " " + SAID), Duration.ofSeconds(5), "noting the member");
            List<BsonDocument> started = member.commandsReceived("find").stream().map(ScriptedMongodFrame::document)
                    .filter(find -> find.containsKey("startTransaction")).toList();
            assertEquals(1, started.size(), "the start asked a transaction of the member: " + started);
            int abortsAtStart = member.commandsReceived("abortTransaction").size();
            try (WireSocket wire = ScriptedProxy.wire(proxy)) {
                for (int txnNumber = 1; txnNumber <= 2; txnNumber++) {
                    wire.sendMsg(0, BsonDocument.parse("{insert: 'c', documents: [{_id: " + txnNumber + "}], lsid: {id: {$binary: {base64:"
                            + " 'AAAAAAAAQACAAAAAAAAAAA==', subType: '04'}}}, txnNumber: {$numberLong: '" + txnNumber + "'},"
                            + " startTransaction: true, autocommit: false, $db: 'shop'}"));
                    wire.read();
                }
            }
            assertEquals(abortsAtStart, member.commandsReceived("abortTransaction").size(), "no abort before the newer transaction");
            assertTrue(log.messages().stream().noneMatch(m -> m.contains(SAID_SUPERSEDED)), () -> String.join("\n", log.messages()));
        }
    }
}
