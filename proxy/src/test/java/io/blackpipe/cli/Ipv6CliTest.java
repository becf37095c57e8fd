package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.blackpipe.testing.ScriptedMongod;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.Map;
import org.bson.Document;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A proxy on IPv6 loopback, started as an IPv6-first CI starts it: "--host [::1]" printed "mongodb://[[::1]]:…", and
 * "--admin-host ::1" printed "http://::1:…/metrics", which curl and blackpipe's own commands refused.
 */
class Ipv6CliTest {
    @TempDir
    Path temp;

    @BeforeAll
    static void thisHostHasIpv6Loopback() {
        try (ServerSocket probe = new ServerSocket()) {
            probe.bind(new InetSocketAddress(InetAddress.getByName("::1"), 0));
        } catch (IOException e) {
            assumeTrue(false, "this host has no IPv6 loopback (::1): " + e.getMessage());
        }
    }

    @Test
    void whatTheProxyPrintsForIpv6IsWhatDriversAndItsOwnCommandsDial() throws Exception {
        try (ScriptedMongod member = ScriptedMongod.start();
             CliChild child = new CliChild(temp, null, Map.of(), "proxy", "--upstream",
                     "mongodb://" + member.address() + "/?replicaSet=" + ScriptedMongod.SET_NAME,
                     "--host", "[::1]", "--port", "0", "--admin-host", "::1", "--admin-port", "0")) {
            String admin = child.awaitLine("admin: ");
            assertTrue(admin.matches("admin: http://\\[::1]:\\d+/metrics  http://\\[::1]:\\d+/health"), admin);
            String connectionString = child.awaitLine("connection string: ").substring("connection string: ".length());
            assertTrue(connectionString.matches("mongodb://\\[::1]:\\d+/\\?replicaSet=" + ScriptedMongod.SET_NAME), connectionString);
            assertTrue(child.stderrText().contains("listening on [::1]:"), child::describe);

            try (MongoClient client = MongoClients.create(connectionString + "&serverSelectionTimeoutMS=10000")) {
                client.getDatabase("shop").getCollection("orders").insertOne(new Document("_id", "A1"));
            }
            assertEquals(1, member.documents("shop", "orders").size(), "the member holds the insert");

            String adminUrl = admin.substring("admin: ".length(), admin.indexOf("/metrics"));
            CliRun health = CliRun.of("health", "--admin", adminUrl);
            assertEquals(0, health.exitCode(), health::toString);
        }
    }
}
