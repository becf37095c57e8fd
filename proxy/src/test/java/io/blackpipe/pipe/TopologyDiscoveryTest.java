package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.ReadPreference;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.connection.ClusterType;
import com.mongodb.connection.ServerDescription;
import com.mongodb.connection.ServerType;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.BindRetry;
import io.blackpipe.testing.HeldPort;
import io.blackpipe.testing.HeldPorts;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.ScriptedMongodFrame;
import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.topology.Member;
import io.blackpipe.topology.MemberAddress;
import io.blackpipe.topology.UpstreamUri;
import io.blackpipe.wire.BlockingCommandClient;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * Members and their listeners: a member that appears later gets a listener on the fly and the
 * driver finds it through the proxy; ports follow the base port, pins win, and a member keeps
 * its port; a standalone gets one listener and an untouched hello.
 */
class TopologyDiscoveryTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(20);

    private static String rsUri(ScriptedMongod member) {
        return "mongodb://" + member.address() + "/?replicaSet=" + ScriptedMongod.SET_NAME;
    }

    private static Set<String> advertised(ProxyServer proxy) {
        return proxy.members().stream().map(m -> m.advertised().toString()).collect(Collectors.toSet());
    }

    private static Member member(ProxyServer proxy, ScriptedMongod upstream) {
        Member member = proxy.members().stream()
                .filter(m -> m.upstream().equals(MemberAddress.parse(upstream.address()))).findFirst().orElse(null);
        assertNotNull(member, "the proxy has no member for " + upstream.address() + ": " + proxy.members());
        return member;
    }

    private static BsonDocument helloThrough(MemberAddress listener) throws IOException {
        try (BlockingCommandClient client = new BlockingCommandClient(listener.host(), listener.port(), 5000)) {
            return client.run("admin", new BsonDocument("hello", new BsonInt32(1)));
        }
    }

    private static List<String> strings(BsonValue array) {
        List<String> out = new ArrayList<>();
        for (BsonValue v : array.asArray()) {
            out.add(v.asString().getValue());
        }
        return out;
    }

    /** A secondary that names {@code primary} as its primary and advertises {@code primary} and itself. */
    private static ScriptedMongod secondaryOf(ScriptedMongod primary) throws IOException {
        ScriptedMongod secondary = ScriptedMongod.builder().secondary().primary(primary.address()).start();
        secondary.setAdvertisedHosts(List.of(primary.address(), secondary.address()));
        return secondary;
    }

    private static ProxyConfig withPorts(ScriptedMongod seed, int basePort, Map<MemberAddress, Integer> pins) {
        return new ProxyConfig(UpstreamUri.parse(rsUri(seed)), "127.0.0.1", basePort, "127.0.0.1", "127.0.0.1", -1, pins, 5000);
    }

    // ------------------------------------------------------------------ a member appears later

    @Test
    void aMemberThatAppearsLaterGetsAListenerAndTheDriverFindsItThroughTheProxy() throws Exception {
        try (ScriptedMongod a = ScriptedMongod.start(); ScriptedMongod b = secondaryOf(a);
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(rsUri(a)))) {
            assertEquals(1, proxy.members().size(), "A advertises only itself at start");
            assertEquals(0, b.connectionsAccepted(), "nobody knows B yet");

            try (MongoClient client = MongoClients.create(MongoClientSettings.builder()
                    .applyConnectionString(new ConnectionString(proxy.connectionString()))
                    .applyToClusterSettings(s -> s.serverSelectionTimeout(10, TimeUnit.SECONDS))
                    .build())) {
                client.getDatabase("admin").runCommand(new Document("ping", 1));
                assertEquals(1, client.getClusterDescription().getServerDescriptions().size());

                a.setAdvertisedHosts(List.of(a.address(), b.address()));
                a.bumpTopologyVersion(); // wakes the driver's streaming hello on A

                Await.until(TIMEOUT, () -> "the driver to see B through the proxy: " + client.getClusterDescription().getShortDescription(),
                        () -> {
                            List<ServerDescription> servers = client.getClusterDescription().getServerDescriptions();
                            return servers.size() == 2 && servers.stream().anyMatch(s -> s.getType() == ServerType.REPLICA_SET_SECONDARY)
                                    && servers.stream().anyMatch(s -> s.getType() == ServerType.REPLICA_SET_PRIMARY);
                        });
                List<Member> members = proxy.members();
                assertEquals(2, members.size());
                assertEquals(2, members.stream().map(m -> m.advertised().port()).distinct().count(), "one port per member");
                Member memberB = member(proxy, b);
                assertEquals("mongodb://" + member(proxy, a).advertised() + "," + memberB.advertised() + "/?replicaSet="
                        + ScriptedMongod.SET_NAME, proxy.connectionString(), "the connection string lists the new member");
                Set<String> seen = client.getClusterDescription().getServerDescriptions().stream()
                        .map(s -> s.getAddress().toString()).collect(Collectors.toSet());
                assertEquals(advertised(proxy), seen, "the driver knows both members only by their proxy addresses");
                ServerDescription secondary = client.getClusterDescription().getServerDescriptions().stream()
                        .filter(s -> s.getType() == ServerType.REPLICA_SET_SECONDARY).findFirst().orElseThrow();
                assertEquals(memberB.advertised().toString(), secondary.getAddress().toString());
                assertEquals(Set.copyOf(advertised(proxy)), Set.copyOf(secondary.getHosts()), "B's hello is rewritten too");
                assertEquals(member(proxy, a).advertised().toString(), secondary.getPrimary());

                // A read that must go to B travels through B's listener to B.
                b.insertDocuments("topo", "c", List.of(new BsonDocument("_id", new BsonString("only-on-b"))));
                Document found = client.getDatabase("topo").getCollection("c")
                        .withReadPreference(ReadPreference.secondary()).find().first();
                assertNotNull(found);
                assertEquals("only-on-b", found.getString("_id"));
                assertFalse(b.commandsReceived("find").isEmpty(), "B served the secondary read");
                assertTrue(a.commandsReceived("find").isEmpty(), "A did not");
            }

            // And a client dialling B's listener directly reaches B.
            Member memberB = member(proxy, b);
            try (MongoClient direct = MongoClients.create("mongodb://" + memberB.advertised() + "/?directConnection=true")) {
                int pingsBefore = b.commandsReceived("ping").size();
                direct.getDatabase("admin").runCommand(new Document("ping", 1));
                assertEquals(pingsBefore + 1, b.commandsReceived("ping").size());
            }
            assertEquals(List.of(), a.errors());
            assertEquals(List.of(), b.errors());
        }
    }

    // ------------------------------------------------------------------ ports

    /**
     * The ports by number are held from the moment they are found (a port found free and let go could be given to
     * another process before the proxy binds it), each let go just before the proxy binds it: at its start, or before
     * the hello that names a new member. A port taken in that moment fails the start: the whole case is run again.
     */
    @Test
    void membersGetTheBasePortThenTheNextAndKeepThem() throws Exception {
        BindRetry.upTo(3, TopologyDiscoveryTest::membersTakeTheBasePortThenTheNext);
    }

    private static void membersTakeTheBasePortThenTheNext() throws Exception {
        try (HeldPorts ports = HeldPorts.consecutive(3);
             ScriptedMongod a = ScriptedMongod.start(); ScriptedMongod b = secondaryOf(a); ScriptedMongod c = secondaryOf(a)) {
            int base = ports.first();
            ports.letGo(base);
            try (ProxyServer proxy = ProxyServer.start(withPorts(a, base, Map.of()))) {
                MemberAddress listenerA = new MemberAddress("127.0.0.1", base);
                assertEquals(listenerA, member(proxy, a).advertised());
                assertEquals("mongodb://127.0.0.1:" + base + "/?replicaSet=" + ScriptedMongod.SET_NAME, proxy.connectionString());

                ports.letGo(base + 1); // B's, before any hello names B
                a.setAdvertisedHosts(List.of(a.address(), b.address()));
                BsonDocument hello = helloThrough(listenerA);
                assertEquals(List.of("127.0.0.1:" + base, "127.0.0.1:" + (base + 1)), strings(hello.get("hosts")));
                assertEquals(new MemberAddress("127.0.0.1", base + 1), member(proxy, b).advertised());
                assertEquals("127.0.0.1:" + (base + 1), helloThrough(new MemberAddress("127.0.0.1", base + 1)).getString("me").getValue(),
                        "B's listener on base+1 reaches B");

                // B leaves the config and comes back, listed first: it keeps base+1; a third member gets base+2.
                a.setAdvertisedHosts(List.of(a.address()));
                assertEquals(List.of("127.0.0.1:" + base), strings(helloThrough(listenerA).get("hosts")));
                ports.letGo(base + 2); // C's
                a.setAdvertisedHosts(List.of(c.address(), b.address(), a.address()));
                assertEquals(List.of("127.0.0.1:" + (base + 2), "127.0.0.1:" + (base + 1), "127.0.0.1:" + base),
                        strings(helloThrough(listenerA).get("hosts")));
                assertEquals(3, proxy.members().size());
                assertEquals(new MemberAddress("127.0.0.1", base), member(proxy, a).advertised());
                assertEquals(new MemberAddress("127.0.0.1", base + 1), member(proxy, b).advertised());
                assertEquals(new MemberAddress("127.0.0.1", base + 2), member(proxy, c).advertised());
            }
        }
    }

    /** Ports held as in {@link #membersGetTheBasePortThenTheNextAndKeepThem}; the base stays held while A must skip it. */
    @Test
    void aPinnedMemberGetsItsPortAndTheOthersSkipIt() throws Exception {
        BindRetry.upTo(3, TopologyDiscoveryTest::aPinnedMemberIsSkippedByTheOthers);
    }

    private static void aPinnedMemberIsSkippedByTheOthers() throws Exception {
        try (HeldPorts ports = HeldPorts.consecutive(3);
             ScriptedMongod a = ScriptedMongod.start(); ScriptedMongod b = secondaryOf(a); ScriptedMongod c = secondaryOf(a)) {
            int base = ports.first();
            // B is pinned to the base port itself: A, seen first, must skip it.
            Map<MemberAddress, Integer> pins = Map.of(MemberAddress.parse(b.address()), base);
            ports.letGo(base + 1); // A's
            try (ProxyServer proxy = ProxyServer.start(withPorts(a, base, pins))) {
                assertEquals(new MemberAddress("127.0.0.1", base + 1), member(proxy, a).advertised());
                ports.close(); // B's and C's, before the hello that names them
                a.setAdvertisedHosts(List.of(a.address(), b.address(), c.address()));
                assertEquals(List.of("127.0.0.1:" + (base + 1), "127.0.0.1:" + base, "127.0.0.1:" + (base + 2)),
                        strings(helloThrough(new MemberAddress("127.0.0.1", base + 1)).get("hosts")));
                assertEquals(new MemberAddress("127.0.0.1", base), member(proxy, b).advertised());
                assertEquals(new MemberAddress("127.0.0.1", base + 2), member(proxy, c).advertised());
                assertEquals("127.0.0.1:" + base, helloThrough(new MemberAddress("127.0.0.1", base)).getString("me").getValue());
            }
        }
    }

    /** The pinned port is picked while the base and the port after it are held: it is away from the base. */
    @Test
    void aPinnedPortAwayFromTheBaseIsUsedAsIs() throws Exception {
        BindRetry.upTo(3, TopologyDiscoveryTest::aPinnedPortAwayFromTheBase);
    }

    private static void aPinnedPortAwayFromTheBase() throws Exception {
        try (HeldPorts basePorts = HeldPorts.consecutive(2); HeldPort pinnedPort = HeldPort.any();
             ScriptedMongod a = ScriptedMongod.start(); ScriptedMongod b = secondaryOf(a)) {
            int base = basePorts.first();
            int pinned = pinnedPort.port();
            a.setAdvertisedHosts(List.of(a.address(), b.address())); // both known at start this time
            basePorts.close();
            pinnedPort.close();
            try (ProxyServer proxy = ProxyServer.start(withPorts(a, base, Map.of(MemberAddress.parse(b.address()), pinned)))) {
                assertEquals(new MemberAddress("127.0.0.1", base), member(proxy, a).advertised());
                assertEquals(new MemberAddress("127.0.0.1", pinned), member(proxy, b).advertised());
                assertEquals("mongodb://127.0.0.1:" + base + ",127.0.0.1:" + pinned + "/?replicaSet=" + ScriptedMongod.SET_NAME,
                        proxy.connectionString());
            }
        }
    }

    @Test
    void aPortThatCannotBeBoundFailsTheStartNamingIt() throws Exception {
        try (ScriptedMongod a = ScriptedMongod.start();
             ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> ProxyServer.start(withPorts(a, taken.getLocalPort(), Map.of())).close());
            assertTrue(e.getMessage().contains("port " + taken.getLocalPort()) && e.getMessage().contains(a.address()), e.getMessage());
        }
    }

    @Test
    void aBindHostThatDoesNotResolveFailsTheStartSayingSo() throws Exception {
        try (ScriptedMongod a = ScriptedMongod.start()) {
            ProxyConfig config = new ProxyConfig(UpstreamUri.parse(rsUri(a)), "999.1.1.1", 0, "127.0.0.1", "127.0.0.1", -1, Map.of(), 5000);
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> ProxyServer.start(config).close());
            assertTrue(e.getMessage().endsWith(a.address() + ": the bind host '999.1.1.1' is neither an IP address nor a host name"
                    + " that resolves"), e.getMessage());
        }
    }

    // ------------------------------------------------------------------ standalone

    @Test
    void aStandaloneGetsOneListenerAnUntouchedHelloAndNoReplicaSetOption() throws Exception {
        try (ScriptedMongod standalone = ScriptedMongod.builder().standalone().start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded("mongodb://" + standalone.address() + "/"))) {
            assertFalse(proxy.deployment().isReplicaSet());
            assertEquals("standalone", proxy.deployment().kind());
            assertEquals(1, proxy.members().size());
            Member member = proxy.members().get(0);
            assertEquals("mongodb://" + member.advertised() + "/", proxy.connectionString());
            assertFalse(proxy.connectionString().contains("replicaSet"));

            try (RawClient client = RawClient.connect(member.advertised())) {
                // OP_MSG hello
                byte[] reply = client.roundTrip(ScriptedMongodWire.buildOpMsg(5, 0, 0,
                        new BsonDocument("hello", new BsonInt32(1)).append("$db", new BsonString("admin")), null));
                BsonDocument body = ScriptedMongodWire.decodeDocument(reply, 21, ScriptedMongodWire.intLE(reply, 21));
                for (String field : List.of("me", "hosts", "setName", "primary")) {
                    assertFalse(body.containsKey(field), "a standalone's hello has no " + field + ": " + body);
                }
                assertArrayEquals(lastHelloSent(standalone, ScriptedMongodWire.OP_MSG), reply, "the hello reply passes byte for byte");

                // legacy OP_QUERY isMaster, answered by OP_REPLY
                byte[] legacy = client.roundTrip(ScriptedMongodWire.buildOpQuery(6, 0, "admin.$cmd", 0, -1,
                        new BsonDocument("isMaster", new BsonInt32(1)).append("helloOk", BsonBoolean.TRUE)));
                assertEquals(ScriptedMongodWire.OP_REPLY, ScriptedMongodWire.opCode(legacy));
                assertArrayEquals(lastHelloSent(standalone, ScriptedMongodWire.OP_REPLY), legacy, "the isMaster reply passes byte for byte");
            }

            try (MongoClient client = MongoClients.create(MongoClientSettings.builder()
                    .applyConnectionString(new ConnectionString(proxy.connectionString()))
                    .applyToClusterSettings(s -> s.serverSelectionTimeout(10, TimeUnit.SECONDS)).build())) {
                client.getDatabase("solo").getCollection("c").insertOne(new Document("_id", 1).append("v", "x"));
                assertEquals("x", client.getDatabase("solo").getCollection("c").find().first().getString("v"));
                assertEquals(ClusterType.STANDALONE, client.getClusterDescription().getType());
                ServerDescription server = client.getClusterDescription().getServerDescriptions().get(0);
                assertEquals(ServerType.STANDALONE, server.getType());
                assertEquals(member.advertised().toString(), server.getAddress().toString());
            }
            assertEquals(1, standalone.documents("solo", "c").size(), "the write reached the standalone");
            assertEquals(List.of(), standalone.errors());
        }
    }

    private static byte[] lastHelloSent(ScriptedMongod server, int opCode) {
        List<ScriptedMongodFrame> replies = server.framesSent(f -> f.opCode() == opCode
                && ("hello".equals(f.commandName()) || "isMaster".equals(f.commandName())));
        assertFalse(replies.isEmpty(), "the server answered a hello over opcode " + opCode);
        return replies.get(replies.size() - 1).raw();
    }
}
