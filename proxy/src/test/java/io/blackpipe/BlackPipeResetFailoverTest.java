package io.blackpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.connection.ServerDescription;
import io.blackpipe.observe.HistoryEntry;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.topology.Member;
import io.blackpipe.wire.BlockingCommandClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.Document;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;

/**
 * reset() between tests on a simulated replica set: a failover in one test must not leave the
 * next one with another primary. The first member is made primary again by one more election, so
 * a driver that saw the failover follows it back, as it followed the failover.
 */
class BlackPipeResetFailoverTest {

    @Test
    void afterAFailoverResetMakesTheFirstMemberPrimaryAgainAndTheDriversWriteGoesThere() throws InterruptedException {
        String db = UpstreamLane.freshDatabaseName("api-reset-failover");
        try (BlackPipe blackPipe = BlackPipe.builder().upstream(UpstreamLane.singleNodeUri()).simulateMembers(3).start();
             // polling, no heartbeat during the test: the driver learns of each election from the old primary's refusal
             MongoClient client = MongoClients.create(MongoClientSettings.builder()
                     .applyConnectionString(new ConnectionString(blackPipe.connectionString()
                             + "&retryWrites=true&serverMonitoringMode=poll&heartbeatFrequencyMS=120000&socketTimeoutMS=20000"))
                     .applyToClusterSettings(b -> b.serverSelectionTimeout(10, TimeUnit.SECONDS))
                     .build())) {
            Member first = blackPipe.server().members().get(0);
            Member second = blackPipe.server().members().get(1);
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            c.insertOne(new Document("_id", 1));
            // until the driver has heard from every member, a late first hello could tell it of an election first
            Await.until(Duration.ofSeconds(10), "the driver has heard from both secondaries", () -> client.getClusterDescription()
                    .getServerDescriptions().stream().filter(ServerDescription::isSecondary).count() == 2);
            ObjectId electionBefore = electionId(first);

            blackPipe.failover();
            c.insertOne(new Document("_id", 2));
            assertEquals(second.advertised().toString(), primaryOf(client), "the driver followed the failover");

            blackPipe.reset(); // what @BlackPipeTest does before the next test
            assertEquals(first.upstream(), blackPipe.server().select("primary").get(0).member().upstream(),
                    "the proxy's first member is primary again");
            ObjectId electionAfter = electionId(first);
            assertTrue(electionAfter.compareTo(electionBefore) > 0, "a newer election (" + electionAfter + " after "
                    + electionBefore + "), never an older one: a driver would take it for a stale primary");

            c.insertOne(new Document("_id", 3)); // to the second member the driver knows: refused, retried on the first
            assertEquals(first.advertised().toString(), primaryOf(client), "the driver's view agrees");
            List<HistoryEntry> inserts = blackPipe.history().stream().filter(e -> e.command().equals("insert")).toList();
            HistoryEntry last = inserts.get(inserts.size() - 1);
            assertEquals(first.upstream().toString(), last.member(), "the write went to the first member: " + inserts);
            assertEquals("ok", last.outcome());

            c.insertOne(new Document("_id", 4)); // the driver now writes to the first member at once
            assertEquals(first.upstream().toString(), blackPipe.history().get(blackPipe.history().size() - 1).member());
        }
        try (MongoClient direct = UpstreamLane.directClient()) {
            assertEquals(4, direct.getDatabase(db).getCollection("c").countDocuments());
        }
    }

    /** An election under way (failover with a length): reset() ends it now, the first member elected, in a newer term. */
    @Test
    void aResetDuringAnElectionElectsTheFirstMemberAtOnce() {
        try (BlackPipe blackPipe = BlackPipe.builder().upstream(UpstreamLane.singleNodeUri()).simulateMembers(3).start()) {
            Member first = blackPipe.server().members().get(0);
            ObjectId before = electionId(first);
            assertThrows(IllegalArgumentException.class, () -> blackPipe.failover(Duration.ofMillis(-1)));
            blackPipe.failover(Duration.ofMinutes(1));
            assertTrue(blackPipe.server().select("primary").isEmpty(), "no primary while the set elects");
            blackPipe.reset();
            ObjectId after = electionId(first);
            assertTrue(after.compareTo(before) > 0, "a newer election: " + after + " after " + before);
        }
    }

    @Test
    void aResetWithoutAFailoverHoldsNoElection() {
        try (BlackPipe blackPipe = BlackPipe.builder().upstream(UpstreamLane.singleNodeUri()).simulateMembers(2).start()) {
            Member first = blackPipe.server().members().get(0);
            ObjectId before = electionId(first);
            blackPipe.reset();
            assertEquals(before, electionId(first), "the first member is primary already: nothing to elect");
            blackPipe.failover();
            blackPipe.failover(); // around a set of two: the first member is primary again
            ObjectId twice = electionId(first);
            blackPipe.reset();
            assertEquals(twice, electionId(first));
        }
    }

    /** The electionId the member's hello reports (a primary's), asked over the wire as a driver's monitor asks. */
    private static ObjectId electionId(Member member) {
        try (BlockingCommandClient direct = new BlockingCommandClient(member.advertised().host(), member.advertised().port(), 5000)) {
            BsonDocument hello = direct.run("admin", new BsonDocument("hello", new BsonInt32(1)));
            assertTrue(hello.getBoolean("isWritablePrimary", BsonBoolean.FALSE).getValue(), member + " is primary: " + hello.toJson());
            return hello.getObjectId("electionId").getValue();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String primaryOf(MongoClient client) {
        return client.getClusterDescription().getServerDescriptions().stream()
                .filter(ServerDescription::isPrimary).map(d -> d.getAddress().toString()).findFirst().orElse("none");
    }
}
