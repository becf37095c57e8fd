package io.blackpipe.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.RemoteBlackPipe;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.testing.UpstreamLane;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.bson.BsonDocument;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Requests the admin server must refuse whole, with nothing of them done: one HTTP cannot read (a header or a URI
 * past the limits, a broken chunk), a body where the route reads none, a body that is not UTF-8; and the token's
 * header as RFC 7235 lets a client write it. Before, a request Netty could not read was acted on as far as it was
 * read (a DELETE /rules with a long header cleared every rule), and its connection then hung.
 */
class AdminMalformedRequestTest {
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    private static final String RULE = "{\"configureFailPoint\": \"failCommand\", \"mode\": \"alwaysOn\", \"data\": {\"failCommands\": [\"insert\"], \"closeConnection\": true}}";

    private ProxyServer proxy;
    private AdminServer admin;

    @BeforeEach
    void start() {
        proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()));
        admin = AdminServer.start(proxy, "127.0.0.1", 0, null);
    }

    @AfterEach
    void stop() {
        admin.close();
        proxy.close();
    }

    private HttpResponse<String> send(String method, String path, String body, String... headers) throws Exception {
        return AdminHttpRequests.send(admin.port(), method, path, body, headers);
    }

    private void addTheRule() throws Exception {
        assertEquals(200, send("PUT", "/api/v1/rules/kept", RULE).statusCode());
        assertEquals(1, proxy.rules().rules().size());
    }

    private String rawExchange(byte[] request) throws IOException {
        return AdminHttpRequests.raw(admin.port(), request);
    }

    @Test
    void aRequestWhoseHeadersAreTooLargeIsRefusedAndDoesNothing() throws Exception {
        addTheRule();
        String answer = rawExchange(("DELETE /api/v1/rules HTTP/1.1\r\nHost: x\r\nX-Big: " + "a".repeat(9_000)
                + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
        assertTrue(answer.startsWith("HTTP/1.1 431 "), answer);
        assertTrue(answer.contains("malformed HTTP request, nothing of it was done"), answer);
        assertEquals(1, proxy.rules().rules().size(), "the rules were not cleared");
    }

    /** curl asks first for a large body: before, Netty's bare 413 said nothing, and the connection stayed open. */
    @Test
    void aBodyOverTheLimitAskedForWithExpectContinueIsRefusedSayingSo() throws Exception {
        String answer = rawExchange(("PUT /api/v1/rules/big HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + "Content-Length: " + (2 * 1024 * 1024) + "\r\nExpect: 100-continue\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
        assertTrue(answer.startsWith("HTTP/1.1 413 "), answer);
        assertTrue(answer.contains("body: larger than the limit of 1048576 bytes"), answer);
        assertTrue(proxy.rules().rules().isEmpty());

        String small = "{\"configureFailPoint\": \"failCommand\", \"mode\": \"off\"}";
        String allowed = rawExchange(("PUT /api/v1/rules/small HTTP/1.1\r\nHost: x\r\nContent-Length: " + small.length()
                + "\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n" + small).getBytes(StandardCharsets.ISO_8859_1));
        assertTrue(allowed.startsWith("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 "), allowed); // within the limit it goes on
    }

    @Test
    void aUriTooLongIsRefusedAsSuch() throws Exception {
        String answer = rawExchange(("GET /api/v1/" + "x".repeat(5_000) + " HTTP/1.1\r\nHost: x\r\n\r\n")
                .getBytes(StandardCharsets.ISO_8859_1));
        assertTrue(answer.startsWith("HTTP/1.1 414 "), answer);
    }

    @Test
    void aScenarioWhoseChunkedBodyBreaksIsNotStarted() throws Exception {
        String yaml = "name: s\ntimeline:\n  - at: 0s\n    outage: {member: primary}\n";
        String answer = rawExchange(("POST /api/v1/scenario HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                + Integer.toHexString(yaml.length()) + "\r\n" + yaml + "\r\nZZ-not-a-size\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
        assertTrue(answer.startsWith("HTTP/1.1 400 "), answer);
        assertEquals("idle", BsonDocument.parse(send("GET", "/api/v1/scenario", null).body()).getString("state").getValue());
    }

    @Test
    void aBodyWhereTheRouteReadsNoneIsRefused() throws Exception {
        addTheRule();
        HttpResponse<String> clear = send("DELETE", "/api/v1/rules", "{\"id\": \"other\"}");
        assertEquals(400, clear.statusCode(), clear::body);
        assertTrue(clear.body().contains("body: DELETE /api/v1/rules takes none"), clear.body());
        assertEquals(1, proxy.rules().rules().size(), "nothing was cleared");

        HttpResponse<String> outage = send("POST", "/api/v1/members/primary/outage", "{\"duration\": \"5s\"}");
        assertEquals(400, outage.statusCode(), outage::body);
        assertTrue(outage.body().contains("takes none (its options go in the query: duration)"), outage.body());
        assertFalse(proxy.listener(proxy.members().get(0).upstream()).down(), "no outage until restore began");
    }

    @Test
    void aBodyThatIsNotUtf8IsRefused() throws Exception {
        byte[] head = "PUT /api/v1/rules/latin HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\n"
                .getBytes(StandardCharsets.ISO_8859_1);
        byte[] body = "{\"configureFailPoint\": \"failCommand\", \"mode\": \"alwaysOn\", \"data\": {\"failCommands\": [\"find\"], \"appName\": \"caf\u00e9\", \"closeConnection\": true}}"
                .getBytes(StandardCharsets.ISO_8859_1); // é as one Latin-1 byte
        ByteArrayOutputStream request = new ByteArrayOutputStream();
        request.write(head);
        request.write(("Content-Length: " + body.length + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
        request.write(body);
        String answer = rawExchange(request.toByteArray());
        assertTrue(answer.startsWith("HTTP/1.1 400 "), answer);
        assertTrue(answer.contains("body: not UTF-8"), answer);
        assertEquals(0, proxy.rules().rules().size(), "no rule that could never match was stored");
    }

    @Test
    void theTokensSchemeIsCaseInsensitiveAndAnUnsendableTokenIsRefusedAtStart() throws Exception {
        try (AdminServer guarded = AdminServer.start(proxy, "127.0.0.1", 0, "s3cret")) {
            for (String authorization : new String[] {"Bearer s3cret", "bearer s3cret", "BEARER  s3cret"}) {
                HttpResponse<String> answer = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + guarded.port() + "/api/v1/rules"))
                        .header("Authorization", authorization).GET().build(), HttpResponse.BodyHandlers.ofString());
                assertEquals(200, answer.statusCode(), authorization);
            }
            HttpResponse<String> wrong = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + guarded.port() + "/api/v1/rules"))
                    .header("Authorization", "Basic s3cret").GET().build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(401, wrong.statusCode());
        }
        for (String unsendable : new String[] {" s3cret ", "p\u00e4sswort", "two words"}) {
            IllegalStateException refused = assertThrows(IllegalStateException.class, () -> AdminServer.start(proxy, "127.0.0.1", 0, unsendable));
            assertTrue(refused.getMessage().contains("the admin token must be printable ASCII without spaces"), refused.getMessage());
        }
    }

    /** removeRule answers false for a rule that is not there; a 404 for a wrong URL is an error, not "no such rule". */
    @Test
    void removeRuleTellsAWrongUrlFromAMissingRule() {
        RemoteBlackPipe control = RemoteBlackPipe.connect("http://127.0.0.1:" + admin.port());
        assertFalse(control.removeRule("never-added"));
        RemoteBlackPipe wrongUrl = RemoteBlackPipe.connect("http://127.0.0.1:" + admin.port() + "/x");
        assertThrows(RuntimeException.class, () -> wrongUrl.removeRule("never-added"));
    }

    /** A rule's field given twice is a 400 naming it, and nothing changes; before, the last one won, silently. */
    @Test
    void aRuleWithAFieldGivenTwiceIsRefused() throws Exception {
        addTheRule();
        HttpResponse<String> twice = send("PUT", "/api/v1/rules/kept", "{\"configureFailPoint\": \"failCommand\", \"mode\": {\"times\": 1},"
                + " \"mode\": \"alwaysOn\", \"data\": {\"failCommands\": [\"find\"], \"closeConnection\": true}}");
        assertEquals(400, twice.statusCode(), twice::body);
        assertTrue(twice.body().contains("'mode' is given twice"), twice.body());
        assertTrue(proxy.rules().rules().get(0).toString().contains("insert"), "the rule in force is still the one before");
    }

    /**
     * A request begun but never finished (a client that stalls in its head or its body) loses its connection once
     * the request timeout passes; an idle keep-alive connection, and a history follower, are left alone. Before,
     * a stalled body held its connection, and what was read of it, for good.
     */
    @Test
    void aRequestThatStallsLosesItsConnectionAndAnIdleOneDoesNot() throws Exception {
        try (AdminServer quick = AdminServer.start(proxy, "127.0.0.1", 0, null, 500)) {
            for (String stalled : new String[] {"POST /api/v1/rules HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{",
                    "GET /api/v1/rules HTTP/1.1\r\nHost: x\r\n"}) {
                try (Socket socket = new Socket("127.0.0.1", quick.port())) {
                    socket.setSoTimeout(10_000);
                    socket.getOutputStream().write(stalled.getBytes(StandardCharsets.ISO_8859_1));
                    long began = System.nanoTime();
                    try {
                        assertEquals(-1, socket.getInputStream().read(), "closed, nothing answered");
                    } catch (java.net.SocketException reset) {
                        // closed with unread bytes on its side: a reset, as good as a close
                    }
                    long millis = (System.nanoTime() - began) / 1_000_000;
                    assertTrue(millis < 5_000, "closed after " + millis + " ms");
                }
            }
            try (Socket idle = new Socket("127.0.0.1", quick.port())) {
                idle.setSoTimeout(5_000);
                Thread.sleep(1_500); // three timeouts, with no request begun
                idle.getOutputStream().write("GET /api/v1/rules HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
                byte[] head = new byte[12];
                int n = idle.getInputStream().readNBytes(head, 0, head.length);
                assertEquals("HTTP/1.1 200", new String(head, 0, n, StandardCharsets.ISO_8859_1), "the idle connection still serves");
            }
        }
    }

    /** Without the token, a request is refused on its head: the server does not wait for (and hold) its body. */
    @Test
    void aRequestWithoutTheTokenIsRefusedBeforeItsBody() throws Exception {
        try (AdminServer guarded = AdminServer.start(proxy, "127.0.0.1", 0, "s3cret")) {
            try (Socket socket = new Socket("127.0.0.1", guarded.port())) {
                socket.setSoTimeout(5_000);
                socket.getOutputStream().write("POST /api/v1/rules HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n"
                        .getBytes(StandardCharsets.ISO_8859_1));
                String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
                assertTrue(answer.startsWith("HTTP/1.1 401 "), answer);
                assertTrue(answer.toLowerCase(java.util.Locale.ROOT).contains("www-authenticate: bearer realm=\"blackpipe\""), answer);
            }
        }
    }
}
