package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.topology.Member;
import java.util.List;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * rs.status() and rs.conf() (replSetGetStatus, replSetGetConfig) asked of a simulated set over the
 * lane's node, with the real Java driver: every member answers with the simulated set, in step with
 * its hello, before and after a failover. The node's own answer is rewritten where it has the
 * command (mongod); where it lacks it (jongodb answers CommandNotFound), the member answers from a
 * one-node pattern, as a real member always can, and the proxy counts what the client got.
 */
class SimulatedSetStatusLaneTest {
    @RegisterExtension
    final SimulatedSetOverTheLane set = new SimulatedSetOverTheLane();

    @Test
    void everyMemberTellsTheSimulatedSetBeforeAndAfterAFailover() throws Exception {
        List<Member> members = set.proxy().members();
        assertPrimaryIs(0);
        set.proxy().failover();
        assertPrimaryIs(1);

        // an injected state-change error moves the primary's topologyVersion on (its errors then carry the shift)
        set.proxy().rules().put(set.proxy().ruleParser().parse("r", BsonDocument.parse("{configureFailPoint: 'failCommand',"
                + " mode: {times: 1}, data: {failCommands: ['insert'], error: 'NotWritablePrimary'}}")));
        String db = UpstreamLane.freshDatabaseName("simstatus");
        try (MongoClient client = MongoClients.create(set.proxy().connectionString())) {
            client.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1)); // refused once, retried
        }
        assertEquals(1, set.direct().getDatabase(db).getCollection("c").countDocuments(), "the insert landed once");
        assertEquals(1, Meters.faults(set.proxy().registry(), "errorReply", "insert"));
        assertPrimaryIs(1);

        try (MongoClient direct = member(members.get(2))) {
            BsonDocument config = direct.getDatabase("admin").runCommand(new Document("replSetGetConfig", 1), BsonDocument.class)
                    .getDocument("config");
            assertEquals(setName(), config.getString("_id").getValue(), config::toJson);
            assertEquals(List.of(advertised(0), advertised(1), advertised(2)),
                    config.getArray("members").stream().map(m -> m.asDocument().getString("host").getValue()).toList(), config::toJson);
        }
        assertEquals(members.size() * 3 + 1, Meters.outcomes(set.proxy().registry(), "replSetGetStatus", "ok")
                + Meters.outcomes(set.proxy().registry(), "replSetGetConfig", "ok"), "counted as the client got them: ok");
    }

    /** Each member's replSetGetStatus: itself marked self with its own state, the one primary as hello names it. */
    private void assertPrimaryIs(int primary) {
        for (int i = 0; i < set.proxy().members().size(); i++) {
            try (MongoClient direct = member(set.proxy().members().get(i))) {
                BsonDocument status = direct.getDatabase("admin").runCommand(new Document("replSetGetStatus", 1), BsonDocument.class);
                assertEquals(1.0, status.getNumber("ok").doubleValue(), status::toJson);
                assertEquals(setName(), status.getString("set").getValue(), status::toJson);
                assertEquals(i == primary ? 1 : 2, status.getInt32("myState").getValue(), status::toJson);
                List<BsonDocument> entries = status.getArray("members").stream().map(BsonValue::asDocument).toList();
                assertEquals(List.of(advertised(0), advertised(1), advertised(2)),
                        entries.stream().map(e -> e.getString("name").getValue()).toList(), status::toJson);
                assertEquals(advertised(primary), entries.stream().filter(e -> e.getString("stateStr").getValue().equals("PRIMARY"))
                        .map(e -> e.getString("name").getValue()).reduce((a, b) -> a + "," + b).orElse("none"), status::toJson);
                int self = i;
                assertTrue(entries.stream().allMatch(e -> e.getBoolean("self", BsonBoolean.FALSE).getValue()
                        == e.getString("name").getValue().equals(advertised(self))), status::toJson);
            }
        }
    }

    /** The set's name, as the members' hellos give it. */
    private String setName() {
        try (MongoClient direct = member(set.proxy().members().get(0))) {
            return direct.getDatabase("admin").runCommand(new Document("hello", 1), BsonDocument.class).getString("setName").getValue();
        }
    }

    private String advertised(int index) {
        return set.proxy().members().get(index).advertised().toString();
    }

    private static MongoClient member(Member member) {
        return MongoClients.create("mongodb://" + member.advertised() + "/?directConnection=true");
    }
}
