package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.CommandLog;
import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.ScriptedMongodFrame;
import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.testing.WireSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * jongodb refuses a command with any read preference but primary, hellos included, where a mongod
 * takes it: through it the Go driver's heartbeats (primaryPreferred) failed, the Node.js driver's
 * handshakes under a URI's readPreference failed, and so did every secondaryPreferred read. blackpipe
 * asks each member at start, and drops the read preference on its way to one that refuses it; a
 * member that takes it gets it as sent.
 */
class ReadPreferenceDropTest {
    private static final String SAID = "refuses a read preference other than primary";

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
            List<ScriptedMongodFrame> finds = member.commandsReceived("find");
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
            boolean said = log.messages().stream().anyMatch(m -> m.contains(SAID));
            assertEquals(UpstreamLane.isJongodb(), said, () -> UpstreamLane.name() + ": " + String.join("\n", log.messages()));
        }
    }
}
