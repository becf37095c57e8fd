package io.blackpipe.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.connection.ConnectionId;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.testing.UpstreamLane;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What the admin server checks before a request changes anything: the query parameters a route reads
 * (a misspelt one used to be ignored, so `outage?durration=1s` lasted until restore and
 * `connections/reset?membr=primary` reset every member), the method (a 405 lists the allowed ones in
 * Allow), and the token (a 401 says which scheme in WWW-Authenticate). Real proxy, real upstream, and
 * a real driver whose pooled connection shows whether a refused reset happened anyway.
 */
class AdminRequestChecksTest {
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

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

    private static HttpResponse<String> send(AdminServer server, String method, String path) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                .timeout(Duration.ofSeconds(10)).method(method, HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> send(String method, String path) throws Exception {
        return send(admin, method, path);
    }

    private static void assertRefused(int status, String messagePart, HttpResponse<String> answer) {
        assertEquals(status, answer.statusCode(), () -> answer.request().method() + " " + answer.request().uri() + ": " + answer.body());
        String error = BsonDocument.parse(answer.body()).getString("error").getValue();
        assertTrue(error.contains(messagePart), () -> "expected '" + messagePart + "' in: " + error);
    }

    private String primaryState() throws Exception {
        BsonValue member = BsonDocument.parse(send("GET", "/api/v1/members").body()).getArray("members").get(0);
        return member.asDocument().getString("state").getValue();
    }

    @Test
    void aMisspeltDurationIsRefusedInsteadOfAnOutageUntilRestore() throws Exception {
        assertRefused(400, "query parameter 'durration': unknown on /api/v1/members/primary/outage (it takes duration)",
                send("POST", "/api/v1/members/primary/outage?durration=1s"));
        assertRefused(400, "query parameter 'durration'", send("POST", "/api/v1/members/primary/blackhole?durration=1s"));
        assertRefused(400, "query parameter 'duration': given 2 times",
                send("POST", "/api/v1/members/primary/outage?duration=1s&duration=1h"));
        assertRefused(400, "query parameter 'duration': unknown on /api/v1/members/primary/restore, which takes none",
                send("POST", "/api/v1/members/primary/restore?duration=1s"));
        assertEquals("up", primaryState(), "a refused request changes nothing");
    }

    @Test
    void aMisspeltMemberIsRefusedInsteadOfResettingEveryConnection() throws Exception {
        List<ConnectionId> finds = new CopyOnWriteArrayList<>();
        CommandListener findConnections = new CommandListener() {
            @Override
            public void commandStarted(CommandStartedEvent event) {
                if (event.getCommandName().equals("find")) {
                    finds.add(event.getConnectionDescription().getConnectionId());
                }
            }
        };
        MongoClientSettings settings = MongoClientSettings.builder().applyConnectionString(new ConnectionString(proxy.connectionString()))
                .applyToConnectionPoolSettings(pool -> pool.maxSize(1)).addCommandListener(findConnections).build();
        try (MongoClient client = MongoClients.create(settings)) {
            MongoCollection<Document> c = client.getDatabase(UpstreamLane.freshDatabaseName("querycheck")).getCollection("c");
            c.find().first();
            assertRefused(400, "query parameter 'membr': unknown on /api/v1/connections/reset (it takes member)",
                    send("POST", "/api/v1/connections/reset?membr=primary"));
            c.find().first();
        }
        // a reset connection would have been replaced: the second find would run on a new one
        assertEquals(2, finds.size());
        assertEquals(finds.get(0), finds.get(1), "the pooled connection was not reset");
    }

    @Test
    void historyAndEveryOtherRouteRefuseParametersTheyDoNotRead() throws Exception {
        assertRefused(400, "query parameter 'sinse': unknown on /api/v1/history (it takes follow, since)",
                send("GET", "/api/v1/history?sinse=2020-01-01T00:00:00Z"));
        assertRefused(400, "follow: must be true or false, got 'yes'", send("GET", "/api/v1/history?follow=yes"));
        assertEquals(200, send("GET", "/api/v1/history?follow=false").statusCode());
        assertRefused(400, "since: not with follow=true", send("GET", "/api/v1/history?follow=true&since=2020-01-01T00:00:00Z"));
        for (String[] request : List.of(new String[] {"GET", "/api/v1/stats?command=insert"},
                new String[] {"DELETE", "/api/v1/rules?id=a"}, new String[] {"POST", "/api/v1/reset?member=primary"})) {
            assertRefused(400, "unknown on " + request[1].substring(0, request[1].indexOf('?')) + ", which takes none",
                    send(request[0], request[1]));
        }
        assertRefused(400, "query parameter 'member': unknown on /api/v1/failover (it takes election, rollback)",
                send("POST", "/api/v1/failover?member=primary"));
    }

    @Test
    void aWrongMethodIs405ListingTheAllowedOnesInAllow() throws Exception {
        HttpResponse<String> rules = send("PATCH", "/api/v1/rules");
        assertRefused(405, "PATCH is not allowed on /api/v1/rules (allowed: GET, POST, DELETE)", rules);
        assertEquals("GET, POST, DELETE", rules.headers().firstValue("allow").orElse("(none)"));
        assertEquals("GET, PUT, DELETE", send("POST", "/api/v1/rules/a").headers().firstValue("allow").orElse("(none)"));
        HttpResponse<String> failover = send("GET", "/api/v1/failover");
        assertRefused(405, "GET is not allowed on /api/v1/failover (allowed: POST)", failover);
        assertEquals("POST", failover.headers().firstValue("allow").orElse("(none)"));
        HttpResponse<String> health = send("POST", "/health");
        assertEquals(405, health.statusCode());
        assertEquals("GET, HEAD", health.headers().firstValue("allow").orElse("(none)"));
    }

    /** An API client reads JSON: a path under /api/ that is no resource of /api/v1/ is a JSON 404 too (it was plain text). */
    @Test
    void aPathUnderApiButOutsideV1IsAJson404() throws Exception {
        for (String path : List.of("/api/v1", "/api/v1x", "/api/v2/rules")) {
            HttpResponse<String> answer = send("GET", path);
            assertTrue(answer.headers().firstValue("content-type").orElse("").startsWith("application/json"), answer::toString);
            assertRefused(404, "no resource at " + path + " (the API's resources are under /api/v1/)", answer);
        }
        HttpResponse<String> elsewhere = send("GET", "/nothing");
        assertEquals(404, elsewhere.statusCode());
        assertEquals("no resource at /nothing\n", elsewhere.body()); // outside the API, as /metrics and /health, plain text
    }

    @Test
    void anUnknownMemberActionIs404NamingThePath() throws Exception {
        assertRefused(404, "no resource at /api/v1/members/primary/explode", send("POST", "/api/v1/members/primary/explode"));
        assertRefused(404, "no resource at /api/v1/members/primary/explode",
                send("POST", "/api/v1/members/primary/explode?duration=soon"));
    }

    @Test
    void aRequestWithoutTheTokenIs401SayingWhichScheme() throws Exception {
        try (AdminServer guarded = AdminServer.start(proxy, "127.0.0.1", 0, "s3cret")) {
            HttpResponse<String> refused = send(guarded, "GET", "/api/v1/rules");
            assertRefused(401, "Authorization: Bearer", refused);
            assertEquals("Bearer realm=\"blackpipe\"", refused.headers().firstValue("www-authenticate").orElse("(none)"));
        }
    }
}
