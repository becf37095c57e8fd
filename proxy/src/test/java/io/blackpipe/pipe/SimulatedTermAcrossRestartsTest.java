package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.topology.Member;
import io.blackpipe.topology.UpstreamUri;
import io.blackpipe.wire.BlockingCommandClient;
import java.io.IOException;
import java.net.ServerSocket;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.Document;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;

/**
 * A driver keeps the highest electionId it has seen and takes a primary of a lower one for stale (the SDAM spec's
 * updateRSFromPrimary), so a simulated set started again (a sidecar restarted while the app kept its client) must
 * begin in a newer term than the last proxy's set reached. Before, every set began at term 1: after one failover,
 * the restarted proxy's primary was stale to that driver, which then found no primary.
 */
class SimulatedTermAcrossRestartsTest {
    @Test
    void aSetStartedAgainBeginsInANewerTermThanTheLastOneReached() throws Exception {
        ObjectId reached;
        try (ProxyServer first = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.singleNodeUri()).withSimulatedMembers(3))) {
            first.failover(0);
            reached = primaryElectionId(first);
        }
        try (ProxyServer again = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.singleNodeUri()).withSimulatedMembers(3))) {
            ObjectId begun = primaryElectionId(again);
            assertTrue(begun.compareTo(reached) > 0, "the new set's electionId " + begun + " is newer than " + reached);
        }
    }

    /**
     * The case itself, with the real driver: a proxy on fixed ports fails over, stops, and a new one starts on the same
     * ports while the app keeps its client. Its next write finds the new proxy's primary and lands.
     */
    @Test
    void aDriverThatOutlivedTheProxyFindsTheNewProxysPrimary() throws Exception {
        ProxyConfig config = new ProxyConfig(UpstreamUri.parse(UpstreamLane.singleNodeUri()), "127.0.0.1", threeFreePorts(),
                "127.0.0.1", "127.0.0.1", -1, Map.of(), 5000).withSimulatedMembers(3);
        String db = UpstreamLane.freshDatabaseName("term_restart");
        ProxyServer first = ProxyServer.start(config);
        try (MongoClient client = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(first.connectionString() + "&retryWrites=true&heartbeatFrequencyMS=500"))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(10, TimeUnit.SECONDS)).build())) {
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            c.insertOne(new Document("_id", 1));
            first.failover(0);
            c.insertOne(new Document("_id", 2)); // the driver now knows the second term
            first.close();
            try (ProxyServer again = ProxyServer.start(config)) {
                c.insertOne(new Document("_id", 3)); // before: no primary newer than the one it knew, a timeout
            }
        } finally {
            first.close(); // again, if a failure came first: a close after a close does nothing
        }
        try (MongoClient direct = UpstreamLane.directClient()) {
            assertEquals(3, direct.getDatabase(db).getCollection("c").countDocuments(), "each write landed once");
        }
    }

    /** A first port of three free ones in a row, for the members of a proxy started twice on the same ports. */
    private static int threeFreePorts() throws IOException {
        for (int attempt = 0; attempt < 50; attempt++) {
            int base;
            try (ServerSocket probe = new ServerSocket(0)) {
                base = probe.getLocalPort();
            }
            if (base > 65_000) {
                continue;
            }
            try (ServerSocket a = new ServerSocket(base); ServerSocket b = new ServerSocket(base + 1); ServerSocket c = new ServerSocket(base + 2)) {
                return base;
            } catch (IOException taken) {
                // one of the next two is taken: another try
            }
        }
        throw new IOException("no three free ports in a row");
    }

    /** The electionId the primary's hello reports, asked over the wire as a driver's monitor asks. */
    private static ObjectId primaryElectionId(ProxyServer proxy) throws Exception {
        for (Member member : proxy.members()) {
            try (BlockingCommandClient client = new BlockingCommandClient(member.advertised().host(), member.advertised().port(), 5000)) {
                BsonDocument hello = client.run("admin", new BsonDocument("hello", new BsonInt32(1)));
                if (hello.getBoolean("isWritablePrimary", BsonBoolean.FALSE).getValue()) {
                    return hello.getObjectId("electionId").getValue();
                }
            }
        }
        throw new AssertionError("no member is primary: " + proxy.members());
    }
}
