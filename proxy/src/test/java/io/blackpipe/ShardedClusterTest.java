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
import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.ScriptedMongod;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * A sharded cluster's URI lists several mongos: each is proxied on a listener of its own, so the
 * driver spreads operations over them as it would without the proxy, retries a write on another
 * mongos, and an outage of one leaves the others. The routers here are scripted mongos (msg:
 * isdbgrid), each with a store of its own, so where a write landed is where it shows: no lane here
 * can start a real sharded cluster.
 */
class ShardedClusterTest {
    /** A loopback port nothing listens on (bound, then released). */
    private static int closedPort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    private static MongoClient driver(String connectionString, CommandListener listener) {
        return MongoClients.create(MongoClientSettings.builder().applyConnectionString(new ConnectionString(connectionString))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(10, TimeUnit.SECONDS))
                .addCommandListener(listener).build());
    }

    private static long inserted(ScriptedMongod mongos) {
        return mongos.commandsReceived("insert").size();
    }

    @Test
    void everyMongosOfTheUriGetsAListenerAndTheDriverSeesAShardedClusterOfThem() throws Exception {
        String silent = "127.0.0.1:" + closedPort();
        try (ScriptedMongod a = ScriptedMongod.builder().mongos().start();
             ScriptedMongod b = ScriptedMongod.builder().mongos().start();
             ScriptedMongod standalone = ScriptedMongod.builder().standalone().start();
             LogCapture log = LogCapture.start();
             BlackPipe proxy = BlackPipe.start("mongodb://" + a.address() + "," + standalone.address() + "," + silent + ","
                     + b.address() + "/");
             MongoClient client = driver(proxy.connectionString(), new CommandListener() { })) {
            assertEquals(List.of(a.address(), b.address()),
                    proxy.server().members().stream().map(m -> m.upstream().toString()).toList());
            assertFalse(proxy.connectionString().contains("replicaSet"), proxy.connectionString());
            assertEquals(2, new ConnectionString(proxy.connectionString()).getHosts().size(), proxy.connectionString());
            log.await(m -> m.startsWith("upstream seed " + standalone.address() + " passed over: it is a standalone, not a mongos as "
                    + a.address() + " is"), Duration.ZERO, "saying the standalone was passed over");
            log.await(m -> m.startsWith("upstream seed " + silent + " passed over: no answer to hello"), Duration.ZERO,
                    "saying the silent seed was passed over");

            MongoCollection<Document> orders = client.getDatabase("shop").getCollection("orders");
            for (int i = 0; i < 40; i++) {
                orders.insertOne(new Document("_id", i));
            }
            assertEquals(ClusterType.SHARDED, client.getClusterDescription().getType());
            assertEquals(2, client.getClusterDescription().getServerDescriptions().size());
            assertEquals(40, inserted(a) + inserted(b), "every insert reached one mongos");
            assertTrue(inserted(a) > 0 && inserted(b) > 0, "the driver spread them over both: " + inserted(a) + " and " + inserted(b));
            assertEquals(0, standalone.commandsReceived("insert").size());
            assertEquals(40, proxy.attempts("insert"));
        }
    }

    @Test
    void aFailoverOrASimulatedSetIsRefusedNamingTheRouters() throws Exception {
        try (ScriptedMongod a = ScriptedMongod.builder().mongos().start();
             ScriptedMongod b = ScriptedMongod.builder().mongos().start()) {
            String uri = "mongodb://" + a.address() + "," + b.address() + "/";
            IllegalStateException simulated = assertThrows(IllegalStateException.class,
                    () -> BlackPipe.builder().upstream(uri).simulateMembers(3).start());
            assertTrue(simulated.getMessage().contains("--simulate-members needs a single upstream node; this upstream is 2 mongos"
                    + " routers (name one of them alone)"), simulated::getMessage);
            try (BlackPipe proxy = BlackPipe.start(uri)) {
                IllegalStateException failover = assertThrows(IllegalStateException.class, proxy::failover);
                assertTrue(failover.getMessage().startsWith("failover needs a replica set with more than one member; this upstream is"
                        + " a mongos with 2 members"), failover::getMessage);
            }
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
        try (ScriptedMongod a = ScriptedMongod.builder().mongos().start();
             ScriptedMongod b = ScriptedMongod.builder().mongos().start();
             BlackPipe proxy = BlackPipe.start("mongodb://" + a.address() + "," + b.address() + "/");
             MongoClient client = driver(proxy.connectionString() + "?retryWrites=true", listener)) {
            client.getDatabase("shop").runCommand(new Document("ping", 1)); // both routers known before the write
            Await.until(Duration.ofSeconds(10), "the driver's monitors reached both mongos",
                    () -> client.getClusterDescription().getServerDescriptions().stream().allMatch(s -> s.isOk()));
            proxy.fail("insert").times(1).with(Fault.CLOSE);
            client.getDatabase("shop").getCollection("orders").insertOne(new Document("_id", 1));

            assertEquals(1, failedAt.size(), "the first attempt met the closed connection");
            assertEquals(1, succeededAt.size(), "and its retry succeeded");
            assertNotEquals(failedAt.get(0), succeededAt.get(0), "the retry went to the other mongos, as the retryable writes spec says");
            assertEquals(List.of(0L, 1L), List.of(Math.min(inserted(a), inserted(b)), Math.max(inserted(a), inserted(b))),
                    "one mongos ran the insert once; the closed attempt reached none");
            assertEquals(2, proxy.attempts("insert"));
            assertEquals(1, proxy.retries("insert"));
            List<HistoryEntry> inserts = proxy.history().stream().filter(e -> e.command().equals("insert")).toList();
            assertEquals(2, inserts.size(), inserts::toString);
            assertNotEquals(inserts.get(0).member(), inserts.get(1).member(), "the proxy saw the two attempts on two mongos");
        }
    }

    @Test
    void anOutageOfOneMongosLeavesTheOtherToServeEveryWrite() throws Exception {
        try (ScriptedMongod a = ScriptedMongod.builder().mongos().start();
             ScriptedMongod b = ScriptedMongod.builder().mongos().start();
             BlackPipe proxy = BlackPipe.start("mongodb://" + a.address() + "," + b.address() + "/");
             MongoClient client = driver(proxy.connectionString() + "?retryWrites=true&heartbeatFrequencyMS=500", new CommandListener() { })) {
            MongoCollection<Document> orders = client.getDatabase("shop").getCollection("orders");
            orders.insertOne(new Document("_id", 0));
            proxy.outage(a.address(), Duration.ZERO);
            long beforeOnA = inserted(a);
            for (int i = 1; i <= 20; i++) {
                orders.insertOne(new Document("_id", i)); // a retry covers a write that picked the router just cut
            }
            assertEquals(beforeOnA, inserted(a), "nothing reached the mongos that is out");
            assertEquals(21, inserted(a) + inserted(b));
            proxy.restore(a.address());
        }
    }
}
