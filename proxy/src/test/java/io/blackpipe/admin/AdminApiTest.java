package io.blackpipe.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoSocketException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.blackpipe.fault.Bandwidth;
import io.blackpipe.fault.Direction;
import io.blackpipe.fault.Latency;
import io.blackpipe.fault.Direction;
import io.blackpipe.pipe.MemberListener;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.CommandLog;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.topology.Member;
import io.blackpipe.topology.MemberState;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The control API under /api/v1 over real HTTP: rules, scenario, members, connections, stats,
 * history; bad input refused whole with a 400 naming the field; the bearer token; 404 and 405;
 * and rules added over HTTP breaking real driver traffic.
 */
class AdminApiTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{([^}]*)\\})? (\\S+)$", Pattern.MULTILINE);
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");
    private static final String FIND_ERROR = "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2}}";

    private ProxyServer proxy;
    private AdminServer admin;
    private MongoClient direct;
    private final List<MongoClient> clients = new ArrayList<>();
    private final List<AdminServer> extraAdmins = new ArrayList<>();
    private final CommandLog log = new CommandLog();

    @BeforeEach
    void start() {
        proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()));
        admin = AdminServer.start(proxy, "127.0.0.1", 0, null);
        direct = UpstreamLane.directClient();
    }

    @AfterEach
    void stop() {
        clients.forEach(MongoClient::close);
        extraAdmins.forEach(AdminServer::close);
        direct.close();
        admin.close();
        proxy.close();
    }

    // ------------------------------------------------------------------ helpers

    private static HttpResponse<String> send(AdminServer server, String method, String path, String body, String authorization)
            throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                .timeout(Duration.ofSeconds(10))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (body != null) {
            request.header("Content-Type", body.startsWith("{") || body.startsWith("[") ? "application/json" : "application/yaml");
        }
        if (authorization != null) {
            request.header("Authorization", authorization);
        }
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> send(String method, String path, String body) throws IOException, InterruptedException {
        return send(admin, method, path, body, null);
    }

    private HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return send("GET", path, null);
    }

    private static BsonDocument json(HttpResponse<String> response) {
        assertTrue(response.headers().firstValue("content-type").orElse("").startsWith("application/json"), response::toString);
        return BsonDocument.parse(response.body());
    }

    private static void assertStatus(int status, HttpResponse<String> response) {
        assertEquals(status, response.statusCode(), () -> response.request().method() + " " + response.request().uri() + " -> "
                + response.statusCode() + " " + response.body());
    }

    /** A 400 whose error names {@code field}. */
    private static void assertBadRequest(HttpResponse<String> response, String messagePart) {
        assertRefused(400, response, messagePart);
    }

    private static void assertRefused(int status, HttpResponse<String> response, String messagePart) {
        assertStatus(status, response);
        String error = json(response).getString("error").getValue();
        assertTrue(error.contains(messagePart), () -> "expected '" + messagePart + "' in: " + error);
    }

    private List<String> ruleIds() throws Exception {
        HttpResponse<String> response = get("/api/v1/rules");
        assertStatus(200, response);
        List<String> ids = new ArrayList<>();
        for (BsonValue rule : json(response).getArray("rules")) {
            ids.add(rule.asDocument().getString("id").getValue());
        }
        assertEquals(proxy.rules().rules().stream().map(r -> r.id()).toList(), ids, "the API lists what the proxy holds");
        return ids;
    }

    private BsonDocument listedRule(String id) throws Exception {
        for (BsonValue rule : json(get("/api/v1/rules")).getArray("rules")) {
            if (rule.asDocument().getString("id").getValue().equals(id)) {
                return rule.asDocument();
            }
        }
        throw new AssertionError("no rule " + id);
    }

    private MongoClient client(String options) {
        MongoClient client = MongoClients.create(log.driverOn(CommandLog.withOptions(proxy.connectionString(),
                        "socketTimeoutMS=10000&" + options))
                .applicationName("admin-api-test")
                .build());
        clients.add(client);
        return client;
    }

    private Member primary() {
        return proxy.members().stream().filter(m -> proxy.memberState(m.upstream()).role() == MemberState.Role.PRIMARY)
                .findFirst().orElseThrow();
    }

    /** The member with this upstream host:port, as GET /members lists it. */
    private BsonDocument listedMember(String upstream) throws Exception {
        return json(get("/api/v1/members")).getArray("members").stream().map(BsonValue::asDocument)
                .filter(d -> d.getString("upstream").getValue().equals(upstream)).findFirst().orElseThrow();
    }

    private String memberState(String upstream) throws Exception {
        return listedMember(upstream).getString("state").getValue();
    }

    private static boolean refuses(Member member) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(member.advertised().host(), member.advertised().port()), 2_000);
            return false;
        } catch (ConnectException e) {
            return true;
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    // ------------------------------------------------------------------ rules

    @Test
    void rulesCanBeAddedListedReplacedAndRemoved() throws Exception {
        assertEquals(List.of(), ruleIds());

        HttpResponse<String> created = send("POST", "/api/v1/rules", FIND_ERROR);
        assertStatus(201, created);
        String generated = json(created).getString("id").getValue();
        assertFalse(generated.isBlank());

        HttpResponse<String> named = send("POST", "/api/v1/rules",
                "{id: 'mine', configureFailPoint: 'failCommand', mode: {times: 3}, data: {failCommands: ['insert'], closeConnection: true}}");
        assertStatus(201, named);
        assertEquals("mine", json(named).getString("id").getValue());
        assertEquals(List.of(generated, "mine"), ruleIds());
        assertEquals(generated, listedRule(generated).getDocument("rule").getString("id").getValue(),
                "a rule posted without an id is listed with the one it got, so the document can be sent again or removed");
        BsonDocument mine = listedRule("mine");
        assertEquals("closeConnection", mine.getString("fault").getValue());
        assertEquals(List.of("insert"), mine.getDocument("rule").getDocument("data").getArray("failCommands").stream()
                .map(v -> v.asString().getValue()).toList());
        assertTrue(mine.containsKey("mode"));

        // PUT replaces the rule of that id, and twice is the same as once
        String hang = "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['insert'], hang: true}}";
        assertStatus(200, send("PUT", "/api/v1/rules/mine", hang));
        String afterOnce = get("/api/v1/rules").body();
        assertStatus(200, send("PUT", "/api/v1/rules/mine", hang));
        assertEquals(afterOnce, get("/api/v1/rules").body(), "PUT is idempotent");
        assertEquals("hang", listedRule("mine").getString("fault").getValue());
        assertEquals(List.of(generated, "mine"), ruleIds());
        // GET of one id is that rule as the list gives it
        HttpResponse<String> one = get("/api/v1/rules/mine");
        assertStatus(200, one);
        assertEquals(listedRule("mine"), json(one));
        assertEquals(json(get("/api/v1/rules/" + generated)), listedRule(generated));
        // PUT of a new id creates it
        assertStatus(200, send("PUT", "/api/v1/rules/third", FIND_ERROR));
        assertEquals(List.of(generated, "mine", "third"), ruleIds());

        assertStatus(200, send("DELETE", "/api/v1/rules/mine", null));
        assertEquals(List.of(generated, "third"), ruleIds());
        HttpResponse<String> again = send("DELETE", "/api/v1/rules/mine", null);
        assertStatus(404, again);
        assertTrue(json(again).getString("error").getValue().contains("mine"), again::body);
        HttpResponse<String> gone = get("/api/v1/rules/mine");
        assertStatus(404, gone);
        assertEquals("no rule mine", json(gone).getString("error").getValue());
        assertStatus(404, get("/api/v1/rules/"));

        assertStatus(200, send("DELETE", "/api/v1/rules", null));
        assertEquals(List.of(), ruleIds());
        assertStatus(200, send("DELETE", "/api/v1/rules", null)); // clearing nothing is fine too
    }

    @Test
    void badRuleBodiesAre400NamingTheFieldAndChangeNothing() throws Exception {
        assertStatus(201, send("POST", "/api/v1/rules", "{id: 'keep', " + FIND_ERROR.substring(1)));
        String before = get("/api/v1/rules").body();

        assertBadRequest(send("POST", "/api/v1/rules", "{configureFailPoint: 'failCommand', mode: "), "malformed JSON");
        assertBadRequest(send("POST", "/api/v1/rules", "[1, 2]"), "malformed JSON body: an array where one document {...} was expected");
        // the name as given, and the known ones in order: the README quotes this message
        assertBadRequest(send("POST", "/api/v1/rules", FIND_ERROR.replace("errorCode: 2", "error: 'NoSuchError'")),
                "data.error: unknown error name NoSuchError; known: [APIStrictError, AdmissionQueueOverflow, AuthenticationFailed, BackupCursorOpenConflictWithCheckpoint,");
        assertBadRequest(send("POST", "/api/v1/rules", FIND_ERROR.replace("errorCode: 2", "error: 91")), "data.error: must be an error name");
        assertBadRequest(send("POST", "/api/v1/rules", "   "), "JSON body");
        assertBadRequest(send("POST", "/api/v1/rules",
                "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2}, colour: 'red'}"),
                "colour: unknown field");
        assertBadRequest(send("POST", "/api/v1/rules",
                "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2, colour: 'red'}}"),
                "data.colour: unknown field");
        assertBadRequest(send("POST", "/api/v1/rules",
                "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 'x'}}"),
                "data.errorCode: must be an integer");
        assertBadRequest(send("POST", "/api/v1/rules",
                "{configureFailPoint: 'failCommand', mode: 5, data: {failCommands: ['find'], errorCode: 2}}"), "mode");
        assertBadRequest(send("POST", "/api/v1/rules",
                "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: 'find', errorCode: 2}}"), "data.failCommands");
        assertBadRequest(send("POST", "/api/v1/rules", "{configureFailPoint: 'failCommand', mode: 'off'}"), "mode");
        // a bad replacement leaves the rule it would have replaced
        assertBadRequest(send("PUT", "/api/v1/rules/keep",
                "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], hang: 'yes'}}"), "data.hang");

        assertEquals(before, get("/api/v1/rules").body(), "the rules stay as they were");
        assertEquals(List.of("keep"), ruleIds());
        assertEquals("errorReply", listedRule("keep").getString("fault").getValue());
    }

    @Test
    void aRuleBodyWithTrailingContentIsRefusedWhole() throws Exception {
        String insertReset = FIND_ERROR.replace("'find'], errorCode: 2", "'insert'], resetConnection: true");
        assertBadRequest(send("POST", "/api/v1/rules", FIND_ERROR + " " + insertReset), "trailing content after the document: '{");
        assertBadRequest(send("POST", "/api/v1/rules", FIND_ERROR + " and more"), "trailing content after the document: 'and more'");
        assertBadRequest(send("PUT", "/api/v1/rules/two", FIND_ERROR + "\n" + insertReset), "trailing content");
        assertEquals(List.of(), ruleIds(), "not the first of the two either");
        assertStatus(201, send("POST", "/api/v1/rules", FIND_ERROR + " \n\t")); // white space after it is fine
    }

    @Test
    void aRuleIdThatIsNotANonEmptyStringIsRefusedNamingTheField() throws Exception {
        assertBadRequest(send("POST", "/api/v1/rules", "{id: 5, " + FIND_ERROR.substring(1)), "id: must be a string, got int32");
        assertBadRequest(send("POST", "/api/v1/rules", "{id: {team: 'a'}, " + FIND_ERROR.substring(1)), "id: must be a string");
        assertBadRequest(send("POST", "/api/v1/rules", "{id: '', " + FIND_ERROR.substring(1)), "id: must not be empty");
        assertBadRequest(send("PUT", "/api/v1/rules/x", "{id: 5, " + FIND_ERROR.substring(1)), "id: must be a string");
        assertBadRequest(send("PUT", "/api/v1/rules/x", "{id: 'y', " + FIND_ERROR.substring(1)), "id: 'y' differs from 'x'");
        assertEquals(List.of(), ruleIds(), "no rule under a made-up id");
        assertStatus(200, send("PUT", "/api/v1/rules/x", "{id: 'x', " + FIND_ERROR.substring(1)));
        assertEquals(List.of("x"), ruleIds());
    }

    @Test
    void anEmptyRuleIdInThePathIsNotFoundAndOnlyTheBareCollectionClears() throws Exception {
        assertStatus(200, send("PUT", "/api/v1/rules/keep", FIND_ERROR));

        HttpResponse<String> emptyId = send("DELETE", "/api/v1/rules/", null);
        assertStatus(404, emptyId);
        assertTrue(json(emptyId).getString("error").getValue().contains("empty id"), emptyId::body);
        assertStatus(404, send("PUT", "/api/v1/rules/", FIND_ERROR));
        assertEquals(List.of("keep"), ruleIds(), "a trailing slash is not DELETE /api/v1/rules");

        assertStatus(200, send("DELETE", "/api/v1/rules", null));
        assertEquals(List.of(), ruleIds());
    }

    @Test
    void aRuleIdIsPercentDecodedWholeSoItMayHoldASlash() throws Exception {
        assertStatus(200, send("PUT", "/api/v1/rules/team%2Fa", FIND_ERROR));
        assertStatus(200, send("PUT", "/api/v1/rules/a+b%20c", FIND_ERROR));
        assertEquals(List.of("team/a", "a+b c"), ruleIds());

        assertStatus(404, send("DELETE", "/api/v1/rules/team", null));
        assertStatus(200, send("DELETE", "/api/v1/rules/team%2Fa", null));
        assertStatus(200, send("DELETE", "/api/v1/rules/a+b%20c", null));
        assertEquals(List.of(), ruleIds());
        assertTrue(rawStatusLine("DELETE /api/v1/rules/a%zz").startsWith("HTTP/1.1 400"), "a bad escape is answered, not dropped");
        assertTrue(rawStatusLine("POST /api/v1/members/primary/outage?duration=%zz").startsWith("HTTP/1.1 400"));
    }

    /** The status line the admin server answers to {@code requestLine}, sent as is (HttpClient refuses a malformed URI). */
    private String rawStatusLine(String requestLine) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", admin.port())) {
            socket.setSoTimeout(10_000);
            socket.getOutputStream().write((requestLine + " HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                    .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            String answer = new String(socket.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            return answer.lines().findFirst().orElse("(no answer)");
        }
    }

    @Test
    void extraPathSegmentsAndUnknownSubresourcesAre404NamingThePathAndDoNothing() throws Exception {
        assertStatus(200, send("PUT", "/api/v1/rules/a", FIND_ERROR));
        String upstream = primary().upstream().toString();
        for (String[] request : List.of(
                new String[] {"DELETE", "/api/v1/rules/a/whatever", null},
                new String[] {"PUT", "/api/v1/rules/a/b", FIND_ERROR},
                new String[] {"POST", "/api/v1/scenario/validat", SCENARIO},
                new String[] {"POST", "/api/v1/scenario/validate/now", SCENARIO},
                new String[] {"DELETE", "/api/v1/scenario/x", null},
                new String[] {"POST", "/api/v1/members/" + upstream + "/outage/now", null},
                new String[] {"POST", "/api/v1/members/" + upstream, null},
                new String[] {"POST", "/api/v1/connections/reset/all", null},
                new String[] {"POST", "/api/v1/failover/now", null},
                new String[] {"GET", "/api/v1/stats/x", null},
                new String[] {"GET", "/api/v1/history/", null},
                new String[] {"GET", "/api/v1/rules/a/fired/x", null},
                new String[] {"GET", "/api/v1/rules/a/count", null},
                new String[] {"POST", "/api/v1/scenario/bundled/transient-blip/now", null},
                new String[] {"POST", "/api/v1/scenario/shipped/transient-blip", null},
                new String[] {"POST", "/api/v1/reset/all", null})) {
            HttpResponse<String> answer = send(request[0], request[1], request[2]);
            assertStatus(404, answer);
            assertTrue(json(answer).getString("error").getValue().contains("no resource at " + request[1]), answer::body);
        }
        assertEquals(List.of("a"), ruleIds());
        assertEquals("idle", json(get("/api/v1/scenario")).getString("state").getValue(), "no scenario started");
        assertEquals("up", memberState(upstream));
        assertStatus(405, send("GET", "/api/v1/scenario/validate", null));
    }

    @Test
    void aMemberFaultDurationUnderOneMillisecondIsRefused() throws Exception {
        String upstream = primary().upstream().toString();
        for (String duration : List.of("0", "0s", "0.2ms", "0.4")) {
            HttpResponse<String> answer = send("POST", "/api/v1/members/primary/outage?duration=" + duration, null);
            assertBadRequest(answer, duration.contains(".") ? "duration: '" + duration + "' is shorter than 1ms" // not rounded to 0
                    : "duration: must be at least 1ms, got '" + duration + "'");
            assertBadRequest(send("POST", "/api/v1/members/primary/blackhole?duration=" + duration, null), "duration");
        }
        assertEquals("up", memberState(upstream), "a refused request changes nothing");
        assertStatus(200, send("POST", "/api/v1/members/primary/outage?duration=1ms", null));
        Await.until(WAIT, "the 1 ms outage to end", () -> {
            try {
                return memberState(upstream).equals("up");
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
    }

    @Test
    void aBodyOverOneMebibyteIs413() throws Exception {
        assertStatus(201, send("POST", "/api/v1/rules", "{id: 'keep', " + FIND_ERROR.substring(1)));
        String huge = "{id: 'big', configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2},"
                + " padding: '" + "x".repeat(1024 * 1024) + "'}";
        for (int i = 0; i < 5; i++) { // the answer must arrive every time, not a reset while the client still sends
            HttpResponse<String> response = send("POST", "/api/v1/rules", huge);
            assertRefused(413, response, "body: larger than the limit");
            assertEquals(List.of("keep"), ruleIds(), "nothing changed, and the server still answers");
        }
        assertRefused(413, send("PUT", "/api/v1/rules/keep", huge), "body: larger than the limit");
        assertEquals("errorReply", listedRule("keep").getString("fault").getValue());
    }

    // ------------------------------------------------------------------ scenario

    private static final String SCENARIO = """
            name: api-scenario
            description: posted over HTTP
            rules:
              - id: from-scenario
                configureFailPoint: failCommand
                mode: alwaysOn
                data: {failCommands: [find], errorCode: 2}
            timeline:
              - at: 60s
                end: true
            """;

    @Test
    void aScenarioPostedAsYamlRunsReportsItsStatusAndStopsRemovingItsRules() throws Exception {
        assertStatus(201, send("POST", "/api/v1/rules", "{id: 'manual', " + FIND_ERROR.substring(1)));
        assertEquals("idle", json(get("/api/v1/scenario")).getString("state").getValue());

        HttpResponse<String> posted = send("POST", "/api/v1/scenario", SCENARIO);
        assertStatus(200, posted);
        BsonDocument running = json(posted);
        assertEquals("running", running.getString("state").getValue());
        assertEquals("api-scenario", running.getString("name").getValue());
        assertEquals(List.of("manual", "from-scenario"), ruleIds());

        BsonDocument status = json(get("/api/v1/scenario"));
        assertEquals("running", status.getString("state").getValue());
        assertEquals("posted over HTTP", status.getString("description").getValue());
        assertEquals(1, status.getInt32("stepsLeft").getValue());
        assertTrue(status.getBoolean("running").getValue());

        // a bad scenario is refused and leaves the running one alone
        HttpResponse<String> bad = send("POST", "/api/v1/scenario", "name: broken\ntimeline:\n  - at: 1s\n    explode: true\n");
        assertBadRequest(bad, "request body:4: timeline[0].explode: unknown step");
        assertEquals("api-scenario", json(get("/api/v1/scenario")).getString("name").getValue());
        assertEquals(List.of("manual", "from-scenario"), ruleIds());

        HttpResponse<String> stopped = send("DELETE", "/api/v1/scenario", null);
        assertStatus(200, stopped);
        assertEquals("stopped", json(stopped).getString("state").getValue());
        assertEquals("stopped", json(get("/api/v1/scenario")).getString("state").getValue());
        assertEquals(List.of("manual"), ruleIds(), "the scenario's rules are gone, the others stay");
        assertStatus(200, send("DELETE", "/api/v1/scenario", null)); // stopping again is harmless
    }

    @Test
    void aBundledScenarioStartsByNameAndAnUnknownNameIsNotFoundNamingTheBundledOnes() throws Exception {
        HttpResponse<String> started = send("POST", "/api/v1/scenario/bundled/transient-blip", null);
        assertStatus(200, started);
        assertEquals("running", json(started).getString("state").getValue());
        assertEquals("transient-blip", json(started).getString("name").getValue(), "the jar's fault-scripts/transient-blip.yaml");
        assertEquals(List.of("blip"), ruleIds());

        for (String name : List.of("transient-blp", "report%2Fcommand-error", "..%2Ftransient-blip", "")) {
            HttpResponse<String> unknown = send("POST", "/api/v1/scenario/bundled/" + name, null);
            assertStatus(404, unknown);
            String error = json(unknown).getString("error").getValue();
            assertTrue(error.startsWith("no bundled scenario '" + java.net.URLDecoder.decode(name, java.nio.charset.StandardCharsets.UTF_8)
                    + "' (bundled: ") && error.contains("transient-blip, "), error);
        }
        assertEquals("transient-blip", json(get("/api/v1/scenario")).getString("name").getValue(), "a refused name stops nothing");
        assertStatus(405, send("GET", "/api/v1/scenario/bundled/transient-blip", null));
        HttpResponse<String> listed = get("/api/v1/scenario/bundled");
        assertStatus(200, listed);
        List<String> names = json(listed).getArray("bundled").stream().map(v -> v.asString().getValue()).toList();
        assertTrue(names.contains("transient-blip") && names.equals(names.stream().sorted().toList()), names.toString());
        assertTrue(names.stream().noneMatch(n -> n.contains("/")), "the report's own scenarios are not bundled: " + names);
        assertStatus(405, send("POST", "/api/v1/scenario/bundled", null));
        assertStatus(200, send("DELETE", "/api/v1/scenario", null));
        assertEquals(List.of(), ruleIds(), "stopped like any scenario: its rule is gone");
    }

    @Test
    void validateChecksAScenarioWithoutRunningIt() throws Exception {
        HttpResponse<String> bad = send("POST", "/api/v1/scenario/validate", """
                name: broken
                rules:
                  - id: a
                    configureFailPoint: failCommand
                    mode: alwaysOn
                    data:
                      failCommands: [find]
                      errorCode: "x"
                """);
        assertBadRequest(bad, "request body:8: rules[0].data.errorCode: must be an integer");

        HttpResponse<String> unknownMember = send("POST", "/api/v1/scenario/validate",
                "name: m\ntimeline:\n  - at: 1s\n    outage: {member: \"nowhere:1\", duration: 1s}\n");
        assertBadRequest(unknownMember, "request body:4: timeline[0].outage.member: no member 'nowhere:1'");

        HttpResponse<String> good = send("POST", "/api/v1/scenario/validate", SCENARIO);
        assertStatus(200, good);
        assertTrue(json(good).getBoolean("valid").getValue());
        assertEquals("api-scenario", json(good).getString("name").getValue());
        assertEquals("idle", json(get("/api/v1/scenario")).getString("state").getValue(), "validate does not run it");
        assertEquals(List.of(), ruleIds());

        // JSON is a scenario too
        HttpResponse<String> asJson = send("POST", "/api/v1/scenario/validate", "{\"name\": \"j\", \"timeline\": [{\"at\": \"1s\", \"clear\": true}]}");
        assertStatus(200, asJson);
    }

    /** A validated scenario is only checked: its rules take no place in the seeded draws of the rules added after. */
    @Test
    void validatingAScenarioLeavesTheDrawsAsTheyWere() throws Exception {
        String coin = "{configureFailPoint: 'failCommand', mode: {activationProbability: 0.5}, data: {failCommands: ['find'], errorCode: 2}}";
        proxy.ruleParser().restartDraws();
        assertStatus(200, send("PUT", "/api/v1/rules/a", coin));
        List<Boolean> alone = draws("a");
        assertStatus(200, send("DELETE", "/api/v1/rules/a", null));

        proxy.ruleParser().restartDraws();
        assertStatus(200, send("POST", "/api/v1/scenario/validate", "name: v\nrules:\n  - " + coin + "\ntimeline: []\n"));
        assertStatus(200, send("PUT", "/api/v1/rules/a", coin));
        assertEquals(alone, draws("a"), "the rule draws as if nothing had been validated before it");
    }

    /** A scenario refused as it starts (409: an operator's rule holds one of its ids) gives its draws back too. */
    @Test
    void aScenarioRefusedAsItStartsLeavesTheDrawsAsTheyWere() throws Exception {
        String coin = "{configureFailPoint: 'failCommand', mode: {activationProbability: 0.5}, data: {failCommands: ['find'], errorCode: 2}}";
        assertStatus(200, send("PUT", "/api/v1/rules/x", FIND_ERROR)); // the operator's
        proxy.ruleParser().restartDraws();
        assertStatus(200, send("PUT", "/api/v1/rules/a", coin));
        List<Boolean> alone = draws("a");
        assertStatus(200, send("DELETE", "/api/v1/rules/a", null));

        proxy.ruleParser().restartDraws();
        assertStatus(409, send("POST", "/api/v1/scenario", "name: s\nrules:\n  - {id: y, configureFailPoint: failCommand, mode: "
                + "{activationProbability: 0.5}, data: {failCommands: [find], errorCode: 2}}\n  - {id: x, " + "configureFailPoint: failCommand,"
                + " mode: alwaysOn, data: {failCommands: [find], errorCode: 2}}\ntimeline: []\n"));
        assertStatus(200, send("PUT", "/api/v1/rules/a", coin));
        assertEquals(alone, draws("a"), "the rule draws as if the refused scenario had never come");
    }

    private List<Boolean> draws(String ruleId) {
        var mode = proxy.rules().rules().stream().filter(rule -> rule.id().equals(ruleId)).findFirst().orElseThrow().mode();
        List<Boolean> fired = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            fired.add(mode.fire());
        }
        return fired;
    }

    @Test
    void yamlThatWouldExhaustTheLoaderIsABadRequestNotAClosedConnection() throws Exception {
        for (String path : List.of("/api/v1/scenario/validate", "/api/v1/scenario")) {
            assertBadRequest(send("POST", path, "name: x\nrules: &a [*a]\n"), "request body:2: rules[0]: an alias that contains itself");
            StringBuilder laughs = new StringBuilder("name: x\nl0: &l0 [lol, lol]\n");
            for (int i = 1; i < 25; i++) {
                laughs.append("l").append(i).append(": &l").append(i).append(" [*l").append(i - 1).append(", *l").append(i - 1).append("]\n");
            }
            assertBadRequest(send("POST", path, laughs.toString()), "expands to more than 100000 values");
        }
        assertEquals("idle", json(get("/api/v1/scenario")).getString("state").getValue());
        assertStatus(200, get("/api/v1/scenario"));
    }

    // ------------------------------------------------------------------ members

    @Test
    void aRulesFiredCountIsReadByIdAndOutlivesTheRule() throws Exception {
        String db = UpstreamLane.freshDatabaseName("apifired");
        MongoCollection<Document> c = client("retryReads=false").getDatabase(db).getCollection("c");
        assertStatus(200, send("PUT", "/api/v1/rules/team%2Fdeny", FIND_ERROR.replace("'alwaysOn'", "{times: 2}")));
        assertEquals(0, fired("team%2Fdeny"), "nothing faulted yet");
        for (int i = 0; i < 3; i++) {
            try {
                c.find().first();
            } catch (MongoCommandException expected) {
                assertEquals(2, expected.getErrorCode());
            }
        }
        assertEquals(2, fired("team%2Fdeny"), "times: 2 faulted two of the three finds");
        assertEquals(2, listedRule("team/deny").getNumber("fired").longValue(), "as the rule list says");

        assertStatus(200, send("DELETE", "/api/v1/rules/team%2Fdeny", null));
        assertEquals(2, fired("team%2Fdeny"), "the count outlives the rule, as the server's failpoint count does");
        assertEquals(0, fired("never-seen"));
        assertStatus(404, send("GET", "/api/v1/rules//fired", null));
        assertStatus(405, send("POST", "/api/v1/rules/team%2Fdeny/fired", null));
    }

    private long fired(String encodedId) throws Exception {
        HttpResponse<String> answer = get("/api/v1/rules/" + encodedId + "/fired");
        assertStatus(200, answer);
        assertEquals(java.net.URLDecoder.decode(encodedId, java.nio.charset.StandardCharsets.UTF_8),
                json(answer).getString("id").getValue());
        return json(answer).getNumber("fired").longValue();
    }

    @Test
    void resetStopsTheScenarioClearsTheRulesAndTheirCountsAndRestoresTheMembers() throws Exception {
        String db = UpstreamLane.freshDatabaseName("apireset");
        MongoCollection<Document> c = client("retryReads=false").getDatabase(db).getCollection("c");
        assertStatus(200, send("POST", "/api/v1/scenario", SCENARIO));
        assertStatus(201, send("POST", "/api/v1/rules", "{id: 'manual', " + FIND_ERROR.substring(1)));
        assertThrows(MongoCommandException.class, () -> c.find().first());
        assertEquals(1, fired("from-scenario"), "the scenario's rule, first in line, faulted the find");
        Member member = proxy.members().get(0);
        assertStatus(200, send("POST", "/api/v1/members/" + member.upstream() + "/blackhole", null));
        long attemptsBefore = Meters.attempts(proxy.registry(), "find");

        java.time.Instant before = java.time.Instant.now();
        HttpResponse<String> reset = send("POST", "/api/v1/reset", null);
        assertStatus(200, reset);
        java.time.Instant at = java.time.Instant.parse(json(reset).getString("at").getValue());
        assertFalse(at.isBefore(before.minusMillis(1)) || at.isAfter(java.time.Instant.now().plusMillis(1)),
                "the proxy's clock at the reset: " + at);

        assertEquals(List.of(), ruleIds());
        assertEquals("stopped", json(get("/api/v1/scenario")).getString("state").getValue());
        assertEquals("up", memberState(member.upstream().toString()));
        assertEquals(0, fired("from-scenario"), "the rules' counts start again");
        assertEquals(attemptsBefore, Meters.attempts(proxy.registry(), "find"), "/metrics stays monotonic: counters are not reset");
        assertNull(c.find().first(), "nothing faults the find any more");
        assertStatus(405, send("GET", "/api/v1/reset", null));
    }

    @Test
    void membersAreListedAndCanBeTakenDownAndRestored() throws Exception {
        BsonArray members = json(get("/api/v1/members")).getArray("members");
        assertEquals(proxy.members().size(), members.size());
        Member primary = primary();
        String upstream = primary.upstream().toString();
        String advertised = primary.advertised().toString();
        for (BsonValue value : members) {
            BsonDocument member = value.asDocument();
            assertNotNull(member.get("advertised"));
            assertTrue(member.get("openConnections").isNumber());
            assertEquals("up", member.getString("state").getValue());
            if (member.getString("upstream").getValue().equals(upstream)) {
                assertEquals(advertised, member.getString("advertised").getValue());
                assertEquals("primary", member.getString("role").getValue());
            }
        }

        // by the advertised address, for a while
        assertStatus(200, send("POST", "/api/v1/members/" + advertised + "/outage?duration=2s", null));
        assertEquals("outage", memberState(upstream));
        assertTrue(refuses(primary));
        Await.until(WAIT, "the 2 s outage to end", () -> {
            try {
                return memberState(upstream).equals("up");
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        assertFalse(refuses(primary));

        // by the upstream address for 500 ms, ended early by a restore
        assertStatus(200, send("POST", "/api/v1/members/" + upstream + "/outage?duration=500ms", null));
        assertStatus(200, send("POST", "/api/v1/members/" + upstream + "/restore", null));
        assertEquals("up", memberState(upstream));
        assertFalse(refuses(primary));

        // by the upstream address, until restored
        assertStatus(200, send("POST", "/api/v1/members/" + upstream + "/outage", null));
        assertEquals("outage", memberState(upstream));
        assertStatus(200, send("POST", "/api/v1/members/" + upstream + "/restore", null));
        assertEquals("up", memberState(upstream));
        assertFalse(refuses(primary));

        assertStatus(200, send("POST", "/api/v1/members/primary/blackhole?duration=10s", null));
        assertEquals("blackhole", memberState(upstream));
        assertStatus(200, send("POST", "/api/v1/members/primary/restore", null));
        assertEquals("up", memberState(upstream));

        HttpResponse<String> unknown = send("POST", "/api/v1/members/nowhere:1/outage", null);
        assertStatus(404, unknown);
        assertTrue(unknown.body().contains("no member 'nowhere:1' (known: primary, "), unknown::body); // names what would do
        HttpResponse<String> explode = send("POST", "/api/v1/members/" + upstream + "/explode", null);
        assertStatus(404, explode); // an unknown action is no route, as any other unknown path
        assertTrue(json(explode).getString("error").getValue().contains("no resource at /api/v1/members/"), explode::body);
        assertBadRequest(send("POST", "/api/v1/members/" + upstream + "/outage?duration=soon", null), "duration: 'soon'");
        assertBadRequest(send("POST", "/api/v1/failover?election=soon", null), "election: 'soon'");
        HttpResponse<String> realElection = send("POST", "/api/v1/failover?election=2s", null); // the lane's deployment, not simulated
        assertStatus(409, realElection);
        assertTrue(realElection.body().contains("an election's length and a rollback apply to a simulated set"), realElection::body);
        HttpResponse<String> realRollback = send("POST", "/api/v1/failover?rollback=2s", null);
        assertStatus(409, realRollback);
        assertTrue(realRollback.body().contains("a real set's members take the time their election takes, and roll back what they"
                + " must"), realRollback::body);
        assertBadRequest(send("POST", "/api/v1/failover?rollback=61s", null), "rollback: must be from 0 (nothing rolled back) to 60s,"
                + " got 61000ms");
        assertBadRequest(send("POST", "/api/v1/failover?rollback=soon", null), "rollback: 'soon'");
        assertEquals("up", memberState(upstream), "a refused request changes nothing");
        assertStatus(405, send("GET", "/api/v1/members/" + upstream + "/outage", null));
    }

    @Test
    void aMemberCanBeSlowedListedAsSlowAndRestored() throws Exception {
        String upstream = primary().upstream().toString();
        assertEquals(List.of(0L, 0L), memberLatency(upstream));
        assertStatus(200, send("POST", "/api/v1/members/primary/latency?delay=250ms&jitter=20ms&duration=1m", null));
        assertEquals(List.of(250L, 20L), memberLatency(upstream));
        assertEquals("up", memberState(upstream), "a slow member is up");
        assertEquals("replies", listedMember(upstream).getString("latencyDirection").getValue(), "replies unless told");
        assertStatus(200, send("POST", "/api/v1/members/primary/latency?delay=250ms&direction=both", null));
        assertEquals(new Latency(250, 0, Direction.BOTH), proxy.listener(primary().upstream()).latency());
        assertEquals("both", listedMember(upstream).getString("latencyDirection").getValue());
        assertBadRequest(send("POST", "/api/v1/members/primary/latency?delay=1s&direction=up", null),
                "direction: must be both, replies or requests, got 'up'");
        assertStatus(200, send("POST", "/api/v1/members/" + upstream + "/latency?delay=1s", null)); // replaces it, until restored
        assertEquals(List.of(1_000L, 0L), memberLatency(upstream));

        assertBadRequest(send("POST", "/api/v1/members/primary/latency", null), "delay: required (e.g. ?delay=200ms)");
        assertBadRequest(send("POST", "/api/v1/members/primary/latency?delay=0", null),
                "delay: a latency of 0 without a jitter slows nothing (to end one, restore the member)");
        assertBadRequest(send("POST", "/api/v1/members/primary/latency?delay=soon", null), "delay: 'soon'");
        assertBadRequest(send("POST", "/api/v1/members/primary/latency?delay=1s&jitter=-1ms", null), "jitter: '-1ms' must not be negative");
        assertBadRequest(send("POST", "/api/v1/members/primary/latency?delay=1500m", null), "delay: must be from 0 to 24h, got 90000000ms");
        assertBadRequest(send("POST", "/api/v1/members/primary/latency?delay=1s&duration=0", null), "duration: must be at least 1ms");
        assertBadRequest(send("POST", "/api/v1/members/primary/latency?delay=1s&for=5s", null), "for");
        assertStatus(404, send("POST", "/api/v1/members/nowhere:1/latency?delay=1s", null));
        assertEquals(List.of(1_000L, 0L), memberLatency(upstream), "a refused request changes nothing");

        assertStatus(200, send("POST", "/api/v1/members/primary/restore", null));
        assertEquals(List.of(0L, 0L), memberLatency(upstream));
        assertTrue(listedMember(upstream).isNull("latencyDirection"), "no latency, no direction");
        assertStatus(200, send("POST", "/api/v1/members/primary/latency?delay=5ms&duration=1ms", null));
        Await.until(WAIT, "the 1 ms latency to end", () -> {
            try {
                return memberLatency(upstream).equals(List.of(0L, 0L));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
    }

    @Test
    void aMembersLinkCanBeNarrowedListedAsNarrowAndRestored() throws Exception {
        String upstream = primary().upstream().toString();
        assertEquals(0, memberBandwidth(upstream));
        assertStatus(200, send("POST", "/api/v1/members/primary/bandwidth?rate=64KiB/s&duration=1m", null));
        assertEquals(64 * 1024, memberBandwidth(upstream));
        assertStatus(200, send("POST", "/api/v1/members/primary/latency?delay=100ms", null));
        assertEquals(List.of(100L, 0L), memberLatency(upstream), "a latency and a bandwidth hold together");
        assertEquals(64 * 1024, memberBandwidth(upstream));
        assertEquals("both", listedMember(upstream).getString("bandwidthDirection").getValue(), "each way unless told");
        assertStatus(200, send("POST", "/api/v1/members/primary/bandwidth?rate=64KiB/s&direction=replies", null));
        assertEquals("replies", listedMember(upstream).getString("bandwidthDirection").getValue());
        assertEquals(new Bandwidth(64 * 1024, Direction.REPLIES), proxy.listener(primary().upstream()).bandwidth());
        assertBadRequest(send("POST", "/api/v1/members/primary/bandwidth?rate=1MB/s&direction=up", null),
                "direction: must be both, replies or requests, got 'up'");
        assertEquals("replies", listedMember(upstream).getString("bandwidthDirection").getValue(), "a refused direction changes nothing");
        assertStatus(200, send("POST", "/api/v1/members/" + upstream + "/bandwidth?rate=5000", null)); // replaces it, until restored
        assertEquals(5_000, memberBandwidth(upstream));

        assertBadRequest(send("POST", "/api/v1/members/primary/bandwidth", null), "rate: required (e.g. ?rate=64KiB/s)");
        assertBadRequest(send("POST", "/api/v1/members/primary/bandwidth?rate=fast", null), "rate: 'fast' is not a rate such as 64KiB/s");
        assertBadRequest(send("POST", "/api/v1/members/primary/bandwidth?rate=0", null), "rate: '0' is not from 1B/s to 1GiB/s");
        assertBadRequest(send("POST", "/api/v1/members/primary/bandwidth?rate=1MB/s&duration=0", null), "duration: must be at least 1ms");
        assertBadRequest(send("POST", "/api/v1/members/primary/bandwidth?rate=1MB/s&delay=5s", null), "delay");
        assertStatus(404, send("POST", "/api/v1/members/nowhere:1/bandwidth?rate=1MB/s", null));
        assertEquals(5_000, memberBandwidth(upstream), "a refused request changes nothing");

        assertStatus(200, send("POST", "/api/v1/members/primary/restore", null));
        assertEquals(0, memberBandwidth(upstream));
        assertTrue(listedMember(upstream).isNull("bandwidthDirection"), "no bandwidth, no direction");
        assertEquals(List.of(0L, 0L), memberLatency(upstream), "restore ends both");
        assertStatus(200, send("POST", "/api/v1/members/primary/bandwidth?rate=1MB/s&duration=1ms", null));
        Await.until(WAIT, "the 1 ms bandwidth to end", () -> {
            try {
                return memberBandwidth(upstream) == 0;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
    }

    @Test
    void aMembersIdleConnectionsCanBeForgottenListedAndRestored() throws Exception {
        String upstream = primary().upstream().toString();
        assertEquals(List.of(0L, "null"), memberIdleTimeout(upstream));
        assertStatus(200, send("POST", "/api/v1/members/primary/idleTimeout?after=4m&then=reset&duration=60m", null));
        assertEquals(List.of(240_000L, "reset"), memberIdleTimeout(upstream));
        assertStatus(200, send("POST", "/api/v1/members/" + upstream + "/idleTimeout?after=30s", null)); // replaces it; drop
        assertEquals(List.of(30_000L, "drop"), memberIdleTimeout(upstream));

        assertBadRequest(send("POST", "/api/v1/members/primary/idleTimeout", null), "after: required (e.g. ?after=30s)");
        assertBadRequest(send("POST", "/api/v1/members/primary/idleTimeout?after=0", null), "after: must be from 1ms to 24h, got 0ms");
        assertBadRequest(send("POST", "/api/v1/members/primary/idleTimeout?after=soon", null), "after: 'soon'");
        assertBadRequest(send("POST", "/api/v1/members/primary/idleTimeout?after=30s&then=close", null), "then: must be drop or reset, got 'close'");
        assertBadRequest(send("POST", "/api/v1/members/primary/idleTimeout?after=30s&duration=0", null), "duration: must be at least 1ms");
        assertBadRequest(send("POST", "/api/v1/members/primary/idleTimeout?after=30s&rate=1", null), "rate");
        assertStatus(404, send("POST", "/api/v1/members/nowhere:1/idleTimeout?after=30s", null));
        assertEquals(List.of(30_000L, "drop"), memberIdleTimeout(upstream), "a refused request changes nothing");

        assertStatus(200, send("POST", "/api/v1/members/primary/restore", null));
        assertEquals(List.of(0L, "null"), memberIdleTimeout(upstream));
    }

    @Test
    void aMemberCanBeRestartedListedAsQuiescingThenRestartingAndRestored() throws Exception {
        String upstream = primary().upstream().toString(); // one node: no one to step down to, it restarts all the same
        assertStatus(200, send("POST", "/api/v1/members/" + upstream + "/restart?quiesce=60m&down=5s", null));
        assertEquals("quiescing", listedMember(upstream).getString("state").getValue());
        assertStatus(200, send("POST", "/api/v1/members/" + upstream + "/restore", null));
        assertEquals("up", listedMember(upstream).getString("state").getValue(), "a restore calls it off");
        assertStatus(200, send("POST", "/api/v1/members/" + upstream + "/restart?quiesce=0&down=60m", null));
        assertEquals("restarting", listedMember(upstream).getString("state").getValue(), "no quiesce: down at once");

        assertBadRequest(send("POST", "/api/v1/members/primary/restart?quiesce=soon", null), "quiesce: 'soon'");
        assertBadRequest(send("POST", "/api/v1/members/primary/restart?down=0", null), "down: must be from 1ms to 24h, got 0ms");
        assertBadRequest(send("POST", "/api/v1/members/primary/restart?quiesce=1500m", null), "quiesce: must be from 0 to 24h");
        assertBadRequest(send("POST", "/api/v1/members/primary/restart?duration=5s", null), "duration");
        assertStatus(404, send("POST", "/api/v1/members/nowhere:1/restart", null));
        assertEquals("restarting", listedMember(upstream).getString("state").getValue(), "a refused request changes nothing");
        assertStatus(200, send("POST", "/api/v1/members/" + upstream + "/restore", null));
        assertEquals("up", listedMember(upstream).getString("state").getValue());
    }

    /** The member's idleTimeoutMS and idleTimeoutThen (as JSON: "null" for none), as GET /members lists them. */
    private List<Object> memberIdleTimeout(String upstream) throws Exception {
        BsonDocument member = listedMember(upstream);
        BsonValue then = member.get("idleTimeoutThen");
        return List.of(member.getNumber("idleTimeoutMS").longValue(), then.isString() ? then.asString().getValue() : then.isNull() ? "null" : then.toString());
    }

    /** The member's bandwidthBytesPerSecond, as GET /members lists it. */
    private long memberBandwidth(String upstream) throws Exception {
        BsonDocument member = listedMember(upstream);
        return member.getNumber("bandwidthBytesPerSecond").longValue();
    }

    /** The member's latencyMS and jitterMS, as GET /members lists them. */
    private List<Long> memberLatency(String upstream) throws Exception {
        BsonDocument member = listedMember(upstream);
        return List.of(member.getNumber("latencyMS").longValue(), member.getNumber("jitterMS").longValue());
    }

    @Test
    void aSecondaryWhereThereIsNoneIsNotFoundAndNothingHappens() throws Exception {
        try (ScriptedMongod single = ScriptedMongod.start(); // a single-node replica set
             ProxyServer alone = ProxyServer.start(ProxyConfig.embedded(single.uri()))) {
            AdminServer server = AdminServer.start(alone, "127.0.0.1", 0, null);
            extraAdmins.add(server);
            for (String action : List.of("outage?duration=5s", "blackhole", "restore")) {
                HttpResponse<String> answer = send(server, "POST", "/api/v1/members/secondary/" + action, null, null);
                assertStatus(404, answer);
                assertTrue(answer.body().contains("no member 'secondary' (known: primary, all, "), answer::body);
            }
            assertTrue(alone.select("all").stream().noneMatch(l -> l.down() || l.blackholed()));
            assertBadRequest(send(server, "POST", "/api/v1/scenario/validate",
                    "name: s\ntimeline:\n  - at: 1s\n    blackhole: secondary\n", null),
                    "request body:4: timeline[0].blackhole.member: no member 'secondary'");
            assertStatus(200, send(server, "POST", "/api/v1/members/primary/outage?duration=5s", null, null));
            assertStatus(200, send(server, "POST", "/api/v1/members/primary/restore", null, null));
        }
    }

    // ------------------------------------------------------------------ connections

    @Test
    void connectionsOfAMemberCanBeResetAtOnce() throws Exception {
        String db = UpstreamLane.freshDatabaseName("apireset");
        MongoCollection<Document> c = client("retryWrites=true").getDatabase(db).getCollection("c");
        c.insertOne(new Document("_id", 1));
        MemberListener listener = proxy.listener(primary().upstream());
        int open = listener.openConnections();
        assertTrue(open >= 2, "the driver's monitor and pooled connections: " + open);

        assertStatus(200, get("/api/v1/connections"));
        HttpResponse<String> reset = send("POST", "/api/v1/connections/reset?member=all", null);
        assertStatus(200, reset);
        assertTrue(json(reset).getInt32("reset").getValue() >= open, reset::body);
        c.insertOne(new Document("_id", 2)); // a correct app does not notice
        assertEquals(2, direct.getDatabase(db).getCollection("c").countDocuments());

        assertStatus(200, send("POST", "/api/v1/connections/reset?member=primary", null));
        assertStatus(200, send("POST", "/api/v1/connections/reset", null)); // default: all
        // names what would do, as the member actions do
        assertBadRequest(send("POST", "/api/v1/connections/reset?member=nowhere:1", null), "member: no member 'nowhere:1' (known: primary, ");
        assertStatus(405, get("/api/v1/connections/reset"));
        assertStatus(404, send("POST", "/api/v1/connections/explode", null));
    }

    // ------------------------------------------------------------------ stats and history

    /** A count from the JSON (relaxed JSON writes small 64-bit numbers as plain numbers). */
    private static long count(BsonDocument document, String key) {
        assertTrue(document.isNumber(key), () -> key + " in " + document.toJson());
        return document.getNumber(key).longValue();
    }

    /** The sum of every Prometheus sample of {@code name} whose labels include {@code labels}. */
    private static double prometheus(String text, String name, Map<String, String> labels) {
        double sum = 0;
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
                sum += Double.parseDouble(sample.group(3));
            }
        }
        return sum;
    }

    @Test
    void statsAgreeWithThePrometheusCountersAndTheDriver() throws Exception {
        assertStatus(201, send("POST", "/api/v1/rules",
                "{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['insert'], resetConnection: true}}"));
        String db = UpstreamLane.freshDatabaseName("apistats");
        MongoCollection<Document> c = client("retryWrites=true&retryReads=true").getDatabase(db).getCollection("c");
        c.insertOne(new Document("_id", 1));
        c.find().first();
        c.find().first();
        long driverInserts = log.startedCount("insert");
        assertEquals(2, driverInserts, "the driver retried the insert once");

        BsonDocument stats = json(get("/api/v1/stats"));
        String metrics = get("/metrics").body();
        long insertAttempts = 0;
        long insertRetries = 0;
        for (BsonValue value : stats.getArray("commands")) {
            BsonDocument row = value.asDocument();
            Map<String, String> labels = Map.of("command", row.getString("command").getValue(),
                    "member", row.getString("member").getValue(), "app", row.getString("app").getValue());
            assertEquals(count(row, "attempts"), (long) prometheus(metrics, "blackpipe_command_attempts_total", labels),
                    () -> "attempts of " + row.toJson());
            assertEquals(count(row, "retries"), (long) prometheus(metrics, "blackpipe_command_retries_total", labels),
                    () -> "retries of " + row.toJson());
            if (row.getString("command").getValue().equals("insert")) {
                assertEquals("admin-api-test", row.getString("app").getValue());
                insertAttempts += count(row, "attempts");
                insertRetries += count(row, "retries");
            }
        }
        assertEquals(2, insertAttempts);
        assertEquals(1, insertRetries);
        assertEquals(Meters.attempts(proxy.registry(), "insert"), insertAttempts);
        assertEquals(driverInserts, insertAttempts, "every driver attempt reached the proxy");
        assertEquals(2, (long) prometheus(metrics, "blackpipe_command_attempts_total", Map.of("command", "find")));

        boolean faultListed = false;
        for (BsonValue value : stats.getArray("faults")) {
            BsonDocument fault = value.asDocument();
            if (fault.getString("fault").getValue().equals("resetConnection") && fault.getString("command").getValue().equals("insert")) {
                assertEquals(1, count(fault, "count"));
                faultListed = true;
            }
        }
        assertTrue(faultListed, stats::toJson);
        boolean outcomesListed = false;
        for (BsonValue value : stats.getArray("outcomes")) {
            BsonDocument row = value.asDocument();
            if (row.getString("command").getValue().equals("insert")) {
                assertEquals(1, count(row, "network_error"));
                assertEquals(1, count(row, "ok"));
                outcomesListed = true;
            }
        }
        assertTrue(outcomesListed, stats::toJson);

        // the history: one JSON line per application command attempt
        HttpResponse<String> history = get("/api/v1/history");
        assertStatus(200, history);
        assertEquals("application/x-ndjson", history.headers().firstValue("content-type").orElse(""));
        List<BsonDocument> lines = history.body().lines().filter(l -> !l.isBlank()).map(BsonDocument::parse).toList();
        List<BsonDocument> inserts = lines.stream().filter(l -> l.getString("command").getValue().equals("insert")).toList();
        assertEquals(2, inserts.size(), history::body);
        assertEquals("resetConnection", inserts.get(0).getString("fault").getValue());
        assertEquals("info", inserts.get(0).getString("type").getValue(), "a reset: the client cannot know");
        assertEquals("network_error", inserts.get(0).getString("outcome").getValue());
        assertEquals("ok", inserts.get(1).getString("type").getValue());
        assertEquals(db + ".c", inserts.get(1).getString("ns").getValue());
        assertEquals(2, lines.stream().filter(l -> l.getString("command").getValue().equals("find")).count());
    }

    @Test
    void historySinceAnInstantKeepsOnlyWhatWasRecordedFromThen() throws Exception {
        String db = UpstreamLane.freshDatabaseName("apisince");
        MongoCollection<Document> c = client("retryWrites=true").getDatabase(db).getCollection("c");
        c.insertOne(new Document("_id", 1));
        String at = json(send("POST", "/api/v1/reset", null)).getString("at").getValue();
        c.insertOne(new Document("_id", 2));

        assertEquals(2, inserts(db, get("/api/v1/history")), "without since: everything kept");
        assertEquals(1, inserts(db, get("/api/v1/history?since=" + java.net.URLEncoder.encode(at, java.nio.charset.StandardCharsets.UTF_8))),
                "since the reset's instant: only the insert after it");
        assertEquals(0, inserts(db, get("/api/v1/history?since=" + java.time.Instant.now().plusSeconds(60))));
        assertEquals(0, inserts(db, get("/api/v1/history?since=9999-01-01T00:00:00Z")), "far off: nothing, not an overflow");
        assertEquals(2, inserts(db, get("/api/v1/history?since=1970-01-01T00:00:00Z")), "long ago: everything kept");
        assertBadRequest(get("/api/v1/history?since=yesterday"), "since: 'yesterday' is not an instant");
        assertBadRequest(get("/api/v1/history?follow=true&since=" + at), "since: not with follow=true");
    }

    /** How many inserts into {@code db} the history answer {@code history} lists. */
    private static long inserts(String db, HttpResponse<String> history) {
        assertStatus(200, history);
        return history.body().lines().filter(l -> !l.isBlank()).map(BsonDocument::parse)
                .filter(l -> l.getString("command").getValue().equals("insert") && l.getString("ns").getValue().equals(db + ".c"))
                .count();
    }

    // ------------------------------------------------------------------ token, 404, 405

    @Test
    void withATokenTheApiNeedsItWhileHealthAndMetricsStayOpen() throws Exception {
        AdminServer guarded = AdminServer.start(proxy, "127.0.0.1", 0, "s3cret");
        extraAdmins.add(guarded);

        assertStatus(401, send(guarded, "GET", "/api/v1/rules", null, null));
        assertStatus(401, send(guarded, "GET", "/api/v1/rules", null, "Bearer wrong"));
        assertStatus(401, send(guarded, "GET", "/api/v1/rules", null, "s3cret"));
        assertStatus(401, send(guarded, "GET", "/api/v1/rules", null, "Bearer s3cret2"));
        HttpResponse<String> denied = send(guarded, "POST", "/api/v1/rules", FIND_ERROR, null);
        assertStatus(401, denied);
        assertTrue(json(denied).getString("error").getValue().contains("Authorization"), denied::body);
        assertTrue(proxy.rules().rules().isEmpty(), "a refused request changes nothing");
        assertStatus(401, send(guarded, "GET", "/api/v1/nothing-here", null, null));

        assertStatus(200, send(guarded, "GET", "/api/v1/rules", null, "Bearer s3cret"));
        assertStatus(201, send(guarded, "POST", "/api/v1/rules", FIND_ERROR, "Bearer s3cret"));
        assertEquals(1, proxy.rules().rules().size());
        assertStatus(404, send(guarded, "GET", "/api/v1/nothing-here", null, "Bearer s3cret"));

        assertStatus(200, send(guarded, "GET", "/health", null, null));
        assertStatus(200, send(guarded, "GET", "/metrics", null, null));
        assertStatus(200, send(guarded, "GET", "/health", null, "Bearer wrong"));
    }

    @Test
    void withATokenEveryApiRouteAndMethodRefusesARequestWithoutItAndChangesNothing() throws Exception {
        AdminServer guarded = AdminServer.start(proxy, "127.0.0.1", 0, "s3cret");
        extraAdmins.add(guarded);
        assertStatus(201, send(guarded, "POST", "/api/v1/rules", "{id: 'keep', " + FIND_ERROR.substring(1), "Bearer s3cret"));
        String member = proxy.members().get(0).upstream().toString();
        String rulesBefore = send(guarded, "GET", "/api/v1/rules", null, "Bearer s3cret").body();

        // every route the API serves, with each method that changes or reads something
        List<String[]> routes = List.of(
                new String[] {"GET", "/api/v1/members", null},
                new String[] {"POST", "/api/v1/members/" + member + "/outage?duration=60s", null},
                new String[] {"POST", "/api/v1/members/" + member + "/blackhole?duration=60s", null},
                new String[] {"POST", "/api/v1/members/" + member + "/restore", null},
                new String[] {"GET", "/api/v1/rules", null},
                new String[] {"POST", "/api/v1/rules", FIND_ERROR},
                new String[] {"PUT", "/api/v1/rules/keep", FIND_ERROR.replace("errorCode: 2", "closeConnection: true")},
                new String[] {"PUT", "/api/v1/rules/other", FIND_ERROR},
                new String[] {"DELETE", "/api/v1/rules/keep", null},
                new String[] {"DELETE", "/api/v1/rules", null},
                new String[] {"GET", "/api/v1/scenario", null},
                new String[] {"POST", "/api/v1/scenario", SCENARIO},
                new String[] {"POST", "/api/v1/scenario/validate", SCENARIO},
                new String[] {"DELETE", "/api/v1/scenario", null},
                new String[] {"POST", "/api/v1/scenario/bundled/transient-blip", null},
                new String[] {"GET", "/api/v1/rules/keep/fired", null},
                new String[] {"POST", "/api/v1/reset", null},
                new String[] {"GET", "/api/v1/connections", null},
                new String[] {"POST", "/api/v1/connections/reset?member=all", null},
                new String[] {"POST", "/api/v1/failover", null},
                new String[] {"GET", "/api/v1/stats", null},
                new String[] {"GET", "/api/v1/history", null},
                new String[] {"GET", "/api/v1/history?follow=true", null});
        for (String[] route : routes) {
            for (String authorization : java.util.Arrays.asList(null, "Bearer wrong", "s3cret")) {
                HttpResponse<String> refused = send(guarded, route[0], route[1], route[2], authorization);
                assertStatus(401, refused);
                assertTrue(json(refused).getString("error").getValue().contains("Authorization"), refused::body);
            }
        }

        assertEquals(rulesBefore, send(guarded, "GET", "/api/v1/rules", null, "Bearer s3cret").body(), "no rule changed");
        assertEquals(List.of("keep"), ruleIds());
        assertEquals("idle", json(get("/api/v1/scenario")).getString("state").getValue(), "no scenario ran");
        for (BsonValue m : json(get("/api/v1/members")).getArray("members")) {
            assertEquals("up", m.asDocument().getString("state").getValue(), m::toString);
        }
        // and the same requests with the token do get through (the routes above are real ones)
        assertStatus(200, send(guarded, "DELETE", "/api/v1/rules/keep", null, "Bearer s3cret"));
        assertEquals(List.of(), ruleIds());
    }

    @Test
    void unknownResourcesAre404AndWrongMethods405() throws Exception {
        assertStatus(404, get("/api/v1/x"));
        assertStatus(404, get("/api/v1/"));
        assertStatus(404, get("/api/v2/rules"));
        assertStatus(405, send("PATCH", "/api/v1/rules", FIND_ERROR));
        assertStatus(405, send("PUT", "/api/v1/rules", FIND_ERROR));
        assertStatus(405, send("POST", "/api/v1/rules/some-id", FIND_ERROR));
        assertStatus(405, send("DELETE", "/api/v1/stats", null));
        assertStatus(405, send("POST", "/api/v1/history", "{}"));
        assertStatus(405, send("PUT", "/api/v1/scenario", "name: x\n"));
        assertStatus(405, send("DELETE", "/api/v1/members", null));
        assertStatus(405, send("GET", "/api/v1/failover", null));
        assertTrue(proxy.rules().rules().isEmpty());
    }

    // ------------------------------------------------------------------ driver

    @Test
    void rulesAddedOverHttpBreakRealDriverTraffic() throws Exception {
        String db = UpstreamLane.freshDatabaseName("apidriver");
        direct.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1));
        MongoClient client = client("retryWrites=false&retryReads=false");
        MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
        assertEquals(1, c.find().first().getInteger("_id"));

        assertStatus(201, send("POST", "/api/v1/rules",
                "{id: 'deny', configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 13}}"));
        MongoCommandException denied = assertThrows(MongoCommandException.class, () -> c.find().first());
        assertEquals(13, denied.getErrorCode());
        assertThrows(MongoCommandException.class, () -> c.find().first());

        assertStatus(201, send("POST", "/api/v1/rules",
                "{id: 'cut', configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['insert'], closeConnection: true}}"));
        assertThrows(MongoSocketException.class, () -> c.insertOne(new Document("_id", 2)));
        assertEquals(1, direct.getDatabase(db).getCollection("c").countDocuments(), "closeConnection: the server never saw the insert");

        assertStatus(200, send("DELETE", "/api/v1/rules/deny", null));
        assertEquals(1, c.find().first().getInteger("_id"), "removed over HTTP, the next find works");
        c.insertOne(new Document("_id", 2));
        assertEquals(2, direct.getDatabase(db).getCollection("c").countDocuments());
        assertEquals(2, Meters.faults(proxy.registry(), "errorReply", "find"));
        assertEquals(1, Meters.faults(proxy.registry(), "closeConnection", "insert"));
    }
}
