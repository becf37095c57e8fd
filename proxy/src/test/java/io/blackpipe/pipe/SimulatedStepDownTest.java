package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.blackpipe.topology.MemberState;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * rs.stepDown() (replSetStepDown) sent by an app or mongosh to a simulated primary: the simulated set
 * elects the next member, as `blackpipe failover` makes it do, and the one real node keeps its role.
 * Passed on, the real node would step down (mongod leaves the whole simulated set without a primary
 * for the stepdown's seconds; jongodb has no such command) while every simulated member still named
 * the same primary. A scripted node, which records the stepdowns it obeyed.
 */
class SimulatedStepDownTest {
    @RegisterExtension
    final SimulatedSetOverScriptedNode set = new SimulatedSetOverScriptedNode();

    @Test
    void stepDownOnTheSimulatedPrimaryElectsTheNextMemberAndLeavesTheRealNodeAlone() throws Exception {
        try (MongoClient client = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(set.proxy().connectionString() + "&heartbeatFrequencyMS=500"))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(10, TimeUnit.SECONDS)).build())) {
            String before = client.getDatabase("admin").runCommand(new BsonDocument("hello", new BsonInt32(1))).getString("primary");
            assertEquals(advertised(0), before);

            Document reply = client.getDatabase("admin").runCommand(new BsonDocument("replSetStepDown", new BsonInt32(10)));
            assertEquals(1.0, reply.get("ok", Number.class).doubleValue(), reply::toJson);

            assertEquals(0, set.node().stepDowns().size(), "the real node was never asked to step down");
            assertEquals(MemberState.Role.PRIMARY, set.proxy().memberState(set.proxy().members().get(1).upstream()).role());
            assertEquals(MemberState.Role.SECONDARY, set.proxy().memberState(set.proxy().members().get(0).upstream()).role());
            ScriptedProxy.awaitTrue("the driver sees the next member as primary", () -> client.getClusterDescription()
                    .getServerDescriptions().stream().anyMatch(d -> d.isPrimary() && d.getAddress().toString().equals(advertised(1))));
            client.getDatabase("test").getCollection("c").insertOne(new Document("_id", 1));
            assertEquals(1, set.node().documents("test", "c").size(), "a write after the stepdown goes to the new primary");
        }
    }

    /** A secondary refuses as mongod does, in its words; nothing moves and the real node never hears of it. */
    @Test
    void stepDownOnASimulatedSecondaryIsRefusedAsMongodRefusesIt() throws Exception {
        try (MongoClient secondary = MongoClients.create("mongodb://" + advertised(1) + "/?directConnection=true")) {
            MongoCommandException e = assertThrows(MongoCommandException.class, () -> secondary.getDatabase("admin")
                    .runCommand(new BsonDocument("replSetStepDown", new BsonInt32(10))));
            assertEquals(10107, e.getErrorCode());
            assertEquals("not primary so can't step down", e.getErrorMessage());
        }
        assertEquals(0, set.node().stepDowns().size());
        assertEquals(MemberState.Role.PRIMARY, set.proxy().memberState(set.proxy().members().get(0).upstream()).role());
    }

    private String advertised(int index) {
        return set.proxy().members().get(index).advertised().toString();
    }
}
