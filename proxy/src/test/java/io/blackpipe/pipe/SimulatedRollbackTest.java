package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoWriteException;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.connection.ServerDescription;
import io.blackpipe.fault.Failover;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.UpstreamLane;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A failover with a rollback on a simulated set, with the Java driver: the inserts the old primary acknowledged below
 * majority in the rollback's reach are gone from the server, as after mongod's rollback, and those acknowledged with
 * majority, or before a write acknowledged with majority, stay.
 */
class SimulatedRollbackTest {
    @RegisterExtension
    final SimulatedSetOverTheLane set = new SimulatedSetOverTheLane();

    private MongoClient client() {
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(set.proxy().connectionString() + "&heartbeatFrequencyMS=500"))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(10, TimeUnit.SECONDS))
                .build());
    }

    private static List<Object> idsOnTheServer(String db) {
        try (MongoClient direct = UpstreamLane.directClient()) {
            List<Object> ids = new ArrayList<>();
            direct.getDatabase(db).getCollection("orders").find().sort(new Document("_id", 1)).forEach(d -> ids.add(d.get("_id")));
            return ids;
        }
    }

    private static List<Document> orders(int from, int to) {
        return IntStream.range(from, to).mapToObj(i -> new Document("_id", i)).toList();
    }

    private static String primaryOf(MongoClient client) {
        return client.getClusterDescription().getServerDescriptions().stream()
                .filter(ServerDescription::isPrimary).map(d -> d.getAddress().toString()).findFirst().orElse("none");
    }

    @Test
    void insertsAcknowledgedWithW1AreRolledBackAndThoseWithMajorityStay() throws Exception {
        String db = UpstreamLane.freshDatabaseName("rollback");
        try (LogCapture log = LogCapture.start(); MongoClient client = client()) {
            MongoCollection<Document> orders = client.getDatabase(db).getCollection("orders");
            orders.insertMany(orders(0, 10)); // the default write concern: majority
            orders.withWriteConcern(WriteConcern.W1).insertMany(orders(10, 30));
            for (int i = 30; i < 35; i++) {
                orders.withWriteConcern(WriteConcern.W1).insertOne(new Document("_id", i));
            }
            String oldPrimary = primaryOf(client);
            assertEquals(35, idsOnTheServer(db).size(), "every acknowledged insert is on the server before the failover");

            long removed = set.proxy().failover(new Failover(0, 10_000));

            assertEquals(25, removed, "the 25 inserts acknowledged with w: 1 are rolled back");
            assertEquals(IntStream.range(0, 10).boxed().toList(), idsOnTheServer(db), "those acknowledged with majority stay");
            log.awaitContaining(Duration.ofSeconds(5), "removed 25 documents they created, put back 0", db + ".orders: 25 removed");
            assertEquals(25, Meters.sum(set.proxy().registry(), "blackpipe.rolled.back.documents", "namespace", db + ".orders"));
            orders.insertOne(new Document("_id", 100)); // the new primary takes writes
            assertNotEquals(oldPrimary, primaryOf(client), "the driver writes to the new primary");
            assertEquals(11, idsOnTheServer(db).size());
        }
    }

    /**
     * A test that writes a collection per case rolls back many: the meter labels the first 100 namespaces as themselves
     * and counts the rest as other (3,000 collections made 3,000 series for good), and says so once; the log names them all.
     */
    @Test
    void theRolledBackNamespacesAreLabelledUpToACap() throws Exception {
        String db = UpstreamLane.freshDatabaseName("rollbackCap");
        try (LogCapture log = LogCapture.start(); MongoClient client = client()) {
            for (int i = 0; i < 105; i++) {
                client.getDatabase(db).getCollection("c" + i).withWriteConcern(WriteConcern.W1).insertOne(new Document("_id", i));
            }
            assertEquals(105, set.proxy().failover(new Failover(0, 10_000)), "every insert rolled back");
            assertEquals(101, set.proxy().registry().find("blackpipe.rolled.back.documents").counters().size(), "100 and other");
            assertEquals(5, Meters.sum(set.proxy().registry(), "blackpipe.rolled.back.documents", "namespace", "other"));
            assertEquals(1, log.messages().stream().filter(m -> m.startsWith("100 distinct namespaces have their own rolled back"
                    + " documents label")).count(), () -> String.join("\n", log.messages()));
            log.awaitContaining(Duration.ofSeconds(5), db + ".c104: 1 removed");
        }
    }

    /** The counter of the retry article: increments acknowledged with w: 1 are lost, as are a delete's and an upsert's work. */
    @Test
    void updatesDeletesAndFindAndModifysBelowMajorityAreTakenBackToWhatTheDocumentsWere() throws Exception {
        String db = UpstreamLane.freshDatabaseName("rollbackUpdates");
        try (MongoClient client = client()) {
            MongoCollection<Document> orders = client.getDatabase(db).getCollection("orders");
            List<Document> before = List.of(new Document("_id", 1).append("qty", 10), new Document("_id", 2).append("qty", 20),
                    new Document("_id", 3).append("qty", 30), new Document("_id", 4).append("qty", 40));
            orders.insertMany(before); // majority
            MongoCollection<Document> w1 = orders.withWriteConcern(WriteConcern.W1);
            for (int i = 0; i < 50; i++) {
                assertEquals(1, w1.updateOne(new Document("_id", 1), Updates.inc("qty", 1)).getModifiedCount());
            }
            w1.updateMany(new Document("_id", new Document("$in", List.of(2, 3))), Updates.set("flag", true));
            w1.findOneAndUpdate(new Document("_id", 2), Updates.inc("qty", 5));
            w1.replaceOne(new Document("_id", 3), new Document("_id", 3).append("replaced", true));
            assertEquals(1, w1.deleteOne(new Document("_id", 4)).getDeletedCount());
            w1.updateOne(new Document("_id", 9), Updates.set("qty", 90), new UpdateOptions().upsert(true));
            assertEquals(60, orders.find(new Document("_id", 1)).first().getInteger("qty"), "the 50 increments were acknowledged");

            assertEquals(5, set.proxy().failover(new Failover(0, 10_000)), "4 documents put back, the upserted one removed");

            try (MongoClient direct = UpstreamLane.directClient()) {
                assertEquals(before, direct.getDatabase(db).getCollection("orders").find().sort(new Document("_id", 1))
                        .into(new ArrayList<>()), "every document as the last majority write left it");
            }
        }
    }

    @Test
    void aWriteAcknowledgedWithMajorityReplicatedEveryInsertBeforeIt() throws Exception {
        String db = UpstreamLane.freshDatabaseName("rollbackCommitPoint");
        try (MongoClient client = client()) {
            MongoCollection<Document> orders = client.getDatabase(db).getCollection("orders");
            orders.withWriteConcern(WriteConcern.W1).insertMany(orders(0, 5));
            orders.updateOne(new Document("_id", 0), Updates.set("paid", true)); // majority: in the oplog after the five
            orders.withWriteConcern(WriteConcern.W1).insertOne(new Document("_id", 5));

            assertEquals(1, set.proxy().failover(new Failover(0, 10_000)), "only the insert after the majority write");
            assertEquals(List.of(0, 1, 2, 3, 4), idsOnTheServer(db));
        }
    }

    @Test
    void onlyTheInsertsInTheRollbacksReachGoAndANewFailoverReachesOnlyTheNewPrimarysWrites() throws Exception {
        String db = UpstreamLane.freshDatabaseName("rollbackReach");
        try (MongoClient client = client()) {
            MongoCollection<Document> orders = client.getDatabase(db).getCollection("orders").withWriteConcern(WriteConcern.W1);
            orders.insertMany(orders(0, 3));
            Thread.sleep(3_000);
            orders.insertMany(orders(3, 6));

            assertEquals(3, set.proxy().failover(new Failover(0, 2_500)), "the three acknowledged in the last 2.5 s");
            assertEquals(List.of(0, 1, 2), idsOnTheServer(db), "the three acknowledged 3 s before stay");

            assertEquals(0, set.proxy().failover(new Failover(0, 10_000)), "the old primary's writes were the last failover's");
            assertEquals(List.of(0, 1, 2), idsOnTheServer(db));
        }
    }

    /** What an insert failed to write, it does not lose (SimulatedWriteTest: which of a batch an error stops). */
    @Test
    void aFailedInsertLosesNothingAndAnUnacknowledgedOneGoesToo() throws Exception {
        String db = UpstreamLane.freshDatabaseName("rollbackPartial");
        try (MongoClient client = client()) {
            MongoCollection<Document> orders = client.getDatabase(db).getCollection("orders");
            orders.insertOne(new Document("_id", 1)); // majority
            MongoWriteException duplicate = assertThrows(MongoWriteException.class,
                    () -> orders.withWriteConcern(WriteConcern.W1).insertOne(new Document("_id", 1).append("again", true)));
            assertEquals(11000, duplicate.getError().getCode());
            orders.withWriteConcern(WriteConcern.UNACKNOWLEDGED).insertOne(new Document("_id", 3));
            Await.until(Duration.ofSeconds(10), "the unacknowledged insert lands", () -> idsOnTheServer(db).size() == 2);

            assertEquals(1, set.proxy().failover(new Failover(0, 10_000)), "the unacknowledged insert of _id 3 only");
            assertEquals(List.of(1), idsOnTheServer(db), "the majority insert of _id 1 stays, the duplicate took nothing from it");
        }
    }

    @Test
    void aRollbackNeedsASimulatedSetAndReachesBackAtMostAMinute() {
        IllegalArgumentException tooFar = assertThrows(IllegalArgumentException.class, () -> new Failover(0, 60_001));
        assertEquals("rollback: must be from 0 (nothing rolled back) to 60s, got 60001ms", tooFar.getMessage());
        try (ProxyServer real = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            IllegalStateException refused = assertThrows(IllegalStateException.class, () -> real.failover(new Failover(0, 1_000)));
            assertTrue(refused.getMessage().contains("a rollback apply to a simulated set (--simulate-members)"), refused.getMessage());
        }
    }
}
