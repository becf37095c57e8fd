package io.blackpipe.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.ScriptedDns;
import java.net.SocketException;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * mongodb+srv:// URIs, resolved as the Initial DNS Seedlist Discovery spec says, against a
 * scripted DNS server: seeds from SRV records inside the host's domain, defaults from one TXT
 * record, TLS on by default, the URI's own options first; and what the URI gets wrong is refused
 * before DNS is asked anything.
 */
class SrvUpstreamUriTest {
    private ScriptedDns dns;

    @BeforeEach
    void startDns() throws SocketException {
        dns = new ScriptedDns();
    }

    @AfterEach
    void stopDns() {
        assertEquals(List.of(), dns.errors(), "the scripted DNS server understood every question");
        dns.close();
    }

    private UpstreamUri parse(String uri) {
        return UpstreamUri.parse(uri, new DnsRecords(dns.providerUrl()));
    }

    private SeedlistException refusedByDns(String uri, String reason) {
        SeedlistException e = assertThrows(SeedlistException.class, () -> parse(uri));
        assertTrue(e.getMessage().contains(reason), () -> "expected '" + reason + "' in: " + e.getMessage());
        return e;
    }

    /** Refused as given: an IllegalArgumentException, and DNS never asked. */
    private void refusedAsGiven(String uri, String reason) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> parse(uri));
        assertTrue(e.getMessage().contains(reason), () -> "expected '" + reason + "' in: " + e.getMessage());
        assertEquals(List.of(), dns.questions(), "no DNS lookup for a URI that is wrong as given");
    }

    @Test
    void theSrvTargetsAreTheSeedsAndTheTxtRecordGivesDefaults() {
        dns.srv("_mongodb._tcp.cluster0.example.com", 27017, "node1.example.com")
                .srv("_mongodb._tcp.cluster0.example.com", 27018, "node2.example.com.")
                .txt("cluster0.example.com", "replicaSet=rs0&authSource=admin");
        UpstreamUri uri = parse("mongodb+srv://cluster0.example.com/");
        assertEquals(Set.of(new MemberAddress("node1.example.com", 27017), new MemberAddress("node2.example.com", 27018)),
                new HashSet<>(uri.seeds()));
        assertEquals("rs0", uri.replicaSet());
        assertEquals("replicaSet=rs0, from the TXT record of cluster0.example.com", uri.describeOption("replicaSet"),
                "a message about the option says where it came from");
        assertEquals("admin", uri.options().get("authsource"));
        assertTrue(uri.tls().enabled(), "mongodb+srv:// turns TLS on");
        assertEquals("mongodb+srv://cluster0.example.com/", uri.text(), "the URI as given is kept");
        assertEquals(List.of("SRV _mongodb._tcp.cluster0.example.com", "TXT cluster0.example.com"), dns.questions());
    }

    @Test
    void tlsFalseInTheUriTurnsTlsOff() {
        dns.srv("_mongodb._tcp.cluster0.example.com", 27017, "node1.example.com");
        assertFalse(parse("mongodb+srv://cluster0.example.com/?tls=false").tls().enabled());
        assertFalse(parse("mongodb+srv://cluster0.example.com/?ssl=false").tls().enabled());
        assertTrue(parse("mongodb+srv://cluster0.example.com/?tls=true").tls().enabled());
        assertTrue(parse("mongodb+srv://cluster0.example.com/?appName=a").tls().enabled());
    }

    @Test
    void theUrisOwnOptionsWinOverTheTxtRecords() {
        dns.srv("_mongodb._tcp.cluster0.example.com", 27017, "node1.example.com")
                .txt("cluster0.example.com", "replicaSet=rs0&authSource=admin&loadBalanced=false");
        UpstreamUri uri = parse("mongodb+srv://alice:pw@cluster0.example.com/app?authSource=users&replicaSet=mine");
        assertEquals("users", uri.options().get("authsource"));
        assertEquals("mine", uri.replicaSet());
        assertEquals("replicaSet=mine", uri.describeOption("replicaSet"), "the URI's own, not the TXT record's");
        assertEquals("false", uri.options().get("loadbalanced"), "what the URI does not say comes from the TXT record");
        assertEquals("users", uri.credential().source());
    }

    @Test
    void theTxtRecordsAuthSourceIsWhereTheUserIsLookedUp() {
        dns.srv("_mongodb._tcp.cluster0.example.com", 27017, "node1.example.com")
                .txt("cluster0.example.com", "authSource=admin");
        assertEquals("admin", parse("mongodb+srv://alice:pw@cluster0.example.com/app").credential().source(),
                "the TXT record's authSource is an option, and options beat the path's database");
    }

    @Test
    void theStringsOfOneTxtRecordAreJoined() {
        dns.srv("_mongodb._tcp.cluster0.example.com", 27017, "node1.example.com")
                .txt("cluster0.example.com", "replicaS", "et=rs", "0&authSource=a%20b");
        UpstreamUri uri = parse("mongodb+srv://cluster0.example.com/");
        assertEquals("rs0", uri.replicaSet());
        assertEquals("a b", uri.options().get("authsource"), "values are decoded as the URI's are");
    }

    @Test
    void noTxtRecordGivesNoDefaults() {
        dns.srv("_mongodb._tcp.cluster0.example.com", 27017, "node1.example.com");
        assertEquals(Map.of("tls", "true"), parse("mongodb+srv://cluster0.example.com/").options());
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({
        // the spec's prose tests 2, 3 and 4, and its parent-part mismatches
        "localhost, localhost.mongodb, localhost",
        "mongo.local, test_1.evil.local, mongo.local",
        "blogs.mongodb.com, blogs.evil.com, mongodb.com",
        "localhost, localhost, localhost",
        "mongo.local, mongo.local, mongo.local",
        "localhost, test_1.cluster_1localhost, localhost",
        "mongo.local, test_1.my_hostmongo.local, mongo.local",
        "blogs.mongodb.com, cluster.testmongodb.com, mongodb.com",
        "test12.test.build.10gen.cc, localhost.build.10gen.cc, test.build.10gen.cc",
        "test13.test.build.10gen.cc, test.build.10gen.cc, test.build.10gen.cc",
        "test14.test.build.10gen.cc, localhost.not-test.build.10gen.cc, test.build.10gen.cc",
        "test17.test.build.10gen.cc, localhost.test.build.10gen.not-cc, test.build.10gen.cc",
    })
    void aTargetOutsideTheHostsDomainIsRefused(String host, String target, String domain) {
        dns.srv("_mongodb._tcp." + host, 27017, target);
        refusedByDns("mongodb+srv://" + host + "/",
                "the SRV record of _mongodb._tcp." + host + " points to " + target + ":27017, not a name under " + domain + " (");
    }

    @Test
    void oneTargetOutsideTheDomainRefusesThemAll() {
        dns.srv("_mongodb._tcp.test19.test.build.10gen.cc", 27017, "localhost.test.build.10gen.cc")
                .srv("_mongodb._tcp.test19.test.build.10gen.cc", 27018, "localhost.evil.build.10gen.cc");
        refusedByDns("mongodb+srv://test19.test.build.10gen.cc/", "points to localhost.evil.build.10gen.cc:27018");
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({
        // the spec's prose test 1: hosts of one or two labels, with targets below them
        "localhost, node1.localhost",
        "mongo.local, test_1.mongo.local",
        // three labels or more: anywhere in the parent domain, the host's own name and deeper ones included
        "blogs.mongodb.com, blogs.mongodb.com",
        "test18.test.build.10gen.cc, localhost.sub.test.build.10gen.cc",
        "Cluster0.Example.com, NODE1.example.COM",
    })
    void aTargetInsideTheHostsDomainIsASeed(String host, String target) {
        dns.srv("_mongodb._tcp." + host, 27017, target);
        assertEquals(List.of(new MemberAddress(target, 27017)), parse("mongodb+srv://" + host + "/").seeds());
    }

    @Test
    void noSrvRecordsIsAnErrorThatSaysWhy() {
        refusedByDns("mongodb+srv://missing.example.com/", "no SRV records for _mongodb._tcp.missing.example.com: the name does not exist");
        dns.txt("_mongodb._tcp.txtonly.example.com", "x");
        refusedByDns("mongodb+srv://txtonly.example.com/", "no SRV records for _mongodb._tcp.txtonly.example.com: the name exists but has none");
    }

    @Test
    void aDnsErrorIsNamed() {
        dns.failing("_mongodb._tcp.broken.example.com");
        refusedByDns("mongodb+srv://broken.example.com/", "cannot look up the SRV records of _mongodb._tcp.broken.example.com: DNS server failure");
        dns.srv("_mongodb._tcp.cluster0.example.com", 27017, "node1.example.com").failing("cluster0.example.com");
        refusedByDns("mongodb+srv://cluster0.example.com/", "cannot look up the TXT record of cluster0.example.com: DNS server failure");
    }

    @Test
    void twoTxtRecordsAreRefused() {
        dns.srv("_mongodb._tcp.test6.example.com", 27017, "node1.example.com")
                .txt("test6.example.com", "replicaSet=rs0").txt("test6.example.com", "authSource=otherDB");
        refusedByDns("mongodb+srv://test6.example.com/",
                "2 TXT records for test6.example.com ('replicaSet=rs0', 'authSource=otherDB'); a mongodb+srv:// host may have one at most");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"socketTimeoutMS=500, socketTimeoutMS", "ssl=false, ssl", "replicaSet=rs0&tls=false, tls"})
    void aTxtRecordSetsOnlyAuthSourceReplicaSetAndLoadBalanced(String txt, String option) {
        dns.srv("_mongodb._tcp.cluster0.example.com", 27017, "node1.example.com").txt("cluster0.example.com", txt);
        refusedByDns("mongodb+srv://cluster0.example.com/",
                "the TXT record of cluster0.example.com sets " + option + "; only authSource, replicaSet and loadBalanced may come from it");
    }

    @Test
    void aMisformattedTxtRecordIsRefused() {
        dns.srv("_mongodb._tcp.test8.example.com", 27017, "node1.example.com").txt("test8.example.com", "authSource")
                .srv("_mongodb._tcp.test9.example.com", 27017, "node1.example.com").txt("test9.example.com", "loadBalanced=yes");
        refusedByDns("mongodb+srv://test8.example.com/", "the TXT record of test8.example.com is not name=value&...: 'authSource'");
        refusedByDns("mongodb+srv://test9.example.com/", "the TXT record of test9.example.com sets loadBalanced=yes; it must be true or false");
        // what DNS answered, not the URI: a SeedlistException (exit 1) naming the record, not the JDK's URLDecoder message
        dns.srv("_mongodb._tcp.test10.example.com", 27017, "node1.example.com").txt("test10.example.com", "authSource=a%zz");
        refusedByDns("mongodb+srv://test10.example.com/",
                "the TXT record of test10.example.com has a malformed %-escape in authSource: 'authSource=a%zz'");
    }

    @Test
    void aPortIsRefusedBeforeAnyLookup() {
        refusedAsGiven("mongodb+srv://cluster0.example.com:27017/?replicaSet=rs0",
                "gives the port 27017; a mongodb+srv:// URI takes no port: the SRV records give each member's");
    }

    @Test
    void oneHostOnlyAndItsPasswordStaysMasked() {
        refusedAsGiven("mongodb+srv://u:s3cret@a.example.com,b.example.com/",
                "the upstream URI 'mongodb+srv://u:****@a.example.com,b.example.com/' names 2 hosts; a mongodb+srv:// URI names one host");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> parse("mongodb+srv://u:s3cret@h.example.com:1/"));
        assertFalse(e.getMessage().contains("s3cret"), e.getMessage());
    }

    @Test
    void otherMistakesOfTheUriAreRefusedBeforeAnyLookup() {
        refusedAsGiven("mongodb+srv://[::1]/", "names the address [::1]; a mongodb+srv:// URI names a DNS host name");
        refusedAsGiven("mongodb+srv:///app", "has an empty host");
        refusedAsGiven("mongodb+srv://cluster0..example.com/", "has an empty label in its host name 'cluster0..example.com'");
        refusedAsGiven("mongodb+srv://cluster%zz.example.com/",
                "the upstream URI 'mongodb+srv://cluster%zz.example.com/' has a malformed %-escape in its host 'cluster%zz.example.com'");
        refusedAsGiven("mongodb+srv://cluster0.example.com/?directConnection=true", "directConnection=true does not go with mongodb+srv://");
        refusedAsGiven("mongodb+srv://u:pw@cluster0.example.com/?authMechanism=SCRAM-SHA-512", "is not a MongoDB authentication mechanism");
        refusedAsGiven("mongodb+srv://cluster0.example.com/?srvServiceName=no_underscores", "srvServiceName=no_underscores is no SRV service name");
        refusedAsGiven("mongodb+srv://cluster0.example.com/?srvMaxHosts=-1", "srvMaxHosts=-1 must be a whole number, 0 or more");
        refusedAsGiven("mongodb+srv://cluster0.example.com/?srvMaxHosts=1&replicaSet=rs0",
                "srvMaxHosts=1 does not go with replicaSet=rs0");
        refusedAsGiven("mongodb+srv://cluster0.example.com/?srvMaxHosts=1&loadBalanced=true",
                "the upstream URI option loadBalanced=true is not supported"); // whatever goes with it
    }

    @Test
    void srvServiceNameNamesTheService() {
        dns.srv("_customname._tcp.test22.example.com", 27017, "node1.example.com");
        assertEquals(List.of(new MemberAddress("node1.example.com", 27017)),
                parse("mongodb+srv://test22.example.com/?srvServiceName=customname").seeds());
        assertEquals("SRV _customname._tcp.test22.example.com", dns.questions().get(0));
    }

    @Test
    void srvMaxHostsPicksThatManyTargets() {
        for (int port = 27017; port <= 27019; port++) {
            dns.srv("_mongodb._tcp.cluster0.example.com", port, "node" + port + ".example.com");
        }
        Set<MemberAddress> all = new HashSet<>(parse("mongodb+srv://cluster0.example.com/").seeds());
        assertEquals(3, all.size());
        List<MemberAddress> two = parse("mongodb+srv://cluster0.example.com/?srvMaxHosts=2").seeds();
        assertEquals(2, new HashSet<>(two).size());
        assertTrue(all.containsAll(two), () -> two + " are some of " + all);
        assertEquals(all, new HashSet<>(parse("mongodb+srv://cluster0.example.com/?srvMaxHosts=5").seeds()));
        assertEquals(all, new HashSet<>(parse("mongodb+srv://cluster0.example.com/?srvMaxHosts=0").seeds()));
    }

    @Test
    void srvMaxHostsConflictsWithTheTxtRecordsReplicaSetToo() {
        dns.srv("_mongodb._tcp.cluster0.example.com", 27017, "node1.example.com").txt("cluster0.example.com", "replicaSet=rs0");
        refusedByDns("mongodb+srv://cluster0.example.com/?srvMaxHosts=1",
                "srvMaxHosts=1 does not go with replicaSet=rs0, which the TXT record of cluster0.example.com sets");
    }

    @Test
    void aTxtRecordsLoadBalancedTrueIsRefusedUnlessTheUriSaysFalse() {
        dns.srv("_mongodb._tcp.serverless0.example.com", 27017, "lb.example.com").txt("serverless0.example.com", "loadBalanced=true");
        refusedByDns("mongodb+srv://serverless0.example.com/", "the TXT record of serverless0.example.com sets loadBalanced=true,"
                + " so the deployment is load-balanced (an Atlas serverless instance, or mongos behind a load balancer):"
                + " blackpipe has no load-balanced mode");
        assertEquals("false", parse("mongodb+srv://serverless0.example.com/?loadBalanced=false").options().get("loadbalanced"),
                "the URI's own option wins over the TXT record's, as the spec says");
    }
}
