package io.blackpipe.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.ScriptedDns;
import io.blackpipe.testing.UpstreamLane;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * The real Java driver through blackpipe whose upstream is a mongodb+srv:// URI: a scripted DNS
 * server's SRV records point at the lane's members, its TXT record gives the replica set's name,
 * and the driver's writes land on the lane.
 */
class SrvUpstreamDriverTest {
    /** The first IPv4 address of {@code host}, or null. */
    private static String ipv4(String host) throws UnknownHostException {
        return Arrays.stream(InetAddress.getAllByName(host)).filter(a -> a instanceof Inet4Address)
                .map(InetAddress::getHostAddress).findFirst().orElse(null);
    }

    @Test
    void theDriversWritesLandOnTheMembersTheSrvRecordsName() throws Exception {
        UpstreamUri lane = UpstreamUri.parse(UpstreamLane.uri());
        assumeTrue(lane.replicaSet() != null, () -> "the " + UpstreamLane.name() + " lane's URI names no replica set for the TXT record");
        assumeFalse(lane.directConnection(), () -> "the " + UpstreamLane.name() + " lane is dialled directly, which mongodb+srv:// forbids");
        String ip = ipv4(lane.seeds().get(0).host());
        assumeTrue(ip != null, () -> "the " + UpstreamLane.name() + " lane has no IPv4 address to name in an SRV record");
        // The proxy dials SRV targets through the system's resolver, which knows none of the scripted
        // DNS server's names; an IPv4 address is a name it knows. 127.0.0.1 lies in the domain 0.0.1,
        // the parent domain of cluster0.0.0.1, so the spec's domain check holds for it as for any name.
        String host = "cluster0." + ip.substring(ip.indexOf('.') + 1);
        List<Integer> ports = new ArrayList<>();
        for (MemberAddress seed : lane.seeds()) {
            if (ip.equals(ipv4(seed.host()))) {
                ports.add(seed.port());
            }
        }
        try (ScriptedDns dns = new ScriptedDns()) {
            ports.forEach(port -> dns.srv("_mongodb._tcp." + host, port, ip));
            dns.txt(host, "replicaSet=" + lane.replicaSet());
            UpstreamUri upstream = UpstreamUri.parse("mongodb+srv://" + host + "/?tls=false", new DnsRecords(dns.providerUrl()));
            assertEquals(ports.stream().map(port -> new MemberAddress(ip, port)).collect(Collectors.toSet()),
                    Set.copyOf(upstream.seeds()));
            assertEquals(lane.replicaSet(), upstream.replicaSet(), "the replica set's name comes from the TXT record");

            ProxyConfig config = new ProxyConfig(upstream, "127.0.0.1", 0, "127.0.0.1", "127.0.0.1", 0, Map.of(), 5000);
            try (ProxyServer proxy = ProxyServer.start(config);
                 MongoClient client = MongoClients.create(MongoClientSettings.builder()
                         .applyConnectionString(new ConnectionString(proxy.connectionString()))
                         .applyToClusterSettings(b -> b.serverSelectionTimeout(15, TimeUnit.SECONDS)).build());
                 MongoClient direct = UpstreamLane.directClient()) {
                assertTrue(proxy.connectionString().endsWith("/?replicaSet=" + lane.replicaSet()), proxy.connectionString());
                String database = UpstreamLane.freshDatabaseName("srv_upstream");
                MongoCollection<Document> orders = client.getDatabase(database).getCollection("orders");
                for (int i = 1; i <= 3; i++) {
                    orders.insertOne(new Document("_id", i).append("via", "mongodb+srv"));
                }
                assertEquals(3, direct.getDatabase(database).getCollection("orders").countDocuments(new Document("via", "mongodb+srv")),
                        "the writes landed on the lane");
                assertEquals(3, Meters.attempts(proxy.registry(), "insert"), "and went through blackpipe");
            }
            assertEquals(List.of("SRV _mongodb._tcp." + host, "TXT " + host), dns.questions());
            assertEquals(List.of(), dns.errors());
        }
    }
}
