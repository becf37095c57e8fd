package io.blackpipe.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.blackpipe.fault.Failover;
import io.blackpipe.fault.RuleParser;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.testing.UpstreamLane;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What an API designer's review of the control plane found: a body nested deep enough went unanswered (and a stored one
 * broke every later listing), a rule id the API took could not be named in its paths, two ids with bad UTF-8 named the
 * same rule, a role no member had during an election was a 400 here and "reset 0" there, /health refused HEAD, and an
 * HTTP/1.1 request without Host was answered. Real proxy, real upstream (a simulated set over the lane's node).
 */
class AdminRequestLimitsTest {
    private static final String RULE = "{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['find'], errorCode: 2}}";

    private ProxyServer proxy;
    private AdminServer admin;

    @BeforeEach
    void start() {
        proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.singleNodeUri()).withSimulatedMembers(3));
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

    private static void assertRefused(int status, String messagePart, HttpResponse<String> answer) {
        assertEquals(status, answer.statusCode(), () -> answer.request().method() + " " + answer.request().uri() + ": " + answer.body());
        String error = BsonDocument.parse(answer.body()).getString("error").getValue();
        assertTrue(error.contains(messagePart), () -> "expected '" + messagePart + "' in: " + error);
    }

    private static String nested(String inner, int depth) {
        return "{$not: ".repeat(depth) + inner + "}".repeat(depth);
    }

    @Test
    void aBodyNestedDeeperThanAHundredLevelsIsRefusedAndTheListingStillAnswers() throws Exception {
        String deepMatch = "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2,"
                + " commandMatches: {filter: {a: " + nested("{$eq: 1}", 1_000) + "}}}}";
        assertRefused(400, "body: nested deeper than 100 levels (documents and arrays), at character", send("PUT", "/api/v1/rules/deep", deepMatch));
        String deepCanned = "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], cannedReply: {ok: 1, x: "
                + "[".repeat(3_000) + "]".repeat(3_000) + "}}}";
        assertRefused(400, "nested deeper than 100 levels", send("PUT", "/api/v1/rules/canned", deepCanned));
        // refused whole: a driver's find gets the server's document, neither error 2 nor the canned reply
        String db = UpstreamLane.freshDatabaseName("deep_refused");
        try (MongoClient client = MongoClients.create(proxy.connectionString()); MongoClient direct = UpstreamLane.directClient()) {
            client.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1).append("a", 1));
            assertEquals(1, client.getDatabase(db).getCollection("c").find(new Document("a", 1)).first().getInteger("_id"));
            assertEquals(1, direct.getDatabase(db).getCollection("c").countDocuments(), "the server holds the write");
        }
        assertTrue(proxy.rules().rules().isEmpty(), "nothing of the refused rules was kept");
        assertEquals(200, send("PUT", "/api/v1/rules/fine", RULE).statusCode());
        // brackets in a string are no nesting
        String quoted = "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'],"
                + " cannedReply: {ok: 0, errmsg: '" + "{[".repeat(200) + "', n: \"]}\\\"{{\"}}}";
        HttpResponse<String> quotedAnswer = send("PUT", "/api/v1/rules/quoted", quoted);
        assertEquals(200, quotedAnswer.statusCode(), quotedAnswer::body);
        HttpResponse<String> listing = send("GET", "/api/v1/rules", null);
        assertEquals(200, listing.statusCode(), listing::body);
        assertEquals(2, BsonDocument.parse(listing.body()).getArray("rules").size(), listing::body);
    }

    @Test
    void aRuleIdLongerThanThePathsCanCarryIsRefusedAndTheLongestTakenCanBeRemoved() throws Exception {
        String tooLong = "r".repeat(RuleParser.MAX_ID_LENGTH + 1);
        assertRefused(400, "id: is 257 characters long; at most 256", send("POST", "/api/v1/rules", "{id: '" + tooLong + "', " + RULE.substring(1)));
        String longest = "\u2713".repeat(RuleParser.MAX_ID_LENGTH); // 9 bytes each in the path, percent-encoded
        assertEquals(201, send("POST", "/api/v1/rules", "{id: '" + longest + "', " + RULE.substring(1)).statusCode());
        HttpResponse<String> fired = send("GET", "/api/v1/rules/" + AdminHttp.encode(longest) + "/fired", null);
        assertEquals(200, fired.statusCode(), fired::body);
        assertEquals(200, send("DELETE", "/api/v1/rules/" + AdminHttp.encode(longest), null).statusCode());
        assertTrue(proxy.rules().rules().isEmpty());
        String emoji = "\uD83D\uDE00".repeat(RuleParser.MAX_ID_LENGTH); // characters, not UTF-16 units: 256, 12 bytes each encoded
        assertEquals(200, send("PUT", "/api/v1/rules/" + AdminHttp.encode(emoji), RULE).statusCode());
        assertEquals(200, send("DELETE", "/api/v1/rules/" + AdminHttp.encode(emoji), null).statusCode());
    }

    /** `fault add` printed a note for a misspelt command; the API said a bare 201 (the rule is taken: it may be meant). */
    @Test
    void aMisspeltCommandNameGetsANoteFromTheApiToo() throws Exception {
        String misspelt = "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['insret'], errorCode: 2}}";
        for (HttpResponse<String> taken : List.of(send("POST", "/api/v1/rules", misspelt), send("PUT", "/api/v1/rules/typo", misspelt))) {
            assertTrue(taken.statusCode() == 201 || taken.statusCode() == 200, taken::body);
            String note = BsonDocument.parse(taken.body()).getArray("notes").get(0).asString().getValue();
            assertTrue(note.startsWith("data.failCommands: 'insret' is no command blackpipe knows: did you mean 'insert'"), note);
        }
        assertTrue(!BsonDocument.parse(send("PUT", "/api/v1/rules/fine", RULE).body()).containsKey("notes"), "none for a known name");
    }

    @Test
    void aPathSegmentThatIsNoUtf8IsRefusedNotReplaced() throws Exception {
        assertRefused(400, "segment 'bad%FFbyte' is not UTF-8 once decoded", send("PUT", "/api/v1/rules/bad%FFbyte", RULE));
        assertEquals(200, send("PUT", "/api/v1/rules/caf%C3%A9", RULE).statusCode());
        assertEquals(List.of("café"), proxy.rules().rules().stream().map(rule -> rule.id()).toList());
        assertRefused(400, "not UTF-8", send("DELETE", "/api/v1/rules/caf%FE", null));
        assertEquals(1, proxy.rules().rules().size(), "U+FFFD made 'caf%FE' name another rule's replaced id");
        // bytes sent raw, not percent-encoded: UTF-8 too
        assertTrue(raw("GET /api/v1/rules/caf\u00c3\u00a9/fired HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").startsWith("HTTP/1.1 200 "));
        String lone = raw("GET /api/v1/rules/caf\u00e9/fired HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        assertTrue(lone.startsWith("HTTP/1.1 400 ") && lone.contains("path /api/v1/rules/caf%E9/fired: segment 'caf%E9' is not UTF-8"), lone);
        // a request target in absolute form is its path (RFC 9112 3.2.2)
        assertTrue(raw("GET http://127.0.0.1:1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").startsWith("HTTP/1.1 200 "));
        String emptyPath = raw("GET http://127.0.0.1:1?x=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        assertTrue(emptyPath.contains("no resource at /\n"), emptyPath);
    }

    @Test
    void aRoleNoMemberHasDuringAnElectionIsAConflictEverywhere() throws Exception {
        proxy.failover(new Failover(60_000, 0));
        for (String action : List.of("outage", "blackhole", "restart", "restore")) {
            assertRefused(409, "no member is primary now", send("POST", "/api/v1/members/primary/" + action, null));
        }
        assertRefused(409, "no member is primary now", send("POST", "/api/v1/connections/reset?member=primary", null));
        assertRefused(409, "an election is under way", send("POST", "/api/v1/failover", null));
        assertRefused(400, "no member 'nowhere'", send("POST", "/api/v1/connections/reset?member=nowhere", null));
        assertEquals(200, send("POST", "/api/v1/connections/reset?member=secondary", null).statusCode());
    }

    @Test
    void headAsksHealthAndMetricsAsGetDoesWithoutTheBody() throws Exception {
        for (String path : List.of("/health", "/metrics")) {
            String answer = raw("HEAD " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
            assertTrue(answer.startsWith("HTTP/1.1 200 "), answer);
            long length = Long.parseLong(answer.lines().filter(l -> l.toLowerCase().startsWith("content-length:")).findFirst()
                    .orElseThrow().substring("content-length:".length()).strip());
            assertTrue(length > 0, answer);
            assertTrue(answer.endsWith("\r\n\r\n"), () -> "no body: " + answer);
        }
    }

    @Test
    void anHttp11RequestWithoutHostIsRefusedAndAByteOrderMarkIsNoError() throws Exception {
        String answer = raw("GET /api/v1/rules HTTP/1.1\r\nConnection: close\r\n\r\n");
        assertTrue(answer.startsWith("HTTP/1.1 400 "), answer);
        assertTrue(answer.contains("an HTTP/1.1 request needs a Host header"), answer);
        assertTrue(raw("GET /health HTTP/1.0\r\n\r\n").startsWith("HTTP/1.1 200 "), "HTTP/1.0 has no Host to require");

        assertEquals(200, send("PUT", "/api/v1/rules/bom", "\uFEFF" + RULE, "Content-Type", "application/json").statusCode());
    }

    private String raw(String request) throws IOException {
        return AdminHttpRequests.raw(admin.port(), request.getBytes(StandardCharsets.ISO_8859_1));
    }
}
