package io.blackpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoClientSettings;
import com.mongodb.ConnectionString;
import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;
import io.blackpipe.observe.HistoryEntry;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.topology.Member;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What a rule says is judged alike however it comes: the Java API (FailRule, rule(json)), a running proxy's
 * admin API (RemoteBlackPipe), an app's configureFailPoint through the proxy (BadValue). A value mongod's
 * failCommand takes with a meaning is taken with that meaning (errorCode 0, appName ""); one that could only be a
 * mistake is refused naming the field (a member the proxy does not front, an empty error label).
 */
class RuleArgumentsTest {
    private static BlackPipe embedded;
    private static RemoteBlackPipe remote;
    private static MongoClient client;

    @BeforeAll
    static void start() {
        embedded = BlackPipe.builder().upstream(UpstreamLane.uri()).adminPort(0).start();
        remote = RemoteBlackPipe.connect(embedded.adminUrl());
        client = MongoClients.create(embedded.connectionString() + "&serverSelectionTimeoutMS=5000");
    }

    @AfterAll
    static void stop() {
        client.close();
        embedded.close();
    }

    @AfterEach
    void clear() {
        embedded.reset();
    }

    private static String rule(String data) {
        return "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['ping'], " + data + "}}";
    }

    /** The rule {@code data} as JSON is refused with {@code message} by BlackPipe, RemoteBlackPipe and configureFailPoint. */
    private static void everyJsonWayRefuses(String message, String data) {
        assertEquals(message, assertThrows(IllegalArgumentException.class, () -> embedded.rule(rule(data))).getMessage());
        String remoteRefusal = assertThrows(IllegalArgumentException.class, () -> remote.rule(rule(data))).getMessage();
        assertTrue(remoteRefusal.endsWith("/api/v1/rules answered 400 Bad Request: " + message), remoteRefusal);
        MongoCommandException badValue = assertThrows(MongoCommandException.class, () -> client.getDatabase("admin")
                .runCommand(Document.parse(rule(data))));
        assertEquals(2, badValue.getErrorCode());
        assertEquals(message, badValue.getErrorMessage());
        assertEquals(List.of(), embedded.rules(), "nothing was added");
    }

    @Test
    void aMemberTheProxyDoesNotFrontIsRefusedNamingTheOnesItDoes() {
        List<Member> members = embedded.server().members();
        Member first = members.get(0);
        String known = "(known: primary" + (members.size() > 1 ? ", secondary" : "");
        // a typo, and the member under another name for its host than the proxy knows it by: neither would ever match
        String otherName = (first.upstream().host().equals("localhost") ? "127.0.0.1:" : "localhost:") + first.upstream().port();
        for (String member : List.of("nosuch:1", otherName)) {
            String message = "data.member: no member '" + member + "' " + known;
            String refusal = assertThrows(IllegalArgumentException.class,
                    () -> embedded.fail("ping").onMember(member).errorCode(2)).getMessage();
            assertTrue(refusal.startsWith(message) && refusal.contains(first.upstream() + " / " + first.advertised())
                    && !refusal.contains("all"), refusal);
            String remoteRefusal = assertThrows(IllegalArgumentException.class,
                    () -> remote.fail("ping").onMember(member).errorCode(2)).getMessage();
            assertTrue(remoteRefusal.endsWith("/api/v1/rules answered 400 Bad Request: " + refusal), remoteRefusal);
            everyJsonWayRefuses(refusal, "errorCode: 2, member: '" + member + "'");
        }
        // a member it does front, by either of its addresses, and the role it has
        for (String member : List.of(first.upstream().toString(), first.advertised().toString(), "primary")) {
            String id = embedded.fail("ping").onMember(member).times(1).errorCode(2);
            assertEquals(2, assertThrows(MongoCommandException.class, () -> ping(client)).getErrorCode(), member);
            embedded.removeRule(id);
            remote.removeRule(remote.fail("ping").onMember(member).times(1).errorCode(2));
        }
    }

    /** A scenario's rule is the same rule: refused with its file and line when a proxy runs it (validate, offline, cannot tell). */
    @Test
    void aScenarioRuleOnAMemberTheProxyDoesNotFrontIsRefusedWhenItRuns(@org.junit.jupiter.api.io.TempDir java.nio.file.Path temp)
            throws Exception {
        java.nio.file.Path scenario = temp.resolve("typo.yaml");
        java.nio.file.Files.writeString(scenario, "name: typo\nrules:\n"
                + "  - {configureFailPoint: failCommand, mode: alwaysOn, data: {failCommands: [ping], errorCode: 2, member: 'nosuch:1'}}\n");
        String refusal = assertThrows(IllegalArgumentException.class, () -> embedded.runScenario(scenario)).getMessage();
        assertTrue(refusal.startsWith(scenario + ":3: rules[0].data.member: no member 'nosuch:1' (known: primary"), refusal);
        assertEquals(List.of(), embedded.rules());
    }

    /** A one-member replica set never has a secondary: a rule on one would never fire, as an outage of one has nothing to take down. */
    @Test
    void aSecondaryIsRefusedWhereNoMemberCanBeOneAndTakenWhereOneCan() throws Exception {
        try (ScriptedMongod mongod = ScriptedMongod.start();
             BlackPipe single = BlackPipe.start(mongod.uri())) {
            Member only = single.server().members().get(0);
            assertEquals("data.member: no member 'secondary' (known: primary, " + only.upstream() + " / " + only.advertised() + ")",
                    assertThrows(IllegalArgumentException.class, () -> single.fail("find").onMember("secondary").errorCode(2))
                            .getMessage());
            assertEquals("no member 'secondary' (known: primary, all, " + only.upstream() + " / " + only.advertised() + ")",
                    assertThrows(IllegalArgumentException.class, () -> single.outage("secondary", java.time.Duration.ZERO))
                            .getMessage(), "as an outage of one is refused");
            // a scenario's step says the same, naming the members there are, instead of suggesting the secondary it refused
            java.nio.file.Path scenario = java.nio.file.Files.createTempFile("secondary", ".yaml");
            try {
                java.nio.file.Files.writeString(scenario, "name: s\ntimeline:\n  - at: 1s\n    outage: {member: secondary}\n");
                assertEquals(scenario + ":4: timeline[0].outage.member: no member 'secondary' (known: primary, all, " + only.upstream()
                                + " / " + only.advertised() + ")",
                        assertThrows(IllegalArgumentException.class, () -> single.runScenario(scenario)).getMessage());
            } finally {
                java.nio.file.Files.delete(scenario);
            }
        }
        try (BlackPipe simulated = BlackPipe.builder().upstream(UpstreamLane.singleNodeUri()).simulateMembers(3).start()) {
            simulated.fail("find").onMember("secondary").errorCode(2);
            assertEquals(1, simulated.rules().size());
        }
    }

    /**
     * mongod's failCommand with errorCode 0 raises a Status of code OK, which is no error: its failpoint is entered
     * (the count grows, times are spent) and the command runs. So here: the ping succeeds, the rule fired, nothing
     * was faulted.
     */
    @Test
    void errorCodeZeroIsOkAsOnMongodTheRuleFiresAndTheCommandRuns() {
        MongoDatabase admin = client.getDatabase("admin");
        String id = embedded.fail("ping").times(1).errorCode(0);
        ping(client);
        ping(client);
        assertEquals(1, embedded.fired(id), "it fired once, as times(1) says, though the command ran");
        assertEquals(0, embedded.faultsInjected("errorReply"), "no fault happened");
        HistoryEntry ping = embedded.history().stream().filter(e -> e.command().equals("ping")).findFirst().orElseThrow();
        assertNull(ping.fault(), ping::toString);
        assertEquals("ok", ping.outcome(), ping::toString);
        embedded.removeRule(id);

        // configureFailPoint as a suite written for mongod sends it: answered ok, and the count is what mongod's would be
        admin.runCommand(Document.parse("{configureFailPoint: 'failCommand', mode: {times: 2}, data: {failCommands: ['ping'],"
                + " errorCode: 0}}"));
        ping(client);
        ping(client);
        ping(client);
        Document off = admin.runCommand(Document.parse("{configureFailPoint: 'failCommand', mode: 'off'}"));
        assertEquals(2, off.getInteger("count"), off::toJson);

        // with a block it blocks, then runs (mongod: the block, then no error); with another action that one acts
        String blocked = embedded.rule(rule("errorCode: 0, blockConnection: true, blockTimeMS: 200"));
        long start = System.nanoTime();
        ping(client);
        assertTrue(System.nanoTime() - start >= 190_000_000L, "blocked first");
        assertEquals(1, embedded.faultsInjected("blockConnection"));
        embedded.removeRule(blocked);
        embedded.rule(rule("errorCode: 0, closeConnection: true"));
        assertThrows(RuntimeException.class, () -> ping(client), "closeConnection acts, as on mongod");
        assertEquals(1, embedded.faultsInjected("closeConnection"));
    }

    @Test
    void anEmptyErrorLabelIsRefusedNamingTheLabels() {
        for (String label : List.of("", " ")) {
            String message = "data.errorLabels: an error label must not be empty, got '" + label
                    + "' (labels are names such as RetryableWriteError; errorLabels: [] sends none)";
            everyJsonWayRefuses(message, "errorCode: 91, errorLabels: ['RetryableWriteError', '" + label + "']");
            String builder = "errorCode(): an error label must not be empty, got '" + label + "' (labels are names such as RetryableWriteError)";
            assertEquals(builder, assertThrows(IllegalArgumentException.class,
                    () -> embedded.fail("ping").errorCode(91, "RetryableWriteError", label)).getMessage());
            assertEquals(builder, assertThrows(IllegalArgumentException.class,
                    () -> remote.fail("ping").errorCode(91, label)).getMessage());
            assertEquals(builder.replace("errorCode()", "error()"), assertThrows(IllegalArgumentException.class,
                    () -> embedded.fail("ping").error("HostUnreachable", label)).getMessage());
        }
        embedded.rule(rule("errorCode: 91, errorLabels: []")); // none: still how to send an error without labels
    }

    /** appName "" is mongod's "clients that send none" (its ClientMetadata's name is then empty): taken as that. */
    @Test
    void anEmptyAppNameMatchesTheClientsThatSendNone() {
        embedded.fail("ping").forApp("").errorCode(2);
        try (MongoClient named = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(embedded.connectionString() + "&serverSelectionTimeoutMS=5000"))
                .applicationName("shop").build())) {
            ping(named);
        }
        assertEquals(2, assertThrows(MongoCommandException.class, () -> ping(client)).getErrorCode(), "the client without an appName");
        embedded.clearRules();
        remote.fail("ping").forApp("").errorCode(2); // the same rule over the admin API
        assertEquals(2, assertThrows(MongoCommandException.class, () -> ping(client)).getErrorCode());
    }

    private static void ping(MongoClient mongo) {
        mongo.getDatabase("admin").runCommand(new Document("ping", 1));
    }
}
