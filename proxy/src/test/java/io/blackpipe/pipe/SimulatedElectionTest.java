package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.connection.ServerDescription;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.topology.Member;
import io.blackpipe.topology.MemberState;
import io.blackpipe.wire.BlockingCommandClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A failover with an election of some length: the primary steps down and, until the set has elected the next
 * member, no member is primary, as in a real set. Every member calls itself a secondary and names no primary, a
 * write meets no primary anywhere, and a driver waits to select one: a retryable write that can wait lands once on
 * the new primary; one whose server selection gives up first fails, and nothing is written.
 */
class SimulatedElectionTest {
    @RegisterExtension
    final SimulatedSetOverTheLane set = new SimulatedSetOverTheLane();

    /** Polled, so the write meets the old primary first (a streaming driver hears of the stepdown at once). */
    private MongoClient client(int serverSelectionMillis) {
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(set.proxy().connectionString() + "&serverMonitoringMode=poll&heartbeatFrequencyMS=120000"))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(serverSelectionMillis, TimeUnit.MILLISECONDS))
                .build());
    }

    private static void awaitBothSecondaries(MongoClient client) throws InterruptedException {
        Await.until(Duration.ofSeconds(10), () -> "the driver knows both secondaries: " + client.getClusterDescription(),
                () -> client.getClusterDescription().getServerDescriptions().stream().filter(ServerDescription::isSecondary).count() == 2);
    }

    @Test
    void aRetryableWriteDuringTheElectionWaitsForTheNewPrimaryAndLandsOnce() throws Exception {
        String db = UpstreamLane.freshDatabaseName("simelect");
        try (MongoClient client = client(30_000)) {
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            c.insertOne(new Document("_id", 0));
            awaitBothSecondaries(client);

            set.proxy().failover(3_000); // long enough for the checks below on a loaded machine
            for (Member member : set.proxy().members()) {
                BsonDocument hello = hello(member);
                assertFalse(hello.getBoolean("isWritablePrimary").getValue(), hello::toJson);
                assertTrue(hello.getBoolean("secondary").getValue(), hello::toJson);
                assertFalse(hello.containsKey("primary"), () -> "no primary named while the set elects: " + hello.toJson());
            }

            c.insertOne(new Document("_id", 1)); // the old primary refuses it; the retry waits for the election's end
            assertEquals(set.proxy().members().get(1).advertised().toString(), hello(set.proxy().members().get(2)).getString("primary").getValue(),
                    "the next member elected");
        }
        // the driver learns of the stepdown from the old primary's refusal (then retries once), or from a check before
        // it (then sends once, to the new primary): never a second retry, never a lost or doubled write
        long retries = Meters.retries(set.proxy().registry(), "insert");
        assertTrue(retries <= 1, "retried at most once: " + retries);
        assertEquals(2 + retries, Meters.attempts(set.proxy().registry(), "insert"));
        assertEquals(List.of(new Document("_id", 0), new Document("_id", 1)),
                set.direct().getDatabase(db).getCollection("c").find().sort(new Document("_id", 1)).into(new ArrayList<>()));
    }

    @Test
    void aWriteThatCannotWaitFailsAndAResetEndsTheElectionWithTheFirstMemberPrimary() throws Exception {
        String db = UpstreamLane.freshDatabaseName("simelectgiveup");
        try (MongoClient impatient = client(300)) {
            awaitBothSecondaries(impatient);
            set.proxy().failover(60_000);
            MongoCollection<Document> c = impatient.getDatabase(db).getCollection("c");
            assertThrows(MongoException.class, () -> c.insertOne(new Document("_id", 1)), "no primary to retry on");
            assertEquals(0, Meters.retries(set.proxy().registry(), "insert"), "the retry never found a primary to go to");

            IllegalStateException during = assertThrows(IllegalStateException.class, () -> set.proxy().failover());
            assertTrue(during.getMessage().startsWith("no member is primary: an election is under way"), during.getMessage());

            set.proxy().reset();
            BsonDocument first = hello(set.proxy().members().get(0));
            assertTrue(first.getBoolean("isWritablePrimary").getValue(), "the first member at once, not in a minute: " + first.toJson());
        }
        try (MongoClient client = client(30_000)) {
            client.getDatabase(db).getCollection("c").insertOne(new Document("_id", 2));
        }
        assertEquals(List.of(new Document("_id", 2)), set.direct().getDatabase(db).getCollection("c").find().into(new ArrayList<>()),
                "the write that gave up was never applied");
    }

    /** A scenario's failover step carries its election's length to the set, as the API's failover does. */
    @Test
    void aScenariosFailoverStepHoldsItsElection() throws Exception {
        String db = UpstreamLane.freshDatabaseName("simelectscenario");
        try (MongoClient impatient = client(300)) {
            awaitBothSecondaries(impatient);
            set.proxy().scenarios().start(set.proxy().scenarioLoader().parse("election.yaml",
                    "name: election\ntimeline:\n  - at: 1ms\n    failover: {election: 1m}\n"));
            Await.until(Duration.ofSeconds(10), () -> "the step ran: " + set.proxy().scenarios().status().toJson(),
                    () -> set.proxy().members().stream().noneMatch(m -> set.proxy().memberState(m.upstream()).role()
                            == MemberState.Role.PRIMARY));
            assertFalse(hello(set.proxy().members().get(1)).containsKey("primary"), "still electing, a minute long");
            assertThrows(MongoException.class, () -> impatient.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1)));
            set.proxy().reset();
        }
        assertEquals(0, set.direct().getDatabase(db).getCollection("c").countDocuments(), "nothing written while no member was primary");
    }

    @Test
    void aRealSetsElectionTakesItsOwnTimeSoALengthIsRefused() {
        try (ProxyServer real = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.singleNodeUri()))) {
            IllegalStateException refused = assertThrows(IllegalStateException.class, () -> real.failover(1_000));
            assertTrue(refused.getMessage().startsWith("an election's length and a rollback apply to a simulated set (--simulate-members)"),
                    refused.getMessage());
        }
    }

    /** The member's hello, asked over the wire as a driver's monitor asks. */
    private static BsonDocument hello(Member member) {
        try (BlockingCommandClient client = new BlockingCommandClient(member.advertised().host(), member.advertised().port(), 5000)) {
            BsonDocument hello = client.run("admin", new BsonDocument("hello", new BsonInt32(1)));
            assertTrue(hello.getNumber("ok").doubleValue() == 1.0, hello::toJson);
            hello.putIfAbsent("isWritablePrimary", BsonBoolean.FALSE);
            return hello;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
