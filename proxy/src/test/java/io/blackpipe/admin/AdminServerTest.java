package io.blackpipe.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.topology.Member;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The admin HTTP server of a proxy in front of a two-member scripted replica set: Prometheus text
 * with per-member connection meters that move with real driver traffic, a JSON health document,
 * 404 for unknown paths and 405 for anything but GET.
 */
class AdminServerTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{([^}]*)\\})? (\\S+)$", Pattern.MULTILINE);
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

    private static ScriptedMongod primary;
    private static ScriptedMongod secondary;
    private static ProxyServer proxy;
    private static AdminServer admin;
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    @BeforeAll
    static void start() throws Exception {
        primary = ScriptedMongod.start();
        secondary = ScriptedMongod.builder().secondary().primary(primary.address()).start();
        primary.setAdvertisedHosts(List.of(primary.address(), secondary.address()));
        secondary.setAdvertisedHosts(List.of(primary.address(), secondary.address()));
        proxy = ProxyServer.start(ProxyConfig.embedded("mongodb://" + primary.address() + "/?replicaSet=" + ScriptedMongod.SET_NAME));
        admin = AdminServer.start(proxy, "127.0.0.1", 0);
    }

    @AfterAll
    static void stop() {
        if (admin != null) {
            admin.close();
        }
        if (proxy != null) {
            proxy.close();
        }
        if (secondary != null) {
            secondary.close();
        }
        if (primary != null) {
            primary.close();
        }
    }

    /**
     * A request that waits (a failover for the node's aborts, a restart for its step-down; here a rule for the parser a
     * scenario read holds) holds no other: /health, /metrics and the API answer meanwhile. They all waited on the admin
     * server's one event loop.
     */
    @Test
    void aRequestThatWaitsHoldsNoOtherConnectionsRequests() throws Exception {
        java.util.concurrent.CountDownLatch held = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CompletableFuture<Boolean> holding = java.util.concurrent.CompletableFuture.supplyAsync(
                () -> proxy.ruleParser().parseTogether(() -> { // as a scenario being read holds it
                    held.countDown();
                    try {
                        return release.await(30, java.util.concurrent.TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                }));
        assertTrue(held.await(10, java.util.concurrent.TimeUnit.SECONDS), "the parser is held");
        java.util.concurrent.CompletableFuture<HttpResponse<String>> waiting;
        try {
            waiting = HTTP.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + admin.port() + "/api/v1/rules"))
                    .POST(HttpRequest.BodyPublishers.ofString("{id: 'waits', configureFailPoint: 'failCommand', mode: 'alwaysOn',"
                            + " data: {failCommands: ['find'], errorCode: 2}}")).build(), HttpResponse.BodyHandlers.ofString());
            Await.until(TIMEOUT, "the rule's request to wait for the parser", () -> Thread.getAllStackTraces().entrySet().stream()
                    .anyMatch(thread -> thread.getKey().getName().startsWith("blackpipe-admin") && java.util.Arrays.stream(thread.getValue())
                            .anyMatch(frame -> frame.getClassName().endsWith("RuleParser"))));
            assertEquals(200, send("GET", "/health").statusCode(), "answered within its 5 s while the rule waits");
            assertEquals(200, send("GET", "/metrics").statusCode());
            assertEquals(200, send("GET", "/api/v1/members").statusCode());
            assertTrue(!waiting.isDone(), "the rule still waits for the parser");
        } finally {
            release.countDown();
        }
        assertTrue(holding.get(10, java.util.concurrent.TimeUnit.SECONDS));
        HttpResponse<String> added = waiting.get(10, java.util.concurrent.TimeUnit.SECONDS);
        assertEquals(201, added.statusCode(), added::body);
        proxy.rules().remove("waits");
    }

    private static HttpResponse<String> send(String method, String path) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + admin.port() + path))
                .timeout(Duration.ofSeconds(5))
                .method(method, method.equals("POST") ? HttpRequest.BodyPublishers.ofString("{}") : HttpRequest.BodyPublishers.noBody())
                .build();
        return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    }

    /** Every sample of {@code name} whose labels include {@code labels}, from Prometheus text. */
    private static List<Double> samples(String text, String name, Map<String, String> labels) {
        List<Double> values = new ArrayList<>();
        Matcher sample = SAMPLE.matcher(text);
        while (sample.find()) {
            if (!sample.group(1).equals(name)) {
                continue;
            }
            Map<String, String> found = new HashMap<>();
            if (sample.group(2) != null) {
                Matcher label = LABEL.matcher(sample.group(2));
                while (label.find()) {
                    found.put(label.group(1), label.group(2));
                }
            }
            if (found.entrySet().containsAll(labels.entrySet())) {
                values.add(Double.parseDouble(sample.group(3)));
            }
        }
        return values;
    }

    /** The one sample of {@code name} for {@code member} (and extra labels); fails if there is not exactly one. */
    private static double value(String text, String name, String member, String... extraLabels) {
        Map<String, String> labels = new HashMap<>();
        labels.put("member", member);
        for (int i = 0; i < extraLabels.length; i += 2) {
            labels.put(extraLabels[i], extraLabels[i + 1]);
        }
        List<Double> values = samples(text, name, labels);
        assertEquals(1, values.size(), () -> "expected one sample of " + name + labels + " in:\n" + text);
        return values.get(0);
    }

    private static String metrics() throws Exception {
        HttpResponse<String> response = send("GET", "/metrics");
        assertEquals(200, response.statusCode());
        return response.body();
    }

    private static List<String> memberNames() {
        return proxy.members().stream().map(m -> m.upstream().toString()).toList();
    }

    @Test
    void metricsListEveryMemberAndFollowADriversConnections() throws Exception {
        HttpResponse<String> response = send("GET", "/metrics");
        assertEquals(200, response.statusCode());
        assertTrue(response.headers().firstValue("content-type").orElse("").startsWith("text/plain"), response.headers().toString());
        String before = response.body();
        assertEquals(List.of(primary.address(), secondary.address()), memberNames());
        assertTrue(before.contains("# TYPE blackpipe_connections_open gauge"), before);
        for (String member : memberNames()) {
            assertTrue(before.contains("blackpipe_connections_open{member=\"" + member + "\"}"), () -> member + " missing:\n" + before);
            assertEquals(0.0, value(before, "blackpipe_connections_open", member));
        }
        double acceptedBefore = value(before, "blackpipe_connections_total", primary.address());

        try (MongoClient client = MongoClients.create(proxy.connectionString() + "&serverSelectionTimeoutMS=10000")) {
            client.getDatabase("admin").runCommand(new Document("ping", 1));
            client.getDatabase("m").getCollection("c").insertOne(new Document("x", 1));
            // monitor + RTT + pool on the primary, monitor + RTT on the secondary
            Await.until(TIMEOUT, "open connections on both members in /metrics", () -> {
                try {
                    String during = metrics();
                    return value(during, "blackpipe_connections_open", primary.address()) >= 2
                            && value(during, "blackpipe_connections_open", secondary.address()) >= 1;
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            Await.until(TIMEOUT, "/metrics and proxy.openConnections to agree on every member", () -> {
                try {
                    String scraped = metrics();
                    for (Member member : proxy.members()) {
                        if (value(scraped, "blackpipe_connections_open", member.upstream().toString())
                                != proxy.openConnections(member.upstream())) {
                            return false;
                        }
                    }
                    return true;
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            String during = metrics();
            assertTrue(value(during, "blackpipe_connections_total", primary.address()) >= acceptedBefore + 2);
            assertTrue(value(during, "blackpipe_bytes_total", primary.address(), "direction", "client_to_upstream") > 0);
            assertTrue(value(during, "blackpipe_bytes_total", primary.address(), "direction", "upstream_to_client") > 0);
            assertTrue(during.contains("# HELP blackpipe_bytes_total Bytes read from the clients (client_to_upstream, faulted commands"
                    + " included: not all reach the member) and from the member (upstream_to_client)\n"), "not 'forwarded': a reset command is counted");
        }
        Await.until(TIMEOUT, "every connection closed in /metrics", () -> {
            try {
                String after = metrics();
                return value(after, "blackpipe_connections_open", primary.address()) == 0
                        && value(after, "blackpipe_connections_open", secondary.address()) == 0;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        String after = metrics();
        assertTrue(value(after, "blackpipe_connections_total", primary.address()) >= acceptedBefore + 2,
                "the accepted-connections counter does not go back down");
    }

    @Test
    void healthIsJsonWithStatusAndMembers() throws Exception {
        HttpResponse<String> response = send("GET", "/health");
        assertEquals(200, response.statusCode());
        assertEquals("application/json", response.headers().firstValue("content-type").orElse(""));
        BsonDocument health = BsonDocument.parse(response.body());
        assertEquals("ok", health.getString("status").getValue());
        assertEquals("replica set", health.getString("deployment").getValue());
        assertEquals(proxy.connectionString(), health.getString("connectionString").getValue());
        BsonArray members = health.getArray("members");
        assertEquals(proxy.members().size(), members.size());
        for (int i = 0; i < members.size(); i++) {
            BsonDocument listed = members.get(i).asDocument();
            Member member = proxy.members().get(i);
            assertEquals(member.upstream().toString(), listed.getString("upstream").getValue());
            assertEquals(member.advertised().toString(), listed.getString("advertised").getValue());
            BsonValue open = listed.get("openConnections");
            assertTrue(open != null && open.isNumber(), listed::toJson);
        }
    }

    @Test
    void anAdminHostThatDoesNotResolveFailsTheStartSayingSo() {
        IllegalStateException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
                () -> AdminServer.start(proxy, "999.1.1.1", 0).close());
        assertEquals("cannot start the admin server on 999.1.1.1:0: '999.1.1.1' is neither an IP address nor a host name that resolves",
                e.getMessage());
    }

    @Test
    void anUnknownPathIs404() throws Exception {
        HttpResponse<String> response = send("GET", "/toxics");
        assertEquals(404, response.statusCode());
        assertTrue(response.body().contains("/toxics"), response.body());
    }

    @Test
    void anythingButGetIs405() throws Exception {
        for (String path : List.of("/metrics", "/health")) {
            HttpResponse<String> post = send("POST", path);
            assertEquals(405, post.statusCode(), "POST " + path);
            HttpResponse<String> delete = send("DELETE", path);
            assertEquals(405, delete.statusCode(), "DELETE " + path);
        }
        HttpResponse<String> stillUp = send("GET", "/health");
        assertEquals(200, stillUp.statusCode());
    }
}
