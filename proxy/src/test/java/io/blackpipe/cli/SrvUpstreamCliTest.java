package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.blackpipe.testing.ScriptedDns;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.topology.MemberAddress;
import io.blackpipe.topology.UpstreamUri;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.naming.Context;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * `proxy` and `report` with a mongodb+srv:// upstream: a URI wrong as given is a usage error
 * (exit 2), DNS records that give no seeds are a failed start (exit 1), and neither prints the
 * password. The CLI asks the system's resolvers, through JNDI as the Java driver does; the JVM's
 * standard java.naming.provider.url points JNDI at a scripted DNS server instead, so these tests
 * take the production path.
 */
class SrvUpstreamCliTest {
    @TempDir
    Path temp;

    /** The CLI in-process, its DNS lookups going to {@code dns} (java.naming.provider.url, restored after). */
    private static CliRun runResolvingThrough(ScriptedDns dns, String... args) {
        String before = System.getProperty(Context.PROVIDER_URL);
        System.setProperty(Context.PROVIDER_URL, dns.providerUrl());
        try {
            return CliRun.of(args);
        } finally {
            if (before == null) {
                System.clearProperty(Context.PROVIDER_URL);
            } else {
                System.setProperty(Context.PROVIDER_URL, before);
            }
        }
    }

    @Test
    void anSrvUriWithAPortIsAUsageErrorThatHidesThePassword() {
        CliRun run = CliRun.of("proxy", "--upstream", "mongodb+srv://u:s3cret@cluster0.example.net:27017/");
        assertEquals(2, run.exitCode(), run::toString);
        assertTrue(run.err().startsWith("the upstream URI 'mongodb+srv://u:****@cluster0.example.net:27017/' gives the port 27017"),
                run::toString);
        assertTrue(run.err().contains("Usage: blackpipe proxy"), run::toString);
        assertFalse(run.err().contains("s3cret"), run::toString);
    }

    @Test
    void anSrvUriWithTwoHostsIsAUsageErrorOfTheReportToo() {
        CliRun run = CliRun.of("report", "--upstream", "mongodb+srv://a.example.net,b.example.net/", "--iterations", "1");
        assertEquals(2, run.exitCode(), run::toString);
        assertTrue(run.err().startsWith("the upstream URI 'mongodb+srv://a.example.net,b.example.net/' names 2 hosts"), run::toString);
        assertTrue(run.err().contains("Usage: blackpipe report"), run::toString);
    }

    @Test
    void dnsRecordsThatGiveNoSeedsFailTheStartWithExitOne() throws Exception {
        try (ScriptedDns dns = new ScriptedDns()) {
            CliRun proxy = runResolvingThrough(dns, "proxy", "--upstream", "mongodb+srv://u:s3cret@missing.blackpipe.test/",
                    "--port", "0", "--admin-port", "-1");
            assertEquals(1, proxy.exitCode(), proxy::toString);
            assertTrue(proxy.err().startsWith("blackpipe: no SRV records for _mongodb._tcp.missing.blackpipe.test: the name does not exist"),
                    proxy::toString);
            assertFalse(proxy.err().contains("Usage:"), () -> "the URI was well formed: " + proxy);
            assertFalse(proxy.err().contains("s3cret"), proxy::toString);

            dns.srv("_mongodb._tcp.cluster0.blackpipe.test", 27017, "node1.elsewhere.test");
            CliRun report = runResolvingThrough(dns, "report", "--upstream", "mongodb+srv://cluster0.blackpipe.test/", "--iterations", "1");
            assertEquals(1, report.exitCode(), report::toString);
            assertTrue(report.err().startsWith("blackpipe: the SRV record of _mongodb._tcp.cluster0.blackpipe.test points to"
                    + " node1.elsewhere.test:27017, not a name under blackpipe.test"), report::toString);
            assertEquals(List.of(), dns.errors());
        }
    }

    @Test
    @Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD) // a start that wrongly succeeds serves forever
    void aTxtRecordsReplicaSetTheSeedsAreNotMembersOfFailsTheStartWithExitOne() throws Exception {
        try (ScriptedDns dns = new ScriptedDns(); ScriptedMongod member = ScriptedMongod.start()) {
            // 127.0.0.1 lies in 0.0.1, the parent domain of cluster0.0.0.1: a target the spec allows, and one that needs no resolver
            dns.srv("_mongodb._tcp.cluster0.0.0.1", member.port(), "127.0.0.1").txt("cluster0.0.0.1", "replicaSet=rs-other");
            CliRun run = runResolvingThrough(dns, "proxy", "--upstream", "mongodb+srv://cluster0.0.0.1/?tls=false",
                    "--host", "127.0.0.1", "--port", "0", "--admin-port", "-1");
            assertEquals(1, run.exitCode(), run::toString);
            assertTrue(run.err().startsWith("blackpipe: no upstream seed is a member of the replica set the URI names"
                    + " (replicaSet=rs-other, from the TXT record of cluster0.0.0.1): " + member.address()
                    + " reports setName '" + ScriptedMongod.SET_NAME + "'"), run::toString);
            assertFalse(run.err().contains("Usage:"), run::toString);
            assertEquals(List.of(), dns.errors());
        }
    }

    @Test
    void aTxtRecordsLoadBalancedTrueFailsTheStartWithExitOneNamingTheRecord() throws Exception {
        try (ScriptedDns dns = new ScriptedDns()) {
            dns.srv("_mongodb._tcp.serverless0.blackpipe.test", 27017, "lb.blackpipe.test").txt("serverless0.blackpipe.test", "loadBalanced=true");
            CliRun run = runResolvingThrough(dns, "proxy", "--upstream", "mongodb+srv://serverless0.blackpipe.test/",
                    "--port", "0", "--admin-port", "-1");
            assertEquals(1, run.exitCode(), run::toString);
            assertTrue(run.err().startsWith("blackpipe: the TXT record of serverless0.blackpipe.test sets loadBalanced=true,"
                    + " so the deployment is load-balanced"), run::toString);
            assertTrue(run.err().contains("give the address of a mongos, or of the replica set's members, instead"), run::toString);
            assertFalse(run.err().contains("Usage:"), () -> "the URI was well formed, its DNS records name a deployment blackpipe cannot proxy: " + run);
            assertEquals(List.of("SRV _mongodb._tcp.serverless0.blackpipe.test", "TXT serverless0.blackpipe.test"), dns.questions());
        }
    }

    @Test
    void aProxyStartedFromTheCommandLineServesTheMembersTheSrvRecordsName() throws Exception {
        UpstreamUri lane = UpstreamUri.parse(UpstreamLane.uri());
        assumeTrue(lane.replicaSet() != null, () -> "the " + UpstreamLane.name() + " lane's URI names no replica set for the TXT record");
        assumeFalse(lane.directConnection(), () -> "the " + UpstreamLane.name() + " lane is dialled directly, which mongodb+srv:// forbids");
        try (ScriptedDns dns = new ScriptedDns()) {
            // Made-up names for the lane's members: the child JVM finds their addresses in a hosts file
            // (jdk.net.hosts.file), as a real deployment's would be found by the system's resolver.
            List<String> hosts = new ArrayList<>(List.of("127.0.0.1 localhost"));
            for (int i = 0; i < lane.seeds().size(); i++) {
                MemberAddress seed = lane.seeds().get(i);
                String name = "node" + (i + 1) + ".blackpipe.test";
                dns.srv("_mongodb._tcp.cluster0.blackpipe.test", seed.port(), name);
                String address = InetAddress.getByName(seed.host()).getHostAddress();
                hosts.add(address + " " + name + (address.equals(seed.host()) ? "" : " " + seed.host()));
            }
            dns.txt("cluster0.blackpipe.test", "replicaSet=" + lane.replicaSet());
            Path hostsFile = Files.write(temp.resolve("hosts"), hosts);
            List<String> jvm = List.of("-D" + Context.PROVIDER_URL + "=" + dns.providerUrl(), "-Djdk.net.hosts.file=" + hostsFile);
            try (CliChild child = new CliChild(temp, null, Map.of(), jvm,
                    "proxy", "--upstream", "mongodb+srv://cluster0.blackpipe.test/?tls=false", "--port", "0", "--admin-port", "-1");
                 MongoClient direct = UpstreamLane.directClient()) {
                String uri = child.awaitLine("connection string: ").substring("connection string: ".length());
                assertTrue(uri.endsWith("/?replicaSet=" + lane.replicaSet()), uri);
                assertTrue(child.seen.get(0).endsWith("proxying replica set " + lane.replicaSet()), child.seen::toString);
                String database = UpstreamLane.freshDatabaseName("srv_cli");
                try (MongoClient client = MongoClients.create(MongoClientSettings.builder()
                        .applyConnectionString(new ConnectionString(uri))
                        .applyToClusterSettings(b -> b.serverSelectionTimeout(15, TimeUnit.SECONDS)).build())) {
                    client.getDatabase(database).getCollection("orders").insertOne(new Document("_id", 1).append("via", "cli"));
                }
                assertEquals(1, direct.getDatabase(database).getCollection("orders").countDocuments(new Document("via", "cli")),
                        "the write landed on the lane");
            }
            assertEquals(List.of("SRV _mongodb._tcp.cluster0.blackpipe.test", "TXT cluster0.blackpipe.test"), dns.questions());
            assertEquals(List.of(), dns.errors());
        }
    }
}
