package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.blackpipe.admin.AdminServer;
import io.blackpipe.testing.CommandLog;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.topology.UpstreamUri;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.Document;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Listeners on IPv6 loopback, the bind host spelt as users spell it: "[::1]" (as in a URI) was advertised "[[::1]]", a
 * connection string and hello hosts no driver could dial, and the wildcard "::" advertised 127.0.0.1, which an
 * IPv6-only host does not have. The real driver, with replicaSet=, follows the hosts the rewritten hellos name.
 */
class Ipv6ListenerDriverTest {

    @BeforeAll
    static void thisHostHasIpv6Loopback() throws IOException {
        try (ServerSocket probe = new ServerSocket()) {
            probe.bind(new InetSocketAddress(InetAddress.getByName("::1"), 0));
        } catch (IOException e) {
            assumeTrue(false, "this host has no IPv6 loopback (::1): " + e.getMessage());
        }
    }

    @ParameterizedTest(name = "--host {0}")
    @CsvSource({"[::1]", "::1", "::", "0:0:0:0:0:0:0:1"})
    void aDriverFollowsTheAdvertisedIpv6Address(String bindHost) {
        String db = UpstreamLane.freshDatabaseName("ipv6");
        ProxyConfig config = new ProxyConfig(UpstreamUri.parse(UpstreamLane.uri()), bindHost, 0, null, "127.0.0.1", -1, Map.of(), 5000);
        try (ProxyServer proxy = ProxyServer.start(config);
             MongoClient client = MongoClients.create(CommandLog.withOptions(proxy.connectionString(), "serverSelectionTimeoutMS=5000"));
             MongoClient direct = UpstreamLane.directClient()) {
            assertTrue(proxy.connectionString().startsWith("mongodb://[::1]:"), proxy::connectionString);
            BsonArray hosts = client.getDatabase("admin").runCommand(new Document("hello", 1)).toBsonDocument().getArray("hosts");
            assertTrue(hosts.stream().map(BsonValue::asString).allMatch(h -> h.getValue().matches("\\[::1]:\\d+")), hosts::toString);

            client.getDatabase(db).getCollection("orders").insertOne(new Document("_id", "A1").append("sku", "B2"));
            assertEquals(List.of(new Document("_id", "A1").append("sku", "B2")),
                    direct.getDatabase(db).getCollection("orders").find().into(new java.util.ArrayList<>()), "the server holds the insert");
        }
    }

    /** A member named in another spelling of its address ("[0:0:0:0:0:0:0:1]:port", as Java prints it) is that member, for a rule too. */
    @Test
    void aMemberIsNamedByItsAddressInAnySpelling() {
        String db = UpstreamLane.freshDatabaseName("ipv6-spelling");
        ProxyConfig config = new ProxyConfig(UpstreamUri.parse(UpstreamLane.uri()), "::1", 0, null, "127.0.0.1", -1, Map.of(), 5000);
        try (ProxyServer proxy = ProxyServer.start(config);
             MongoClient client = MongoClients.create(CommandLog.withOptions(proxy.connectionString(), "retryWrites=true"));
             MongoClient direct = UpstreamLane.directClient()) {
            MemberListener primary = proxy.select("primary").get(0);
            String longForm = "[0:0:0:0:0:0:0:1]:" + primary.member().advertised().port();
            assertEquals(List.of(primary), proxy.select(longForm));
            proxy.rules().put(proxy.ruleParser().parse("reset", BsonDocument.parse("{configureFailPoint: 'failCommand', mode: {times: 1},"
                    + " data: {failCommands: ['insert'], closeConnection: true, member: '" + longForm + "'}}")));

            client.getDatabase(db).getCollection("orders").insertOne(new Document("_id", "A1"));
            assertEquals(1, proxy.rules().fired("reset"), "the rule on the member so named fired");
            assertEquals(1, Meters.retries(proxy.registry(), "insert"), "and the driver retried the insert");
            assertEquals(1, direct.getDatabase(db).getCollection("orders").countDocuments(), "the server holds it once");
        }
    }

    /**
     * --host 0.0.0.0 (the default) and --admin-host 0.0.0.0 listen on IPv4 only, as mongod's bindIp 0.0.0.0 does: the
     * JDK bound them as "::", on every IPv6 address too, which an IPv4 firewall leaves open while the log said 0.0.0.0.
     */
    @Test
    void theIpv4WildcardListensOnIpv4Only() throws Exception {
        String db = UpstreamLane.freshDatabaseName("ipv4only");
        ProxyConfig config = new ProxyConfig(UpstreamUri.parse(UpstreamLane.uri()), "0.0.0.0", 0, null, "127.0.0.1", -1, Map.of(), 5000);
        try (ProxyServer proxy = ProxyServer.start(config);
             AdminServer admin = AdminServer.start(proxy, "0.0.0.0", 0);
             MongoClient client = MongoClients.create(CommandLog.withOptions(proxy.connectionString(), "serverSelectionTimeoutMS=5000"));
             MongoClient direct = UpstreamLane.directClient()) {
            client.getDatabase(db).getCollection("orders").insertOne(new Document("_id", "A1"));
            assertEquals(1, direct.getDatabase(db).getCollection("orders").countDocuments(), "the driver's insert, over IPv4");
            for (int port : new int[] {proxy.members().get(0).advertised().port(), admin.port()}) {
                try (Socket ipv4 = new Socket()) {
                    ipv4.connect(new InetSocketAddress("127.0.0.1", port), 2000);
                }
                assertThrows(ConnectException.class, () -> {
                    try (Socket ipv6 = new Socket()) {
                        ipv6.connect(new InetSocketAddress(InetAddress.getByName("::1"), port), 2000);
                    }
                }, "port " + port + " on ::1");
            }
        }
    }
}
