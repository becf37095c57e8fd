package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;
import com.mongodb.connection.ServerDescription;
import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.testing.WireSocket;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonValue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Every way a monitoring tool asks a member about its role and its set, asked of each simulated
 * member: the answers agree with the member's hello and with what the driver's discovery saw, not
 * with the one real node behind them. Three simulated members over one scripted node: jongodb has
 * neither serverStatus nor replSetGetConfig.
 */
class SimulatedMemberViewsTest {
    @RegisterExtension
    final SimulatedSetOverScriptedNode set = new SimulatedSetOverScriptedNode();

    /**
     * hello (with helloOk), isMaster and ismaster over OP_MSG (db.isMaster()), isMaster over
     * OP_QUERY (bare and in a $query wrapper, as legacy shells send it), serverStatus's repl
     * section, replSetGetConfig and the stored configuration in local.system.replset: each member,
     * before and after a failover, names the simulated members and its own simulated role.
     */
    @Test
    void everyMemberTellsItsSimulatedRoleAndSetHoweverItIsAsked() throws Exception {
        BsonDocument realConfig;
        try (MongoClient direct = MongoClients.create(set.node().uri())) {
            MongoDatabase admin = direct.getDatabase("admin");
            BsonDocument repl = admin.runCommand(command("serverStatus"), BsonDocument.class).getDocument("repl");
            assertEquals(set.node().address(), repl.getString("me").getValue(), "the real node names itself");
            assertEquals(true, repl.getBoolean("isWritablePrimary").getValue(), "the real node is primary");
            realConfig = admin.runCommand(command("replSetGetConfig"), BsonDocument.class).getDocument("config");
            assertEquals(List.of(set.node().address()), configHosts(realConfig));
        }
        set.node().insertDocuments("local", "system.replset", List.of(realConfig));

        long[] counters = new long[3];
        try (MongoClient client = setClient()) {
            awaitSecondaries(client, 2);
            for (int i = 0; i < 3; i++) {
                assertEquals(i == 0, isPrimaryToTheDriver(client, i), advertised(i));
                counters[i] = assertEveryViewAgrees(i, 0);
            }
        }
        set.proxy().failover();
        for (int i = 0; i < 3; i++) {
            // every member's state changed: a driver compares counters to know which word is newer
            assertEquals(counters[i] + 1, assertEveryViewAgrees(i, 1), advertised(i) + "'s topologyVersion moved on");
        }
    }

    /** Returns the member's topologyVersion counter, which every view gives as hello does. */
    private long assertEveryViewAgrees(int index, int primaryIndex) throws Exception {
        String me = advertised(index);
        boolean primary = index == primaryIndex;
        BsonDocument hello;
        try (MongoClient member = MongoClients.create("mongodb://" + me + "/?directConnection=true")) {
            MongoDatabase admin = member.getDatabase("admin");
            hello = admin.runCommand(command("hello").append("helloOk", BsonBoolean.TRUE), BsonDocument.class);
            assertEquals(me, hello.getString("me").getValue());
            assertEquals(advertised(primaryIndex), hello.getString("primary").getValue());
            assertEquals(allAdvertised(), strings(hello.getArray("hosts")));
            assertRole(primary, "isWritablePrimary", hello, me + " hello");

            for (String legacy : List.of("isMaster", "ismaster")) {
                BsonDocument reply = admin.runCommand(command(legacy), BsonDocument.class);
                assertRole(primary, "ismaster", reply, me + " " + legacy);
                assertSameSet(hello, reply, me + " " + legacy);
            }

            BsonDocument repl = admin.runCommand(command("serverStatus"), BsonDocument.class).getDocument("repl");
            assertRole(primary, "isWritablePrimary", repl, me + " serverStatus.repl");
            assertSameSet(hello, repl, me + " serverStatus.repl");
            assertEquals(hello.get("electionId"), repl.get("electionId"), me + " serverStatus.repl electionId");

            BsonDocument config = admin.runCommand(command("replSetGetConfig"), BsonDocument.class).getDocument("config");
            assertEquals(allAdvertised(), configHosts(config), me + " replSetGetConfig");
            assertEquals(hello.get("setName"), config.get("_id"));
            assertEquals(hello.get("setVersion"), config.get("version"));
            BsonDocument stored = member.getDatabase("local").getCollection("system.replset", BsonDocument.class).find().first();
            assertEquals(config, stored, me + " local.system.replset is the config replSetGetConfig gives");
        }
        int port = set.proxy().members().get(index).advertised().port();
        try (WireSocket raw = new WireSocket(port, 1, (int) ScriptedProxy.WAIT.toMillis())) {
            int requestId = 7;
            for (BsonDocument query : List.of(command("isMaster"), new BsonDocument("$query", command("isMaster")))) {
                raw.sendRaw(ScriptedMongodWire.buildOpQuery(++requestId, 0, "admin.$cmd", 0, -1, query));
                byte[] reply = raw.read();
                assertEquals(requestId, ScriptedMongodWire.responseTo(reply));
                BsonDocument legacy = ScriptedMongodWire.parseOpReply(reply).documents().get(0);
                assertRole(primary, "ismaster", legacy, me + " OP_QUERY " + query.toJson());
                assertEquals(me, legacy.getString("me").getValue());
                assertEquals(advertised(primaryIndex), legacy.getString("primary").getValue());
                assertEquals(allAdvertised(), strings(legacy.getArray("hosts")));
                assertEquals(hello.get("topologyVersion"), legacy.get("topologyVersion"), me + " OP_QUERY topologyVersion");
            }
        }
        return hello.getDocument("topologyVersion").getNumber("counter").longValue();
    }

    private static void assertRole(boolean primary, String writableField, BsonDocument reply, String what) {
        assertEquals(primary, reply.getBoolean(writableField).getValue(), what + ": " + writableField);
        assertEquals(!primary, reply.getBoolean("secondary").getValue(), what + ": secondary");
    }

    /** The fields that name the set and the member, and its topologyVersion, as hello gives them. */
    private static void assertSameSet(BsonDocument hello, BsonDocument other, String what) {
        for (String field : List.of("setName", "setVersion", "hosts", "primary", "me", "topologyVersion")) {
            assertEquals(hello.get(field), other.get(field), what + ": " + field);
        }
    }

    private static BsonDocument command(String name) {
        return new BsonDocument(name, new BsonInt32(1));
    }

    private static List<String> configHosts(BsonDocument config) {
        return config.getArray("members").stream().map(m -> m.asDocument().getString("host").getValue()).toList();
    }

    private static List<String> strings(BsonArray array) {
        return array.stream().map(BsonValue::asString).map(s -> s.getValue()).toList();
    }

    private List<String> allAdvertised() {
        return set.proxy().members().stream().map(m -> m.advertised().toString()).collect(Collectors.toList());
    }

    private String advertised(int index) {
        return set.proxy().members().get(index).advertised().toString();
    }

    private boolean isPrimaryToTheDriver(MongoClient client, int index) {
        return client.getClusterDescription().getServerDescriptions().stream()
                .filter(d -> d.getAddress().toString().equals(advertised(index))).anyMatch(ServerDescription::isPrimary);
    }

    private MongoClient setClient() {
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(set.proxy().connectionString() + "&heartbeatFrequencyMS=500"))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(10, TimeUnit.SECONDS)).build());
    }

    private static void awaitSecondaries(MongoClient client, int count) throws InterruptedException {
        ScriptedProxy.awaitTrue("the driver has heard from " + count + " secondaries", () -> client.getClusterDescription()
                .getServerDescriptions().stream().filter(ServerDescription::isSecondary).count() == count);
    }
}
