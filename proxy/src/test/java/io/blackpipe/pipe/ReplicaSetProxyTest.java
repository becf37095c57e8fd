package io.blackpipe.pipe;

import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.gte;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCommandException;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Accumulators;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.Updates;
import com.mongodb.connection.ClusterDescription;
import com.mongodb.connection.ServerDescription;
import com.mongodb.event.ServerHeartbeatSucceededEvent;
import com.mongodb.event.ServerMonitorListener;
import io.blackpipe.testing.CommandLog;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.topology.Member;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The real Java driver, configured with replicaSet=, talks through the proxy to the lane's real
 * upstream: discovery must see only the proxy, and every kind of traffic must work unchanged.
 */
class ReplicaSetProxyTest {
    private static ProxyServer proxy;
    private static MongoClient direct;

    @BeforeAll
    static void startProxy() {
        proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()));
        direct = UpstreamLane.directClient();
    }

    @AfterAll
    static void stopProxy() {
        if (direct != null) {
            direct.close();
        }
        if (proxy != null) {
            proxy.close();
        }
    }

    private static MongoClient client(String options, CommandLog log, ServerMonitorListener monitor) {
        String uri = proxy.connectionString() + (options.isEmpty() ? "" : "&" + options);
        MongoClientSettings.Builder settings = MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(uri))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(15, TimeUnit.SECONDS));
        if (log != null) {
            settings.addCommandListener(log);
        }
        if (monitor != null) {
            settings.applyToServerSettings(b -> b.addServerMonitorListener(monitor));
        }
        return MongoClients.create(settings.build());
    }

    private static Set<String> proxyAddresses() {
        return proxy.members().stream().map(m -> m.advertised().toString()).collect(Collectors.toSet());
    }

    @Test
    void clusterDescriptionHoldsOnlyProxyAddresses() {
        try (MongoClient client = client("", null, null)) {
            client.getDatabase("admin").runCommand(new Document("ping", 1));
            ClusterDescription cluster = client.getClusterDescription();
            Set<String> seen = cluster.getServerDescriptions().stream()
                    .map(d -> d.getAddress().toString()).collect(Collectors.toSet());
            assertEquals(proxyAddresses(), seen, "the driver must know the members only by their proxy addresses");
            ServerDescription primary = cluster.getServerDescriptions().stream()
                    .filter(ServerDescription::isPrimary).findFirst().orElseThrow();
            assertTrue(proxyAddresses().contains(primary.getAddress().toString()));
            for (ServerDescription server : cluster.getServerDescriptions()) {
                for (String host : server.getHosts()) {
                    assertTrue(proxyAddresses().contains(host), "hello listed " + host + ", not a proxy address");
                }
            }
        }
    }

    @Test
    void insertManyOfTenThousandDocumentsGoesInSeveralBatchesAndReadsBackThroughGetMores() {
        String database = UpstreamLane.freshDatabaseName("insertMany");
        CommandLog log = new CommandLog();
        List<Document> documents = new ArrayList<>();
        String padding = "x".repeat(6_000); // 10,000 x 6 KB exceeds one 48 MB message: the driver must split
        for (int i = 0; i < 10_000; i++) {
            documents.add(new Document("_id", i).append("padding", padding));
        }
        try (MongoClient client = client("", log, null)) {
            MongoCollection<Document> collection = client.getDatabase(database).getCollection("docs");
            collection.insertMany(documents);
            assertTrue(log.startedCount("insert") >= 2, "expected several insert batches, saw " + log.startedCount("insert"));

            long read = 0;
            long sum = 0;
            for (Document document : collection.find().batchSize(700)) {
                read++;
                sum += document.getInteger("_id");
            }
            assertEquals(10_000, read);
            assertEquals(10_000L * 9_999 / 2, sum);
            assertTrue(log.startedCount("getMore") >= 10, "expected the cursor to need getMores, saw " + log.startedCount("getMore"));
        }
        assertEquals(10_000, direct.getDatabase(database).getCollection("docs").countDocuments());
    }

    @Test
    void updatesDeletesFindAndModifyAndAggregateReachTheServer() {
        String database = UpstreamLane.freshDatabaseName("crud");
        try (MongoClient client = client("", null, null)) {
            MongoCollection<Document> collection = client.getDatabase(database).getCollection("items");
            for (int i = 0; i < 10; i++) {
                collection.insertOne(new Document("_id", i).append("group", i % 2).append("qty", i));
            }
            assertEquals(1, collection.updateOne(eq("_id", 1), Updates.set("qty", 100)).getModifiedCount());
            assertEquals(5, collection.updateMany(eq("group", 0), Updates.inc("qty", 1)).getModifiedCount());
            assertEquals(1, collection.deleteOne(eq("_id", 9)).getDeletedCount());
            assertEquals(2, collection.deleteMany(gte("_id", 7)).getDeletedCount());
            Document modified = collection.findOneAndUpdate(eq("_id", 2), Updates.set("tag", "fm"),
                    new FindOneAndUpdateOptions().returnDocument(ReturnDocument.AFTER));
            assertNotNull(modified);
            assertEquals("fm", modified.getString("tag"));
            List<Document> groups = collection.aggregate(List.of(
                    Aggregates.group("$group", Accumulators.sum("total", "$qty")),
                    Aggregates.sort(new Document("_id", 1)))).into(new ArrayList<>());
            assertEquals(2, groups.size());
        }
        MongoCollection<Document> onServer = direct.getDatabase(database).getCollection("items");
        assertEquals(7, onServer.countDocuments());
        assertEquals(100, onServer.find(eq("_id", 1)).first().getInteger("qty"));
        assertEquals(5, onServer.find(eq("_id", 4)).first().getInteger("qty"));
        assertEquals("fm", onServer.find(eq("_id", 2)).first().getString("tag"));
        // group 0 = ids 0,2,4,6 (8 deleted) after +1 each: 1+3+5+7; group 1 = ids 1,3,5: 100+3+5
        List<Document> totals = onServer.aggregate(List.of(Aggregates.group("$group", Accumulators.sum("total", "$qty")),
                Aggregates.sort(new Document("_id", 1)))).into(new ArrayList<>());
        assertEquals(16, totals.get(0).get("total", Number.class).intValue());
        assertEquals(108, totals.get(1).get("total", Number.class).intValue());
    }

    @Test
    void aTransactionCommitsThroughTheProxy() {
        String database = UpstreamLane.freshDatabaseName("txn");
        direct.getDatabase(database).getCollection("accounts").insertOne(new Document("_id", "a").append("balance", 10));
        direct.getDatabase(database).getCollection("accounts").insertOne(new Document("_id", "b").append("balance", 0));
        CommandLog log = new CommandLog();
        try (MongoClient client = client("", log, null); ClientSession session = client.startSession()) {
            MongoCollection<Document> accounts = client.getDatabase(database).getCollection("accounts");
            session.withTransaction(() -> {
                accounts.updateOne(session, eq("_id", "a"), Updates.inc("balance", -4));
                accounts.updateOne(session, eq("_id", "b"), Updates.inc("balance", 4));
                return null;
            });
            assertEquals(1, log.startedCount("commitTransaction"));
        }
        MongoCollection<Document> onServer = direct.getDatabase(database).getCollection("accounts");
        assertEquals(6, onServer.find(eq("_id", "a")).first().getInteger("balance"));
        assertEquals(4, onServer.find(eq("_id", "b")).first().getInteger("balance"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"serverMonitoringMode=stream", "serverMonitoringMode=poll"})
    void monitoringKeepsSeeingTheProxyAddresses(String mode) throws InterruptedException {
        List<ServerHeartbeatSucceededEvent> heartbeats = new CopyOnWriteArrayList<>();
        ServerMonitorListener monitor = new ServerMonitorListener() {
            @Override
            public void serverHeartbeatSucceeded(ServerHeartbeatSucceededEvent event) {
                heartbeats.add(event);
            }
        };
        try (MongoClient client = client(mode + "&heartbeatFrequencyMS=500", null, monitor)) {
            client.getDatabase("admin").runCommand(new Document("ping", 1));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (heartbeats.size() < 4 && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            assertTrue(heartbeats.size() >= 4, "expected repeated heartbeats through the proxy, saw " + heartbeats.size());
            for (ServerHeartbeatSucceededEvent event : heartbeats) {
                org.bson.BsonDocument reply = event.getReply();
                String me = reply.getString("me").getValue();
                assertTrue(proxyAddresses().contains(me), "heartbeat named " + me);
                assertFalse(reply.containsKey("compression"));
            }
            Set<String> seen = client.getClusterDescription().getServerDescriptions().stream()
                    .map(d -> d.getAddress().toString()).collect(Collectors.toSet());
            assertEquals(proxyAddresses(), seen);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"snappy", "zlib", "zstd"})
    void aDriverAskingForCompressionKeepsWorking(String compressor) {
        String database = UpstreamLane.freshDatabaseName("compress_" + compressor);
        try (MongoClient client = client("compressors=" + compressor + "&appName=compress-" + compressor, null, null)) {
            MongoCollection<Document> collection = client.getDatabase(database).getCollection("c");
            collection.insertOne(new Document("_id", 1).append("text", "y".repeat(10_000)));
            assertEquals(10_000, collection.find(eq("_id", 1)).first().getString("text").length());
        }
        assertEquals(1, direct.getDatabase(database).getCollection("c").countDocuments());
    }

    @Test
    void everyMemberHasItsOwnListenerAndConnectionsAreCounted() throws InterruptedException {
        List<Member> members = proxy.members();
        assertEquals(members.size(), members.stream().map(m -> m.advertised().port()).distinct().count());
        Member first = members.get(0);
        try (MongoClient client = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString("mongodb://" + first.advertised() + "/?replicaSet=" + proxy.deployment().setName()))
                .build())) {
            client.getDatabase("admin").runCommand(new Document("ping", 1));
            assertTrue(proxy.openConnections(first.upstream()) >= 1);
            Set<String> seen = client.getClusterDescription().getServerDescriptions().stream()
                    .map(d -> d.getAddress().toString()).collect(Collectors.toSet());
            assertEquals(proxyAddresses(), seen, "discovery from one proxied seed finds the other proxied members");
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (proxy.openConnections(first.upstream()) > 0 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertEquals(0, proxy.openConnections(first.upstream()), "closing the client must close its proxied connections");
    }

    /**
     * rs.status(), rs.conf(), serverStatus's repl section and the stored configuration read through
     * the proxy name every member by the proxy's address, as hello does. The jongodb lane answers
     * none of the three commands (CommandNotFound: skipped, saying so) and holds no stored
     * configuration, so there the test stores one naming the lane's real member first.
     */
    @ParameterizedTest
    @ValueSource(strings = {"replSetGetStatus", "replSetGetConfig", "serverStatus", "local.system.replset"})
    void everyReplyThatDescribesTheSetNamesTheProxyAsHelloDoes(String reply) {
        List<String> real = UpstreamLane.directHello().getArray("hosts").stream().map(h -> h.asString().getValue()).toList();
        if (reply.equals("local.system.replset") && UpstreamLane.isJongodb()) {
            MongoCollection<BsonDocument> stored = direct.getDatabase("local").getCollection("system.replset", BsonDocument.class);
            if (stored.countDocuments() == 0) {
                BsonArray members = new BsonArray();
                for (int i = 0; i < real.size(); i++) {
                    members.add(new BsonDocument("_id", new BsonInt32(i)).append("host", new BsonString(real.get(i))));
                }
                stored.insertOne(new BsonDocument("_id", new BsonString(proxy.deployment().setName())).append("version", new BsonInt32(1))
                        .append("members", members));
            }
        }
        try (MongoClient client = client("", null, null)) {
            MongoDatabase admin = client.getDatabase("admin");
            BsonDocument hello = admin.runCommand(new BsonDocument("hello", new BsonInt32(1)), BsonDocument.class);
            Set<String> helloHosts = hello.getArray("hosts").stream().map(h -> h.asString().getValue()).collect(Collectors.toSet());
            List<String> named = new ArrayList<>();
            switch (reply) {
                case "local.system.replset" -> {
                    BsonDocument config = client.getDatabase("local").getCollection("system.replset", BsonDocument.class).find().first();
                    assertNotNull(config, "the lane holds its set's configuration");
                    config.getArray("members").forEach(m -> named.add(m.asDocument().getString("host").getValue()));
                }
                case "serverStatus" -> {
                    BsonDocument repl = runOrSkip(admin, reply).getDocument("repl");
                    for (String field : List.of("hosts", "primary", "me")) {
                        assertEquals(hello.get(field), repl.get(field), "serverStatus.repl's " + field + " is hello's");
                    }
                    repl.getArray("hosts").forEach(h -> named.add(h.asString().getValue()));
                    named.add(repl.getString("me").getValue());
                }
                case "replSetGetConfig" -> runOrSkip(admin, reply).getDocument("config").getArray("members")
                        .forEach(m -> named.add(m.asDocument().getString("host").getValue()));
                default -> {
                    BsonDocument status = runOrSkip(admin, reply);
                    for (BsonValue member : status.getArray("members")) {
                        named.add(member.asDocument().getString("name").getValue());
                        String syncSource = member.asDocument().getString("syncSourceHost", new BsonString("")).getValue();
                        if (!syncSource.isEmpty()) {
                            named.add(syncSource);
                        }
                        if (member.asDocument().getBoolean("self", BsonBoolean.FALSE).getValue()) {
                            assertEquals(hello.getString("me").getValue(), member.asDocument().getString("name").getValue(),
                                    "the member marked self is hello's me");
                        }
                    }
                }
            }
            assertFalse(named.isEmpty(), reply + " names no member");
            for (String address : named) {
                assertTrue(proxyAddresses().contains(address), reply + " names " + address + ", not a proxy address " + proxyAddresses());
            }
            assertTrue(named.containsAll(helloHosts), reply + " names " + named + ", not every host hello names: " + helloHosts);
        }
    }

    /** The command's reply; the test is skipped, saying why, on a lane whose server does not have the command. */
    private static BsonDocument runOrSkip(MongoDatabase admin, String command) {
        try {
            return admin.runCommand(new BsonDocument(command, new BsonInt32(1)), BsonDocument.class);
        } catch (MongoCommandException e) {
            Assumptions.assumeFalse(e.getErrorCode() == 59, () -> "the " + UpstreamLane.name() + " lane (" + UpstreamLane.description()
                    + ") has no " + command + " command");
            throw e;
        }
    }
}
