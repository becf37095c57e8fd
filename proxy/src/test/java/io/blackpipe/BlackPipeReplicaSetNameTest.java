package io.blackpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoTimeoutException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.topology.MemberAddress;
import io.blackpipe.topology.UpstreamUri;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * replicaSet= in the upstream URI is a requirement, as drivers take it (the Server Discovery and
 * Monitoring spec): a seed that reports another set, or none, is passed over, and a start whose
 * seeds are all passed over fails, naming the set required and what each seed reported. Without
 * replicaSet= the first seed to answer decides, set or standalone, as before.
 */
class BlackPipeReplicaSetNameTest {

    @Test
    void aSetNameTheMembersDoNotReportFailsTheStartNamingBothAsADriverWouldUseNone() {
        String reported = UpstreamLane.setName();
        String wrong = reported + "-other";
        String uri = UpstreamLane.uriNaming(wrong);
        IllegalStateException refused = assertThrows(IllegalStateException.class, () -> BlackPipe.start(uri).close());
        MemberAddress seed = UpstreamUri.parse(uri).seeds().get(0);
        assertTrue(refused.getMessage().startsWith("no upstream seed is a member of the replica set the URI names (replicaSet="
                + wrong + "): " + seed + " reports setName '" + reported + "'"), refused::getMessage);
        assertTrue(refused.getMessage().endsWith("A driver given this URI would use none of them: correct replicaSet,"
                + " or leave it out to proxy whatever the seeds report"), refused::getMessage);

        // what the real driver makes of the same URI: no server it may use
        try (MongoClient driver = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(uri))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(1, TimeUnit.SECONDS)).build())) {
            assertThrows(MongoTimeoutException.class, () -> driver.getDatabase("admin").runCommand(new Document("ping", 1)));
        }

        try (BlackPipe right = BlackPipe.start(UpstreamLane.uriNaming(reported))) {
            assertTrue(right.connectionString().endsWith("?replicaSet=" + reported), right.connectionString());
        }
    }

    @Test
    void aStandaloneFailsAStartThatNamesASetAndIsProxiedWhenTheUriNamesNone() throws Exception {
        try (ScriptedMongod standalone = ScriptedMongod.builder().standalone().start()) {
            IllegalStateException refused = assertThrows(IllegalStateException.class,
                    () -> BlackPipe.start(standalone.uri("replicaSet=rs0")).close());
            assertEquals("no upstream seed is a member of the replica set the URI names (replicaSet=rs0): " + standalone.address()
                    + " is a standalone (its hello has no setName). A driver given this URI would use none of them:"
                    + " correct replicaSet, or leave it out to proxy whatever the seeds report", refused.getMessage());

            try (BlackPipe proxied = BlackPipe.start(standalone.uri(""))) {
                assertFalse(proxied.connectionString().contains("replicaSet"), proxied.connectionString());
            }
        }
    }

    @Test
    void aSeedOfNoSetIsPassedOverForTheNextSeedThatIsInTheSet() throws Exception {
        String reported = UpstreamLane.setName();
        UpstreamUri lane = UpstreamUri.parse(UpstreamLane.uri());
        assumeFalse(lane.directConnection(), () -> "the " + UpstreamLane.name() + " lane is dialled directly: one seed only");
        try (ScriptedMongod standalone = ScriptedMongod.builder().standalone().start();
             LogCapture log = LogCapture.start()) {
            String seeds = standalone.address() + "," + lane.seeds().stream().map(MemberAddress::toString).collect(Collectors.joining(","));
            try (BlackPipe proxied = BlackPipe.start("mongodb://" + seeds + "/?replicaSet=" + reported);
                 MongoClient client = MongoClients.create(MongoClientSettings.builder()
                         .applyConnectionString(new ConnectionString(proxied.connectionString()))
                         .applyToClusterSettings(b -> b.serverSelectionTimeout(15, TimeUnit.SECONDS)).build())) {
                assertTrue(proxied.connectionString().endsWith("?replicaSet=" + reported), proxied.connectionString());
                String database = UpstreamLane.freshDatabaseName("rsname");
                client.getDatabase(database).getCollection("c").insertOne(new Document("_id", 1));
                assertEquals(1, proxied.attempts("insert"), "the insert went through blackpipe to the set");
                log.await(m -> m.equals("upstream seed " + standalone.address() + " passed over: it is a standalone (its hello"
                        + " has no setName), and the URI names replicaSet=" + reported + "; using " + lane.seeds().get(0)),
                        Duration.ZERO, "saying the standalone was passed over, and why");
            }
        }
    }
}
