package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.connection.ServerMonitoringMode;
import com.mongodb.connection.ServerType;
import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.topology.MemberAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** --max-connections: connections beyond the limit are closed on accept and logged; the others keep working. */
class MaxConnectionsTest {

    private static ProxyServer proxy(int max) {
        return ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()).withMaxConnections(max));
    }

    private static void assertHelloAnswered(RawClient client) throws Exception {
        byte[] reply = client.roundTrip(TlsTest.hello(42));
        BsonDocument body = ScriptedMongodWire.decodeDocument(reply, 21, reply.length - 21);
        assertEquals(1.0, body.getNumber("ok").doubleValue(), "hello through the proxy: " + body.toJson());
    }

    private static void awaitLimitedConnections(ProxyServer proxy, int expected) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (proxy.limitedConnections() != expected) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("expected " + expected + " counted connections, the proxy counts " + proxy.limitedConnections());
            }
            Thread.sleep(5);
        }
    }

    private static void awaitEveryMemberKnown(MongoClient driver, int members) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (driver.getClusterDescription().getServerDescriptions().stream()
                .filter(d -> d.getType() != ServerType.UNKNOWN).count() < members) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the driver did not learn all " + members + " members: " + driver.getClusterDescription());
            }
            Thread.sleep(10);
        }
    }

    @Test
    void connectionsBeyondTheLimitAreClosedAndLoggedOthersUnaffected() throws Exception {
        List<RawClient> clients = new ArrayList<>();
        try (LogCapture log = LogCapture.start(); ProxyServer proxy = proxy(5)) {
            MemberAddress member = proxy.members().get(0).advertised();
            for (int i = 0; i < 5; i++) {
                RawClient client = RawClient.connect(member);
                clients.add(client);
                assertHelloAnswered(client);
            }
            awaitLimitedConnections(proxy, 5);

            try (RawClient sixth = RawClient.connect(member)) {
                long start = System.nanoTime();
                sixth.awaitClosedByPeer(Duration.ofSeconds(2));
                assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(2), "the sixth must be closed promptly");
                String line = log.awaitContaining(Duration.ofSeconds(5), sixth.logName(), "--max-connections 5");
                assertTrue(line.contains("refused"), line);
            }
            for (RawClient client : clients) {
                assertHelloAnswered(client); // the five are unaffected
            }

            clients.remove(0).close();
            awaitLimitedConnections(proxy, 4);
            RawClient again = RawClient.connect(member);
            clients.add(again);
            assertHelloAnswered(again);
        } finally {
            for (RawClient client : clients) {
                client.close();
            }
        }
    }

    @Test
    void refusalLogLinesAreRateLimitedWithACount() throws Exception {
        try (LogCapture log = LogCapture.start(); ProxyServer proxy = proxy(1); RawClient holder = RawClient.connect(proxy.members().get(0).advertised())) {
            MemberAddress member = proxy.members().get(0).advertised();
            assertHelloAnswered(holder);
            List<String> refusedNames = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                try (RawClient refused = RawClient.connect(member)) {
                    refused.awaitClosedByPeer(Duration.ofSeconds(2));
                    refusedNames.add(refused.logName());
                }
            }
            log.awaitContaining(Duration.ofSeconds(5), refusedNames.get(0), "--max-connections 1");
            long lines = log.messages().stream().filter(m -> m.contains("--max-connections 1")).count();
            assertTrue(lines < 10, "ten refusals within moments must not log ten lines, logged " + lines);
            // every one counted, where the log sums them: a CI job asserts none were refused from /metrics
            assertEquals(10, Meters.sum(proxy.registry(), "blackpipe.connections.refused",
                    "member", proxy.members().get(0).upstream().toString()));
            assertHelloAnswered(holder);
        }
    }

    @Test
    void aDriverKeepsWorkingWhileRawClientsAreRefused() throws Exception {
        List<RawClient> clients = new ArrayList<>();
        try (ProxyServer proxy = proxy(20);
             MongoClient driver = MongoClients.create(MongoClientSettings.builder()
                     .applyConnectionString(new ConnectionString(proxy.connectionString()))
                     // one monitoring connection per member (no streaming RTT connection), so the count settles
                     .applyToServerSettings(b -> b.serverMonitoringMode(ServerMonitoringMode.POLL))
                     .applyToClusterSettings(b -> b.serverSelectionTimeout(15, TimeUnit.SECONDS)).build())) {
            MongoCollection<Document> collection = driver.getDatabase(UpstreamLane.freshDatabaseName("maxConnections")).getCollection("c");
            collection.insertOne(new Document("_id", 1));
            awaitEveryMemberKnown(driver, proxy.members().size());
            int driverConnections = proxy.limitedConnections();
            assertTrue(driverConnections > 0 && driverConnections <= 20, "the driver holds " + driverConnections);
            MemberAddress member = proxy.members().get(0).advertised();
            for (int i = driverConnections; i < 20; i++) {
                RawClient client = RawClient.connect(member);
                clients.add(client);
                assertHelloAnswered(client);
            }
            try (RawClient refused = RawClient.connect(member)) {
                refused.awaitClosedByPeer(Duration.ofSeconds(2));
            }
            collection.insertOne(new Document("_id", 2));
            assertNotNull(collection.find(new Document("_id", 2)).first(), "the driver's open connections keep working");
            assertEquals(2, collection.countDocuments());
            assertFalse(clients.isEmpty());
        } finally {
            for (RawClient client : clients) {
                client.close();
            }
        }
    }
}
