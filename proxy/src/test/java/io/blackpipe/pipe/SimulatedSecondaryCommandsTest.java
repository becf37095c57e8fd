package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.ReadPreference;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.connection.ServerDescription;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.testing.WireSocket;
import io.blackpipe.topology.Member;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The commands a real secondary answers, asked of a simulated one. Three simulated members over
 * one scripted node: jongodb has neither replSetGetStatus nor currentOp.
 */
class SimulatedSecondaryCommandsTest {
    @RegisterExtension
    final SimulatedSetOverScriptedNode set = new SimulatedSetOverScriptedNode();

    /**
     * The real node calls itself PRIMARY in replSetGetStatus; each simulated member tells it as
     * hello does: the set hello lists, each member in the role the driver sees, itself marked self
     * with its own state, before and after a failover.
     */
    @Test
    void replSetGetStatusTellsEachMembersRoleAsItsHelloDoes() throws Exception {
        try (MongoClient direct = MongoClients.create(set.node().uri())) {
            assertEquals(1, status(direct, ReadPreference.primary()).getInt32("myState").getValue(), "the real node is primary");
        }
        try (MongoClient client = setClient()) {
            awaitSecondaries(client, 2);
            BsonDocument fromASecondary = status(client, ReadPreference.secondary());
            assertEquals(2, fromASecondary.getInt32("myState").getValue());
            assertEquals(rolesTheDriverSees(client), roles(fromASecondary));
            BsonDocument self = self(fromASecondary);
            assertEquals("SECONDARY", self.getString("stateStr").getValue());
            assertEquals(2, self.getInt32("state").getValue());
            assertEquals(advertised(0), fromASecondary.getString("syncSourceHost").getValue(), "a secondary syncs from the primary");
            assertEquals(ScriptedMongod.SET_NAME, fromASecondary.getString("set").getValue());

            BsonDocument fromThePrimary = status(client, ReadPreference.primary());
            assertEquals(1, fromThePrimary.getInt32("myState").getValue());
            assertEquals(advertised(0), self(fromThePrimary).getString("name").getValue());
            assertEquals("PRIMARY", self(fromThePrimary).getString("stateStr").getValue());
        }

        set.proxy().failover();
        for (int i = 0; i < 3; i++) {
            try (MongoClient member = MongoClients.create("mongodb://" + advertised(i) + "/?directConnection=true")) {
                BsonDocument status = status(member, ReadPreference.primaryPreferred());
                BsonDocument self = self(status);
                assertEquals(advertised(i), self.getString("name").getValue());
                assertEquals(i == 1 ? "PRIMARY" : "SECONDARY", self.getString("stateStr").getValue(), advertised(i));
                assertEquals(i == 1 ? 1 : 2, status.getInt32("myState").getValue(), advertised(i));
                assertEquals(i == 1 ? 1 : 2, self.getInt32("state").getValue(), advertised(i));
                assertEquals(advertised(1), status.getArray("members").get(1).asDocument().getString("name").getValue());
                assertEquals("PRIMARY", status.getArray("members").get(1).asDocument().getString("stateStr").getValue());
            }
        }
    }

    /**
     * Without any read preference (no secondaryOk): a secondary runs the commands the server
     * allows on any member (replSetGetStatus, currentOp) and commands on the local database, which
     * is never replicated; it still refuses reads elsewhere (13435) and writes (10107).
     */
    @Test
    void withoutSecondaryOkASecondaryAnswersWhatARealSecondaryAnswers() throws Exception {
        try (WireSocket raw = new WireSocket(set.proxy().members().get(1).advertised().port(), 1, (int) ScriptedProxy.WAIT.toMillis())) {
            assertEquals(2, command(raw, new BsonDocument("replSetGetStatus", new BsonInt32(1)), "admin").getInt32("myState").getValue());
            BsonDocument currentOp = command(raw, new BsonDocument("currentOp", new BsonInt32(1)), "admin");
            assertEquals(1.0, currentOp.getNumber("ok").doubleValue(), currentOp::toJson);
            assertEquals(1, currentOp.getArray("inprog").size());
            BsonDocument local = command(raw, new BsonDocument("find", new BsonString("startup_log")), "local");
            assertEquals(1.0, local.getNumber("ok").doubleValue(), local::toJson);

            assertEquals(13435, command(raw, new BsonDocument("find", new BsonString("c")), "test").getInt32("code").getValue());
            assertEquals(10107, command(raw, new BsonDocument("insert", new BsonString("c"))
                    .append("documents", new BsonArray(List.of(new BsonDocument("_id", new BsonInt32(1))))), "test")
                    .getInt32("code").getValue());
        }
        assertEquals(0, set.node().documents("test", "c").size(), "the refused insert never reached the node");
    }

    /**
     * A command the real node lacks (mongosh asks every member for atlasVersion at startup): mongod
     * looks the command up before it asks its role, so a secondary answers CommandNotFound, as the
     * primary (the node itself) does, not NotWritablePrimary. The node's commands come from its
     * listCommands; a name differing only in case is an alias of the node's (buildinfo).
     */
    @Test
    void aCommandTheNodeLacksIsCommandNotFoundOnASecondaryToo() throws Exception {
        for (int member : new int[] {1, 0}) {
            try (WireSocket raw = new WireSocket(set.proxy().members().get(member).advertised().port(), 1,
                    (int) ScriptedProxy.WAIT.toMillis())) {
                BsonDocument unknown = command(raw, new BsonDocument("atlasVersion", new BsonInt32(1)), "admin");
                assertEquals(59, unknown.getInt32("code").getValue(), unknown::toJson);
                assertEquals("CommandNotFound", unknown.getString("codeName").getValue());
                assertEquals("no such command: 'atlasVersion'", unknown.getString("errmsg").getValue());
            }
        }
        try (WireSocket raw = new WireSocket(set.proxy().members().get(1).advertised().port(), 1, (int) ScriptedProxy.WAIT.toMillis())) {
            // mongod's listCommands leaves its aliases out: one that differs from a listed name only in case is the node's
            BsonDocument alias = command(raw, new BsonDocument("buildinfo", new BsonInt32(1)), "admin");
            assertEquals(1.0, alias.getNumber("ok").doubleValue(), alias::toJson);
        }
    }

    private static BsonDocument command(WireSocket raw, BsonDocument command, String db) throws Exception {
        int id = raw.sendMsg(0, command.append("$db", new BsonString(db)));
        byte[] reply = raw.read();
        assertEquals(id, ScriptedMongodWire.responseTo(reply));
        return ScriptedMongodWire.parseOpMsg(reply).body();
    }

    private MongoClient setClient() {
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(set.proxy().connectionString() + "&heartbeatFrequencyMS=500"))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(10, TimeUnit.SECONDS)).build());
    }

    private static BsonDocument status(MongoClient client, ReadPreference readPreference) {
        return client.getDatabase("admin").runCommand(new BsonDocument("replSetGetStatus", new BsonInt32(1)), readPreference,
                BsonDocument.class);
    }

    private static BsonDocument self(BsonDocument status) {
        List<BsonDocument> selves = status.getArray("members").stream().map(BsonValue::asDocument)
                .filter(m -> m.getBoolean("self", BsonBoolean.FALSE).getValue()).toList();
        assertEquals(1, selves.size(), status::toJson);
        return selves.get(0);
    }

    /** Member name -> stateStr, as replSetGetStatus lists them. */
    private static Map<String, String> roles(BsonDocument status) {
        return status.getArray("members").stream().map(BsonValue::asDocument)
                .collect(Collectors.toMap(m -> m.getString("name").getValue(), m -> m.getString("stateStr").getValue()));
    }

    /** Member address -> PRIMARY or SECONDARY, as the driver learnt them from hello. */
    private static Map<String, String> rolesTheDriverSees(MongoClient client) {
        return client.getClusterDescription().getServerDescriptions().stream().collect(Collectors.toMap(
                d -> d.getAddress().toString(), d -> d.isPrimary() ? "PRIMARY" : d.isSecondary() ? "SECONDARY" : d.getType().name()));
    }

    private static void awaitSecondaries(MongoClient client, int count) throws InterruptedException {
        ScriptedProxy.awaitTrue("the driver has heard from " + count + " secondaries", () -> client.getClusterDescription()
                .getServerDescriptions().stream().filter(ServerDescription::isSecondary).count() == count);
    }

    private String advertised(int index) {
        Member member = set.proxy().members().get(index);
        return member.advertised().toString();
    }
}
