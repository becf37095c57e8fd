package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.topology.Member;
import io.blackpipe.wire.BlockingCommandClient;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
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
