package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.ReadPreference;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;
import com.mongodb.connection.ServerDescription;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.ScriptedMongodFrame;
import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.topology.Member;
import io.blackpipe.topology.MemberAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What a real replica set says of its members besides hello, read through the proxy with the real
 * driver: replSetGetStatus (rs.status()), replSetGetConfig (rs.conf()), serverStatus's repl section
 * and the stored configuration in local.system.replset name every member by the proxy's address, the
 * one its hello gives, so a tool reading them dials the proxy too. Three scripted members (a primary
 * and two secondaries naming each other by their real addresses, as mongod 7.0 shapes these replies)
 * and a hidden fourth that hello never lists: jongodb answers none of these commands.
 */
class RealSetViewsTest {
    private ScriptedMongod a;
    private ScriptedMongod b;
    private ScriptedMongod c;
    private ScriptedMongod hidden;
    private List<ScriptedMongod> set;
    private ProxyServer proxy;

    @BeforeEach
    void start() throws Exception {
        a = ScriptedMongod.start();
        b = ScriptedMongod.builder().secondary().primary(a.address()).start();
        c = ScriptedMongod.builder().secondary().primary(a.address()).start();
        hidden = ScriptedMongod.builder().secondary().primary(a.address()).start();
        set = List.of(a, b, c);
        List<String> hosts = List.of(a.address(), b.address(), c.address());
        for (ScriptedMongod member : List.of(a, b, c, hidden)) {
            member.setAdvertisedHosts(hosts);
            member.setHiddenHosts(List.of(hidden.address()));
        }
        proxy = ProxyServer.start(ProxyConfig.embedded("mongodb://" + a.address() + "/?replicaSet=" + ScriptedMongod.SET_NAME));
    }

    @AfterEach
    void stop() {
        proxy.close();
        for (ScriptedMongod member : List.of(a, b, c, hidden)) {
            member.close();
        }
    }

    /**
     * Asked of each member directly and of the set (the primary, and a secondary by read
     * preference): every address in each reply is the proxy's, the members are hello's hosts (and
     * the hidden member, which gets its own listener as a member first seen in a hello does), the
     * member marked self is hello's me, the primary is hello's primary and a secondary syncs from it.
     */
    @Test
    void everyReplyNamesTheMembersByTheProxysAddressesAsHelloDoes() throws Exception {
        seedStoredConfigs();
        assertEquals(3, proxy.members().size(), "hello names three members; the hidden one is not fronted yet");
        for (ScriptedMongod member : set) {
            try (MongoClient direct = MongoClients.create("mongodb://" + advertised(member) + "/?directConnection=true")) {
                assertEveryViewNamesTheProxy(direct.getDatabase("admin"), direct.getDatabase("local"), member, ReadPreference.primary());
            }
        }
        assertEquals(4, proxy.members().size(), "the hidden member got a listener: " + proxy.members());
        try (MongoClient hiddenMember = MongoClients.create("mongodb://" + advertised(hidden) + "/?directConnection=true")) {
            hiddenMember.getDatabase("admin").runCommand(command("ping"));
            assertEquals(1, hidden.commandsReceived("ping").size(), "the hidden member's listener reaches it");
        }

        try (MongoClient client = setClient()) {
            awaitPrimaryAndSecondaries(client);
            assertEveryViewNamesTheProxy(client.getDatabase("admin"), client.getDatabase("local"), a, ReadPreference.primary());
            // a secondary picked by read preference: each command may go to either, so each reply is checked on its own
            List<String> members = List.of(advertised(a), advertised(b), advertised(c), advertised(hidden));
            for (String name : List.of("replSetGetStatus", "replSetGetConfig")) {
                BsonDocument reply = client.getDatabase("admin").runCommand(command(name), ReadPreference.secondary(), BsonDocument.class);
                assertNoRealAddress(reply, "a secondary's " + name);
                assertEquals(members, name.equals("replSetGetStatus") ? names(reply.getArray("members"), "name")
                        : names(reply.getDocument("config").getArray("members"), "host"), "a secondary's " + name);
            }
        }
        for (ScriptedMongod member : List.of(a, b, c, hidden)) {
            assertEquals(List.of(), member.errors());
        }
    }

    /**
     * rs.reconfig(rs.conf()) and rs.add through the proxy: the config read names the proxy's addresses,
     * and the one sent back reaches the member naming theirs, so the set never replicates through the
     * proxy; a host the proxy does not advertise (one being added) goes as written.
     */
    @Test
    void aConfigurationSentBackThroughTheProxyReachesTheMemberNamingTheRealAddresses() throws Exception {
        try (MongoClient client = setClient()) {
            awaitPrimaryAndSecondaries(client);
            MongoDatabase admin = client.getDatabase("admin");
            BsonDocument config = admin.runCommand(command("replSetGetConfig"), BsonDocument.class).getDocument("config");
            assertNoRealAddress(config, "rs.conf()");
            config.getArray("members").add(new BsonDocument("_id", new BsonInt32(9)).append("host", new BsonString("newhost:27017")));
            config.put("version", new BsonInt32(config.getNumber("version").intValue() + 1));
            try {
                admin.runCommand(new BsonDocument("replSetReconfig", config));
            } catch (com.mongodb.MongoCommandException scriptedMembersDoNotReconfigure) {
                // what the member answers is not the point: what it was sent is
            }
        }
        List<ScriptedMongodFrame> sent = a.commandsReceived("replSetReconfig");
        assertEquals(1, sent.size(), "the primary got the reconfig: " + sent);
        BsonDocument received = sent.get(0).document().getDocument("replSetReconfig");
        assertEquals(List.of(a.address(), b.address(), c.address(), hidden.address(), "newhost:27017"),
                names(received.getArray("members"), "host"));
        String json = sent.get(0).document().toJson();
        for (Member member : proxy.members()) {
            assertFalse(json.contains(member.advertised().toString()), "the member was sent the proxy's address: " + json);
        }
    }

    /** The hello and the four other replies {@code member} gives, read with {@code read} (which must pick it). */
    private void assertEveryViewNamesTheProxy(MongoDatabase admin, MongoDatabase local, ScriptedMongod member, ReadPreference read) {
        String what = "member " + member.address() + " (" + advertised(member) + ")";
        BsonDocument hello = admin.runCommand(command("hello"), read, BsonDocument.class);
        assertEquals(advertised(member), hello.getString("me").getValue(), what);
        BsonDocument status = admin.runCommand(command("replSetGetStatus"), read, BsonDocument.class);
        BsonDocument self = entries(status.getArray("members")).stream().filter(m -> m.containsKey("self")).findFirst().orElseThrow();
        assertEquals(hello.getString("me"), self.getString("name"), what + ": replSetGetStatus's self is hello's me");

        List<String> members = new ArrayList<>(strings(hello.getArray("hosts")));
        members.add(advertised(hidden));
        assertEquals(List.of(advertised(a), advertised(b), advertised(c), advertised(hidden)), members, what + ": hello's hosts");
        String primary = hello.getString("primary").getValue();
        assertEquals(advertised(a), primary, what);

        // replSetGetStatus: the members, the primary, every sync source
        assertNoRealAddress(status, what + " replSetGetStatus");
        assertEquals(members, names(status.getArray("members"), "name"), what + " replSetGetStatus members");
        for (BsonDocument entry : entries(status.getArray("members"))) {
            boolean isPrimary = entry.getString("stateStr").getValue().equals("PRIMARY");
            assertEquals(isPrimary, entry.getString("name").getValue().equals(primary), what + " " + entry.toJson());
            assertEquals(isPrimary ? "" : primary, entry.getString("syncSourceHost").getValue(), what + " " + entry.toJson());
        }
        assertEquals(member == a ? "" : primary, status.getString("syncSourceHost").getValue(), what + " syncSourceHost");

        // replSetGetConfig and the stored configuration
        BsonDocument config = admin.runCommand(command("replSetGetConfig"), read, BsonDocument.class).getDocument("config");
        assertNoRealAddress(config, what + " replSetGetConfig");
        assertEquals(members, names(config.getArray("members"), "host"), what + " replSetGetConfig members");
        BsonDocument first = local.runCommand(new BsonDocument("find", new BsonString("system.replset")).append("batchSize",
                new BsonInt32(0)), read, BsonDocument.class);
        assertEquals(0, first.getDocument("cursor").getArray("firstBatch").size());
        BsonDocument next = local.runCommand(new BsonDocument("getMore", first.getDocument("cursor").get("id"))
                .append("collection", new BsonString("system.replset")), read, BsonDocument.class);
        assertEquals(List.of(config), entries(next.getDocument("cursor").getArray("nextBatch")),
                what + " local.system.replset by getMore is replSetGetConfig's config");
        assertEquals(config, local.getCollection("system.replset", BsonDocument.class).withReadPreference(read).find().first(),
                what + " local.system.replset by find is replSetGetConfig's config");

        // serverStatus's repl section, and its replicationProgress (repl: 1)
        BsonDocument repl = admin.runCommand(command("serverStatus"), read, BsonDocument.class).getDocument("repl");
        assertNoRealAddress(repl, what + " serverStatus.repl");
        for (String field : List.of("hosts", "primary", "me", "setName")) {
            assertEquals(hello.get(field), repl.get(field), what + " serverStatus.repl " + field + " is hello's");
        }
        BsonDocument progress = admin.runCommand(command("serverStatus").append("repl", new BsonInt32(1)), read, BsonDocument.class)
                .getDocument("repl");
        assertNoRealAddress(progress, what + " serverStatus.repl with repl: 1");
        assertEquals(members, names(progress.getArray("replicationProgress"), "host"), what + " replicationProgress");
    }

    /**
     * A reply the rewriting has nothing to change in passes byte for byte, as the member sent it:
     * a serverStatus without its repl section, an empty read of local.system.replset, an error and
     * an ordinary command's reply. The same connection's replSetGetStatus, by contrast, is rewritten.
     */
    @Test
    void aReplyWithNothingToRewritePassesByteForByte() throws Exception {
        int requestId = 900_000; // far from the ids of the proxy's own hellos to the member
        try (RawClient raw = RawClient.connect(member(a).advertised())) {
            for (BsonDocument untouched : List.of(
                    command("serverStatus").append("repl", new BsonInt32(0)).append("$db", new BsonString("admin")),
                    new BsonDocument("find", new BsonString("system.replset")).append("filter",
                            new BsonDocument("_id", new BsonString("no such set"))).append("$db", new BsonString("local")),
                    command("replSetGetStatus").append("$db", new BsonString("test")), // Unauthorized: admin only
                    command("ping").append("$db", new BsonString("admin")))) {
                byte[] reply = raw.roundTrip(ScriptedMongodWire.buildOpMsg(++requestId, 0, 0, untouched, null));
                assertArrayEquals(sentBy(a, requestId), reply, untouched.toJson() + " passes as the member sent it");
            }

            byte[] rewritten = raw.roundTrip(ScriptedMongodWire.buildOpMsg(++requestId, 0, 0,
                    command("replSetGetStatus").append("$db", new BsonString("admin")), null));
            assertFalse(Arrays.equals(sentBy(a, requestId), rewritten), "replSetGetStatus is rewritten");
            BsonDocument status = ScriptedMongodWire.parseOpMsg(rewritten).body();
            assertEquals(advertised(a), status.getArray("members").get(0).asDocument().getString("name").getValue());

        }
        assertEquals(List.of(), a.errors());
    }

    /** The stored configuration each member holds in local.system.replset: what it answers replSetGetConfig with, as it is. */
    private void seedStoredConfigs() {
        for (ScriptedMongod member : List.of(a, b, c)) {
            try (MongoClient real = MongoClients.create(member.uri())) {
                BsonDocument config = real.getDatabase("admin").runCommand(command("replSetGetConfig"), BsonDocument.class)
                        .getDocument("config");
                assertEquals(List.of(a.address(), b.address(), c.address(), hidden.address()), names(config.getArray("members"), "host"),
                        "the real config names the real addresses");
                member.insertDocuments("local", "system.replset", List.of(config));
            }
        }
    }

    /** The real (upstream) addresses of every member; none may show in a reply through the proxy. */
    private void assertNoRealAddress(BsonDocument reply, String what) {
        String json = reply.toJson();
        for (ScriptedMongod member : List.of(a, b, c, hidden)) {
            assertFalse(json.contains(member.address()), what + " names " + member.address() + ": " + json);
        }
    }

    /** The bytes {@code server} sent in reply to request {@code requestId}. */
    private static byte[] sentBy(ScriptedMongod server, int requestId) {
        List<ScriptedMongodFrame> replies = server.framesSent(f -> f.responseTo() == requestId);
        assertEquals(1, replies.size(), "one reply to request " + requestId + ": " + replies);
        return replies.get(0).raw();
    }

    private Member member(ScriptedMongod server) {
        Member member = proxy.members().stream()
                .filter(m -> m.upstream().equals(MemberAddress.parse(server.address()))).findFirst().orElse(null);
        assertNotNull(member, "the proxy fronts " + server.address() + ": " + proxy.members());
        return member;
    }

    private String advertised(ScriptedMongod server) {
        return member(server).advertised().toString();
    }

    private MongoClient setClient() {
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(proxy.connectionString() + "&heartbeatFrequencyMS=500"))
                .applyToClusterSettings(s -> s.serverSelectionTimeout(10, TimeUnit.SECONDS)).build());
    }

    private static void awaitPrimaryAndSecondaries(MongoClient client) throws InterruptedException {
        ScriptedProxy.awaitTrue("the driver knows the primary and both secondaries", () -> {
            List<ServerDescription> servers = client.getClusterDescription().getServerDescriptions();
            return servers.stream().filter(ServerDescription::isPrimary).count() == 1
                    && servers.stream().filter(ServerDescription::isSecondary).count() == 2;
        });
    }

    private static BsonDocument command(String name) {
        return new BsonDocument(name, new BsonInt32(1));
    }

    private static List<BsonDocument> entries(BsonArray array) {
        return array.stream().map(BsonValue::asDocument).toList();
    }

    private static List<String> names(BsonArray array, String field) {
        return entries(array).stream().map(d -> d.getString(field).getValue()).toList();
    }

    private static List<String> strings(BsonArray array) {
        return array.stream().map(v -> v.asString().getValue()).toList();
    }
}
