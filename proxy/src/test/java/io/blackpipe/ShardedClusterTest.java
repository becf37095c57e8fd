package io.blackpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.ServerAddress;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.connection.ClusterType;
import com.mongodb.event.CommandFailedEvent;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandSucceededEvent;
import io.blackpipe.observe.HistoryEntry;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.HeldPort;
import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.testing.ShardedLane;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.testing.WireSocket;
import io.blackpipe.topology.Member;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A sharded cluster's URI lists several mongos: each is proxied on a listener of its own, so the
 * driver spreads operations over them as it would without the proxy, retries a write on another
 * mongos, and an outage of one leaves the others. Which router served an attempt is read from the
 * proxy's history; what the cluster holds, without the proxy ({@link ShardedLane}).
 */
class ShardedClusterTest {
    private static ShardedLane lane;

    @BeforeAll
    static void startRouters() throws IOException {
        lane = ShardedLane.start();
    }

    @AfterAll
    static void stopRouters() {
        lane.close();
    }

    private static MongoClient driver(String connectionString, CommandListener listener) {
        return MongoClients.create(MongoClientSettings.builder().applyConnectionString(new ConnectionString(connectionString))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(10, TimeUnit.SECONDS).localThreshold(1, TimeUnit.SECONDS))
                .addCommandListener(listener).build());
    }

    /** The upstream router of each insert attempt the proxy saw, in order. */
    private static List<String> insertsByRouter(BlackPipe proxy) {
        return proxy.history().stream().filter(e -> e.command().equals("insert")).map(HistoryEntry::member).toList();
    }

    @Test
    void everyMongosOfTheUriGetsAListenerAndTheDriverSeesAShardedClusterOfThem() throws Exception {
        String a = lane.routers().get(0);
        String b = lane.routers().get(1);
        String db = UpstreamLane.freshDatabaseName("sharded");
        HeldPort refusing = HeldPort.any(); // bound, not listening: refused, and given to no process that would answer
        String silent = "127.0.0.1:" + refusing.port();
        try (refusing; ScriptedMongod standalone = ScriptedMongod.builder().standalone().start();
             LogCapture log = LogCapture.start();
             BlackPipe proxy = BlackPipe.start("mongodb://" + a + "," + standalone.address() + "," + silent + "," + b + "/");
             MongoClient client = driver(proxy.connectionString(), new CommandListener() { })) {
            assertEquals(List.of(a, b), proxy.server().members().stream().map(m -> m.upstream().toString()).toList());
            assertFalse(proxy.connectionString().contains("replicaSet"), proxy.connectionString());
            assertEquals(2, new ConnectionString(proxy.connectionString()).getHosts().size(), proxy.connectionString());
            log.await(m -> m.startsWith("upstream seed " + standalone.address() + " passed over: it is a standalone, not a mongos as "
                    + a + " is"), Duration.ZERO, "saying the standalone was passed over");
            log.await(m -> m.startsWith("upstream seed " + silent + " passed over: no answer to hello"), Duration.ZERO,
                    "saying the silent seed was passed over");

            // both routers known and in the latency window before the inserts: a loaded machine's first round trips can
            // differ by more than the default 15 ms, or the second router be found only after the first inserts
            Await.until(Duration.ofSeconds(20), () -> "the driver to find both routers: " + client.getClusterDescription(), () ->
                    client.getClusterDescription().getServerDescriptions().stream().filter(d -> d.isOk()).count() == 2);
            MongoCollection<Document> orders = client.getDatabase(db).getCollection("orders");
            for (int i = 0; i < 40; i++) {
                orders.insertOne(new Document("_id", i));
            }
            assertEquals(ClusterType.SHARDED, client.getClusterDescription().getType());
            assertEquals(2, client.getClusterDescription().getServerDescriptions().size());
            assertEquals(40, lane.stored(db, "orders"), "every insert landed once");
            Map<String, Long> perRouter = insertsByRouter(proxy).stream().collect(Collectors.groupingBy(m -> m, Collectors.counting()));
            assertEquals(Set.of(a, b), perRouter.keySet(), "the driver spread them over both routers: " + perRouter);
            assertEquals(0, standalone.commandsReceived("insert").size());
            assertEquals(40, proxy.attempts("insert"));
        }
    }

    @Test
    void aWriteThatMeetsANetworkErrorIsRetriedOnTheOtherMongos() throws Exception {
        List<ServerAddress> failedAt = new CopyOnWriteArrayList<>();
        List<ServerAddress> succeededAt = new CopyOnWriteArrayList<>();
        CommandListener listener = new CommandListener() {
            @Override
            public void commandFailed(CommandFailedEvent event) {
                if (event.getCommandName().equals("insert")) {
                    failedAt.add(event.getConnectionDescription().getServerAddress());
                }
            }

            @Override
            public void commandSucceeded(CommandSucceededEvent event) {
                if (event.getCommandName().equals("insert")) {
                    succeededAt.add(event.getConnectionDescription().getServerAddress());
                }
            }
        };
        String db = UpstreamLane.freshDatabaseName("shardedretry");
        try (BlackPipe proxy = BlackPipe.start(lane.uri());
             MongoClient client = driver(proxy.connectionString() + "?retryWrites=true", listener)) {
            Await.until(Duration.ofSeconds(10), "the driver's monitors reached both mongos",
                    () -> client.getClusterDescription().getServerDescriptions().stream().filter(s -> s.isOk()).count() == 2);
            proxy.fail("insert").times(1).with(Fault.CLOSE);
            client.getDatabase(db).getCollection("orders").insertOne(new Document("_id", 1));

            assertEquals(1, failedAt.size(), "the first attempt met the closed connection");
            assertEquals(1, succeededAt.size(), "and its retry succeeded");
            assertNotEquals(failedAt.get(0), succeededAt.get(0), "the retry went to the other mongos, as the retryable writes spec says");
            List<String> routers = insertsByRouter(proxy);
            assertEquals(2, routers.size(), routers::toString);
            assertNotEquals(routers.get(0), routers.get(1), "the proxy saw the two attempts on two mongos");
            assertEquals(1, lane.stored(db, "orders"), "the closed attempt reached no router; its retry landed once");
            assertEquals(2, proxy.attempts("insert"));
            assertEquals(1, proxy.retries("insert"));
        }
    }

    @Test
    void anOutageOfOneMongosLeavesTheOtherToServeEveryWrite() throws Exception {
        String a = lane.routers().get(0);
        String b = lane.routers().get(1);
        String db = UpstreamLane.freshDatabaseName("shardedoutage");
        try (BlackPipe proxy = BlackPipe.start(lane.uri());
             MongoClient client = driver(proxy.connectionString() + "?retryWrites=true&heartbeatFrequencyMS=500", new CommandListener() { })) {
            MongoCollection<Document> orders = client.getDatabase(db).getCollection("orders");
            orders.insertOne(new Document("_id", 0));
            proxy.outage(a, Duration.ZERO);
            int before = insertsByRouter(proxy).size();
            for (int i = 1; i <= 20; i++) {
                orders.insertOne(new Document("_id", i)); // a retry covers a write that picked the router just cut
            }
            List<String> after = insertsByRouter(proxy).subList(before, insertsByRouter(proxy).size());
            assertEquals(20, after.size(), "each insert reached a router once: " + after);
            assertTrue(after.stream().allMatch(b::equals), "nothing reached the mongos that is out: " + after);
            assertEquals(21, lane.stored(db, "orders"));
            proxy.restore(a);
        }
    }

    /** Every router is writable: a rule on primary meets each. */
    @Test
    void aRuleOnThePrimaryMeetsEveryRouter() throws Exception {
        try (BlackPipe proxy = BlackPipe.start(lane.uri())) {
            proxy.fail("ping").onMember("primary").errorCode(2);
            for (Member router : proxy.server().members()) {
                try (WireSocket client = new WireSocket(router.advertised().port(), 1, 5_000)) {
                    int ping = client.sendMsg(0, new BsonDocument("ping", new BsonInt32(1)).append("$db", new BsonString("admin")));
                    byte[] reply = client.read();
                    assertEquals(ping, ScriptedMongodWire.responseTo(reply));
                    assertEquals(2, ScriptedMongodWire.parseOpMsg(reply).body().getNumber("code").intValue(), router::toString);
                }
            }
        }
    }

    @Test
    void aFailoverOrASimulatedSetIsRefusedNamingTheRouters() {
        IllegalStateException simulated = assertThrows(IllegalStateException.class,
                () -> BlackPipe.builder().upstream(lane.uri()).simulateMembers(3).start());
        assertTrue(simulated.getMessage().contains("--simulate-members needs a single-node replica set; this upstream is 2 mongos"
                + " servers (name one member of a shard's replica set, or a single-node replica set)"), simulated::getMessage);
        try (BlackPipe proxy = BlackPipe.start(lane.uri())) {
            IllegalArgumentException secondary = assertThrows(IllegalArgumentException.class,
                    () -> proxy.fail("insert").onMember("secondary").with(Fault.RESET));
            List<Member> routers = proxy.server().members();
            assertTrue(secondary.getMessage().endsWith("no member 'secondary' (known: primary, " + routers.get(0).upstream() + " / "
                    + routers.get(0).advertised() + ", " + routers.get(1).upstream() + " / " + routers.get(1).advertised() + ")"),
                    secondary::getMessage);
            IllegalStateException failover = assertThrows(IllegalStateException.class, proxy::failover);
            assertTrue(failover.getMessage().startsWith("failover needs a replica set with more than one member; this upstream is"
                    + " a mongos with 2 members"), failover::getMessage);
        }
    }
}
