package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.blackpipe.testing.BindRetry;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.topology.Member;
import io.blackpipe.topology.MemberAddress;
import io.blackpipe.wire.BlockingCommandClient;
import java.util.LinkedHashMap;
import java.util.List;
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
     * The case itself, with the real driver: a proxy fails over, stops, and a new one starts on the same ports while the
     * app keeps its client. Its next write finds the new proxy's primary and lands. The first proxy takes free ports
     * itself; the second is pinned to them, so a process given one of them in between fails the restart's bind: the
     * whole case is then run again on new ports.
     */
    @Test
    void aDriverThatOutlivedTheProxyFindsTheNewProxysPrimary() throws Exception {
        BindRetry.upTo(3, SimulatedTermAcrossRestartsTest::aDriverOutlivesTheProxy);
    }

    private static void aDriverOutlivesTheProxy() throws Exception {
        ProxyConfig config = ProxyConfig.embedded(UpstreamLane.singleNodeUri()).withSimulatedMembers(3);
        String db = UpstreamLane.freshDatabaseName("term_restart");
        ProxyServer first = ProxyServer.start(config);
        try {
            ProxyConfig samePorts = onTheSamePorts(config, first);
            List<MemberAddress> known = first.members().stream().map(Member::advertised).toList();
            try (MongoClient client = MongoClients.create(MongoClientSettings.builder()
                    .applyConnectionString(new ConnectionString(first.connectionString() + "&retryWrites=true&heartbeatFrequencyMS=500"))
                    .applyToClusterSettings(b -> b.serverSelectionTimeout(10, TimeUnit.SECONDS)).build())) {
                MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
                c.insertOne(new Document("_id", 1));
                first.failover(0);
                c.insertOne(new Document("_id", 2)); // the driver now knows the second term
                first.close();
                try (ProxyServer again = ProxyServer.start(samePorts)) {
                    assertEquals(known, again.members().stream().map(Member::advertised).toList(), "the members where the driver knows them");
                    c.insertOne(new Document("_id", 3)); // before: no primary newer than the one it knew, a timeout
                }
            }
        } finally {
            first.close(); // again, if a failure came first: a close after a close does nothing
        }
        try (MongoClient direct = UpstreamLane.directClient()) {
            assertEquals(3, direct.getDatabase(db).getCollection("c").countDocuments(), "each write landed once");
        }
    }

    /** {@code config} with each member pinned to the port {@code proxy} listens on for it. */
    private static ProxyConfig onTheSamePorts(ProxyConfig config, ProxyServer proxy) {
        Map<MemberAddress, Integer> ports = new LinkedHashMap<>();
        for (Member member : proxy.members()) {
            ports.put(member.upstream(), member.advertised().port());
        }
        return new ProxyConfig(config.upstream(), config.bindHost(), config.port(), config.advertiseHost(), config.adminHost(),
                config.adminPort(), ports, config.connectTimeoutMillis()).withSimulatedMembers(config.simulateMembers());
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
