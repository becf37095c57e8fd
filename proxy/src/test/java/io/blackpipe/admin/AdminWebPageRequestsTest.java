package io.blackpipe.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.testing.CommandLog;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.topology.UpstreamUri;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A page open in a browser on the machine can send a form or a fetch to the admin API on 127.0.0.1 (the browser hides
 * only the answer), or read the answer too once its host name points at 127.0.0.1 (DNS rebinding): with no token set,
 * it added a rule that reset the app's inserts, and read the history. What a browser adds to a page's requests
 * (Origin, Sec-Fetch-Site), and a Host in a public domain while no token is set, are refused 403, and nothing of the
 * request is done; the CLI, RemoteBlackPipe and curl send neither header, and name the address they were given.
 */
class AdminWebPageRequestsTest {
    private static final String RESET_INSERTS = "{configureFailPoint: 'failCommand', mode: {times: 1},"
            + " data: {failCommands: ['insert'], closeConnection: true}}";

    private static HttpResponse<String> send(AdminServer admin, String method, String path, String body, String... headers) throws Exception {
        return AdminHttpRequests.send(admin.port(), method, path, body, headers);
    }

    @ParameterizedTest(name = "{0}: {1}")
    @CsvSource(delimiter = '|', value = {
            "Origin|https://attacker.example",           // a cross-site form or fetch, by any browser that sends Origin
            "Sec-Fetch-Site|cross-site",                 // the same, by a browser that sends fetch metadata
            "Sec-Fetch-Site|same-origin",                // a rebound name's page, where a browser sends fetch metadata
    })
    void aRuleAPageSendsIsRefusedAndNeverApplied(String header, String value) throws Exception {
        String db = UpstreamLane.freshDatabaseName("web-page");
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()));
             AdminServer admin = AdminServer.start(proxy, "127.0.0.1", 0, null);
             MongoClient client = MongoClients.create(CommandLog.withOptions(proxy.connectionString(), "retryWrites=true"))) {
            HttpResponse<String> added = send(admin, "POST", "/api/v1/rules", RESET_INSERTS, "Content-Type", "text/plain", header, value);
            assertEquals(403, added.statusCode(), added::body);
            assertTrue(BsonDocument.parse(added.body()).getString("error").getValue().startsWith(
                    "blackpipe's control API takes no request a web page makes (this one came with " + header + ": " + value + ")"), added::body);
            assertTrue(proxy.rules().rules().isEmpty(), "no rule added");

            client.getDatabase(db).getCollection("orders").insertOne(new Document("_id", 1));
            assertEquals(0, Meters.retries(proxy.registry(), "insert"), "the insert met no reset");
            try (MongoClient direct = UpstreamLane.directClient()) {
                assertEquals(1, direct.getDatabase(db).getCollection("orders").countDocuments(), "the server holds it once");
            }
        }
    }

    /**
     * A rebound name: the attacker's page is the admin server's own origin, and Chromium sent its reads with neither
     * header (they read the history). Its Host names the attacker's domain. A local name, or a token, is served.
     */
    @Test
    void aReadByAReboundNameIsRefusedUnlessATokenGuardsTheApi() throws Exception {
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()));
             AdminServer open = AdminServer.start(proxy, "127.0.0.1", 0, null);
             AdminServer guarded = AdminServer.start(proxy, "127.0.0.1", 0, "s3cret")) {
            String refused = rawGet(open, "/api/v1/history", "rebind.attacker.example:" + open.port(), null);
            assertTrue(refused.startsWith("HTTP/1.1 403"), refused);
            assertTrue(refused.contains("this one came with Host: rebind.attacker.example:" + open.port()), refused);
            for (String local : new String[] {"127.0.0.1", "localhost", "[::1]", "blackpipe", "blackpipe.internal", "mongo-proxy.local",
                    "blackpipe.tests.svc", "blackpipe.tests.svc.cluster.local"}) {
                String served = rawGet(open, "/api/v1/stats", local + ":" + open.port(), null);
                assertTrue(served.startsWith("HTTP/1.1 200"), () -> local + ": " + served);
            }
            String withToken = rawGet(guarded, "/api/v1/stats", "blackpipe.staging.example:" + guarded.port(), "Bearer s3cret");
            assertTrue(withToken.startsWith("HTTP/1.1 200"), withToken);
            String metrics = rawGet(open, "/metrics", "rebind.attacker.example:" + open.port(), null);
            assertTrue(metrics.startsWith("HTTP/1.1 200"), "/metrics stays open");
        }
        // the host the proxy advertises to apps is its own (BlackPipeContainer's control() calls the Docker host so)
        ProxyConfig advertising = new ProxyConfig(UpstreamUri.parse(UpstreamLane.uri()), "127.0.0.1", 0, "docker-host.ci.example",
                "127.0.0.1", -1, java.util.Map.of(), 5000);
        try (ProxyServer proxy = ProxyServer.start(advertising);
             AdminServer open = AdminServer.start(proxy, "127.0.0.1", 0, null)) {
            String served = rawGet(open, "/api/v1/stats", "docker-host.ci.example:" + open.port(), null);
            assertTrue(served.startsWith("HTTP/1.1 200"), served);
        }
    }

    /** A GET as a browser sends it, with the Host it names (HttpClient sets Host itself). */
    private static String rawGet(AdminServer admin, String path, String host, String authorization) throws Exception {
        try (Socket socket = new Socket("127.0.0.1", admin.port())) {
            socket.setSoTimeout(10_000);
            socket.getOutputStream().write(("GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\n"
                    + (authorization == null ? "" : "Authorization: " + authorization + "\r\n") + "Connection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            return new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void theApisOwnClientsAndAnAddressTypedIntoABrowserAreServed() throws Exception {
        String db = UpstreamLane.freshDatabaseName("web-page");
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()));
             AdminServer admin = AdminServer.start(proxy, "127.0.0.1", 0, null);
             MongoClient client = MongoClients.create(CommandLog.withOptions(proxy.connectionString(), "retryWrites=true"))) {
            assertEquals(201, send(admin, "POST", "/api/v1/rules", RESET_INSERTS).statusCode(), "as the CLI sends it");
            client.getDatabase(db).getCollection("orders").insertOne(new Document("_id", 1));
            assertEquals(1, Meters.retries(proxy.registry(), "insert"), "the rule reset the insert, and the driver retried it");

            HttpResponse<String> typed = send(admin, "GET", "/api/v1/stats", null, "Sec-Fetch-Site", "none", "User-Agent", "Mozilla/5.0");
            assertEquals(200, typed.statusCode(), typed::body);
            HttpResponse<String> metrics = send(admin, "GET", "/metrics", null, "Origin", "https://grafana.example", "Sec-Fetch-Site", "cross-site");
            assertEquals(200, metrics.statusCode(), "/metrics and /health stay open");
        }
    }
}
