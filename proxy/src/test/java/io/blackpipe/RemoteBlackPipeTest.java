package io.blackpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCommandException;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import io.blackpipe.admin.AdminServer;
import io.blackpipe.fault.Bandwidth;
import io.blackpipe.fault.Direction;
import io.blackpipe.fault.IdleTimeout;
import io.blackpipe.observe.HistoryEntry;
import io.blackpipe.observe.Outcome;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.BindRetry;
import io.blackpipe.testing.HeldPort;
import io.blackpipe.testing.UpstreamLane;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * RemoteBlackPipe as a Testcontainers user drives the container's blackpipe: here a real blackpipe
 * with its admin server on (the same AdminServer the container runs), reached only over HTTP, in
 * front of the lane's upstream; the real Java driver goes through the proxy, and what the driver saw
 * is compared with what the remote client reports.
 */
class RemoteBlackPipeTest {
    private static final String FIND_ERROR = "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2}}";

    private BlackPipe running;
    private final List<MongoClient> clients = new CopyOnWriteArrayList<>();

    /** On one node of the lane, whatever the lane: a simulated set needs one, and failover's 409 is a one-node set's. */
    private RemoteBlackPipe start(BlackPipeBuilder builder) {
        running = builder.upstream(UpstreamLane.singleNodeUri()).adminPort(0).start();
        return RemoteBlackPipe.connect(running.adminUrl());
    }

    @AfterEach
    void stop() {
        clients.forEach(MongoClient::close);
        if (running != null) {
            running.close();
        }
    }

    /** A driver through the proxy; every command it starts lands in {@code started}. */
    private MongoClient client(RemoteBlackPipe blackPipe, String options, List<BsonDocument> started) {
        MongoClient client = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(blackPipe.connectionString() + "&socketTimeoutMS=10000&" + options))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(10, TimeUnit.SECONDS))
                .addCommandListener(new CommandListener() {
                    @Override
                    public void commandStarted(CommandStartedEvent event) {
                        started.add(event.getCommand().clone());
                    }
                }).build());
        clients.add(client);
        return client;
    }

    private static long named(List<BsonDocument> started, String command) {
        return started.stream().filter(c -> c.getFirstKey().equals(command)).count();
    }

    @Test
    void aRetryableErrorOnTheNextInsertIsRetriedOnceAndTheRemoteCountersSayExactlyThat() throws Exception {
        RemoteBlackPipe blackPipe = start(BlackPipe.builder());
        assertEquals(running.connectionString(), blackPipe.connectionString(), "the proxy's own, read from /health");
        String db = UpstreamLane.freshDatabaseName("remote");
        List<BsonDocument> started = new CopyOnWriteArrayList<>();
        MongoCollection<Document> orders = client(blackPipe, "retryWrites=true", started).getDatabase(db).getCollection("orders");

        String id = blackPipe.fail("insert").times(1).error("NotWritablePrimary");
        assertEquals(List.of(id), running.server().rules().rules().stream().map(r -> r.id()).toList(), "the proxy holds it, by the id returned");
        assertTrue(blackPipe.rules().get(0).contains("\"error\": \"NotWritablePrimary\"") && blackPipe.rules().get(0).contains(id),
                blackPipe.rules().toString());

        orders.insertOne(new Document("order", 1));

        assertEquals(2, named(started, "insert"), "the driver sent the insert and retried it once");
        assertEquals(2, blackPipe.attempts("insert"));
        assertEquals(1, blackPipe.retries("insert"));
        assertEquals(1, blackPipe.fired(id));
        assertEquals(1, blackPipe.faultsInjected("errorReply"));
        Await.until(Duration.ofSeconds(10), "both insert outcomes counted",
                () -> blackPipe.outcomes("insert", Outcome.ERROR) + blackPipe.outcomes("insert", "ok") == 2);
        assertEquals(1, blackPipe.outcomes("insert", Outcome.ERROR));
        try (MongoClient direct = UpstreamLane.directClient()) {
            assertEquals(1, direct.getDatabase(db).getCollection("orders").countDocuments(), "the retry wrote it, once");
        }
        List<HistoryEntry> inserts = blackPipe.history().stream().filter(e -> e.command().equals("insert")).toList();
        assertEquals(2, inserts.size(), inserts::toString);
        assertEquals(List.of(1, 2), inserts.stream().map(HistoryEntry::attempt).toList());
        assertEquals("errorReply", inserts.get(0).fault());
        assertEquals(10107, inserts.get(0).errorCode());
        assertEquals(db + ".orders", inserts.get(1).namespace());
        assertEquals(running.history(), blackPipe.history(), "the same entries as the embedded API's");

        blackPipe.resetCounters();
        assertEquals(0, blackPipe.attempts("insert"));
        assertEquals(0, blackPipe.faultsInjected("errorReply"));
        assertEquals(2, running.attempts("insert"), "the proxy's counters only grow: the baseline is the client's");
        assertTrue(blackPipe.removeRule(id));
        assertFalse(blackPipe.removeRule(id), "gone already");
        assertEquals(1, blackPipe.fired(id), "the count outlives the rule, as BlackPipe.fired's does");
        assertEquals(0, blackPipe.fired(""), "no rule has an empty id: 0, as BlackPipe.fired says");
        assertEquals(0, running.fired(""));
        assertThrows(IllegalArgumentException.class, () -> running.fired(null), "null is refused by both");
        IllegalArgumentException typo = assertThrows(IllegalArgumentException.class, () -> blackPipe.attempts("insrt"));
        assertTrue(typo.getMessage().startsWith("command: 'insrt' is not a command blackpipe counts by name"), typo.getMessage());
    }

    /**
     * A canned reply keeps its types over HTTP, as in-process: the rule travelled as relaxed JSON, where an Int64 is a
     * bare number that reads back as an Int32, and the app's getLong threw ClassCastException. The listing, added
     * again, makes the same rule.
     */
    @Test
    void aCannedReplyKeepsItsInt64sOverTheAdminApi() {
        RemoteBlackPipe blackPipe = start(BlackPipe.builder());
        MongoClient client = client(blackPipe, "", new CopyOnWriteArrayList<>());
        String id = blackPipe.fail("ping").cannedReply(BsonDocument.parse("{ok: 1, n: {$numberLong: '3'}, small: 2, d: 1.0}"));

        Document answer = client.getDatabase("admin").runCommand(new Document("ping", 1));
        assertEquals(3L, answer.getLong("n"), answer::toString);
        assertEquals(2, answer.getInteger("small"), "an Int32 stays one");
        assertEquals(1.0, answer.getDouble("d"));

        String listed = blackPipe.rules().get(0);
        assertTrue(BsonDocument.parse(listed).getDocument("data").getDocument("cannedReply").get("n").isInt64(), listed);
        assertTrue(blackPipe.removeRule(id));
        blackPipe.rule(listed);
        assertEquals(3L, client.getDatabase("admin").runCommand(new Document("ping", 1)).getLong("n"), "the listed rule, added again");
        assertTrue(BsonDocument.parse(running.rules().get(0)).getDocument("data").getDocument("cannedReply").get("n").isInt64(),
                "the embedded API's listing too");
    }

    @Test
    void aBadRuleIsRefusedNamingWhatWasWrongAndTheRulesInForceStay() throws Exception {
        RemoteBlackPipe blackPipe = start(BlackPipe.builder());
        String db = UpstreamLane.freshDatabaseName("remote-bad");
        MongoCollection<Document> c = client(blackPipe, "retryReads=false", new CopyOnWriteArrayList<>()).getDatabase(db).getCollection("c");
        assertEquals("keep", blackPipe.fail("find").id("keep").errorCode(2));
        String rules = blackPipe.rules().toString();

        // The same mistakes the embedded API refuses, refused by the proxy: its message, after what was asked of it.
        String rulesUrl = running.adminUrl() + "/api/v1/rules";
        String hang1 = "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['x'], hang: 1}}";
        assertRefusedAsEmbedded(() -> running.fail("insert").error("NoSuchError"), () -> blackPipe.fail("insert").error("NoSuchError"),
                "POST " + rulesUrl + " answered 400 Bad Request: ");
        assertRefusedAsEmbedded(() -> running.fail("find").id("keep").skip(-1).errorCode(2),
                () -> blackPipe.fail("find").id("keep").skip(-1).errorCode(2), "PUT " + rulesUrl + "/keep answered 400 Bad Request: ");
        assertRefusedAsEmbedded(() -> running.rule(hang1), () -> blackPipe.rule(hang1), "POST " + rulesUrl + " answered 400 Bad Request: ");
        IllegalArgumentException off = assertThrows(IllegalArgumentException.class,
                () -> blackPipe.rule("keep", "{configureFailPoint: 'failCommand', mode: 'off'}"));
        assertTrue(off.getMessage().contains("400 Bad Request: mode: \"off\" removes a rule"), off.getMessage());
        IllegalArgumentException otherId = assertThrows(IllegalArgumentException.class, () -> blackPipe.rule("keep", "{id: 'b', "
                + FIND_ERROR.substring(1)));
        assertTrue(otherId.getMessage().contains("id: 'b' differs from 'keep'"), otherId.getMessage());
        IllegalArgumentException notJson = assertThrows(IllegalArgumentException.class, () -> blackPipe.rule("{not json"));
        assertTrue(notJson.getMessage().contains("400 Bad Request: malformed JSON body"), notJson.getMessage());
        assertThrows(IllegalArgumentException.class, () -> blackPipe.rule(null));

        assertEquals(rules, blackPipe.rules().toString(), "the rule in force is unchanged");
        assertEquals(List.of("keep"), running.server().rules().rules().stream().map(r -> r.id()).toList());
        assertEquals(2, assertThrows(MongoCommandException.class, () -> c.find().first()).getErrorCode(), "and still faults finds");
        assertEquals(1, blackPipe.fired("keep"));
    }

    @Test
    void aBundledScenarioRunsByNameOnTheRunningProxy() throws Exception {
        RemoteBlackPipe blackPipe = start(BlackPipe.builder());
        String db = UpstreamLane.freshDatabaseName("remote-bundled");
        List<BsonDocument> started = new CopyOnWriteArrayList<>();
        MongoCollection<Document> c = client(blackPipe, "retryWrites=true", started).getDatabase(db).getCollection("c");

        blackPipe.runBundledScenario("transient-blip"); // fault-scripts/transient-blip.yaml, from the proxy's jar
        assertEquals("running", running.server().scenarios().status().getString("state").getValue());
        c.insertOne(new Document("_id", 1));
        assertEquals(2, named(started, "insert"), "reset once, retried once");
        assertEquals(1, blackPipe.faultsInjected(Fault.RESET));
        assertEquals(1, blackPipe.retries("insert"));
        assertEquals(1, blackPipe.fired("blip"), "the scenario's rule, by its id in the file");

        IllegalArgumentException typo = assertThrows(IllegalArgumentException.class, () -> blackPipe.runBundledScenario("transient-blp"));
        assertTrue(typo.getMessage().contains("answered 404 Not Found: no bundled scenario 'transient-blp' (bundled: ")
                && typo.getMessage().contains("transient-blip"), typo.getMessage());
        assertEquals(1, blackPipe.rules().size(), "the running scenario is left alone");
        blackPipe.stopScenario();
        assertEquals(List.of(), blackPipe.rules(), "stopping removed its rule");
        assertEquals("stopped", running.server().scenarios().status().getString("state").getValue());
    }

    @Test
    void aScenarioFileRunsOnTheProxyAndItsErrorsNameTheFile(@TempDir Path dir) throws Exception {
        RemoteBlackPipe blackPipe = start(BlackPipe.builder());
        Path file = Files.writeString(dir.resolve("finds.yaml"), """
                name: remote-file
                rules:
                  - id: from-file
                    configureFailPoint: failCommand
                    mode: alwaysOn
                    data: {failCommands: [find], errorCode: 2}
                """);
        blackPipe.runScenario(file);
        assertEquals(List.of("from-file"), running.server().rules().rules().stream().map(r -> r.id()).toList());

        Path broken = Files.writeString(dir.resolve("broken.yaml"), "name: broken\ntimeline:\n  - at: 1s\n    explode: true\n"
                + "  - at: 2s\n    implode: true\n");
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, () -> blackPipe.runScenario(broken));
        assertTrue(bad.getMessage().contains("answered 400 Bad Request: " + broken + ":4: timeline[0].explode: unknown step"),
                bad.getMessage());
        assertTrue(bad.getMessage().contains("\n" + broken + ":6: timeline[1].implode: unknown step"), "each line names the file: "
                + bad.getMessage());
        assertThrows(UncheckedIOException.class, () -> blackPipe.runScenario(dir.resolve("missing.yaml")));
        assertEquals("remote-file", running.server().scenarios().status().getString("name").getValue(), "still the first one");
    }

    @Test
    void connectionsAreResetAtOnceAndTheDriverConnectsAgain() throws Exception {
        RemoteBlackPipe blackPipe = start(BlackPipe.builder());
        String db = UpstreamLane.freshDatabaseName("remote-conns");
        // a polling monitor: a streaming one's round-trip connection may open between the count and the reset
        MongoCollection<Document> c = client(blackPipe, "retryReads=true&serverMonitoringMode=poll", new CopyOnWriteArrayList<>())
                .getDatabase(db).getCollection("c");
        c.find().first();
        int open = blackPipe.members().stream().mapToInt(RemoteBlackPipe.MemberStatus::openConnections).sum();
        assertTrue(open >= 1, "the driver's pool and monitor are connected: " + blackPipe.members());

        assertEquals(open, blackPipe.resetConnections("all"), "every open connection, counted once reset");
        c.find().first(); // a fresh connection
        IllegalArgumentException nowhere = assertThrows(IllegalArgumentException.class, () -> blackPipe.resetConnections("nowhere:1"));
        assertTrue(nowhere.getMessage().contains("400 Bad Request: member: no member 'nowhere:1' (known: "), nowhere.getMessage());
        IllegalStateException failover = assertThrows(IllegalStateException.class, blackPipe::failover);
        assertTrue(failover.getMessage().contains("answered 409 Conflict: failover needs a replica set with more than one member"),
                failover.getMessage());
    }

    @Test
    void aSimulatedFailoverAndMemberFaultsShowInTheMembersAndResetPutsThemBack() throws Exception {
        RemoteBlackPipe blackPipe = start(BlackPipe.builder().simulateMembers(3));
        String db = UpstreamLane.freshDatabaseName("remote-failover");
        MongoCollection<Document> c = client(blackPipe, "retryWrites=true", new CopyOnWriteArrayList<>()).getDatabase(db).getCollection("c");
        c.insertOne(new Document("_id", 1));
        List<RemoteBlackPipe.MemberStatus> members = blackPipe.members();
        assertEquals(List.of("primary", "secondary", "secondary"), roles(blackPipe));
        assertEquals(running.server().members().get(0).advertised().toString(), members.get(0).advertised());

        blackPipe.failover();
        assertEquals(List.of("secondary", "primary", "secondary"), roles(blackPipe));
        c.insertOne(new Document("_id", 2)); // refused by the old primary, retried on the new one

        String third = members.get(2).upstream();
        blackPipe.outage(third, Duration.ZERO);
        assertEquals("outage", blackPipe.members().get(2).state());
        blackPipe.restore(third);
        assertEquals("up", blackPipe.members().get(2).state());
        blackPipe.blackhole("secondary", Duration.ofMinutes(1));
        assertTrue(blackPipe.members().stream().anyMatch(m -> m.state().equals("blackhole")), blackPipe.members().toString());
        IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class, () -> blackPipe.outage("nowhere:1", Duration.ZERO));
        assertTrue(unknown.getMessage().contains("404 Not Found: no member 'nowhere:1' (known: primary, "), unknown.getMessage());
        assertThrows(IllegalArgumentException.class, () -> blackPipe.outage("primary", Duration.ofNanos(500)), "as BlackPipe: under 1 ms");

        blackPipe.latency(third, Duration.ofMillis(150), Duration.ofMillis(30), Duration.ofMinutes(1));
        assertEquals(List.of(150L, 30L), List.of(blackPipe.members().get(2).latencyMillis(), blackPipe.members().get(2).jitterMillis()));
        assertEquals("replies", blackPipe.members().get(2).latencyDirection());
        assertNull(blackPipe.members().get(0).latencyDirection(), "no latency, no direction");
        assertEquals(0, blackPipe.members().get(0).latencyMillis(), "the other members are as fast as before");
        assertThrows(IllegalArgumentException.class, () -> blackPipe.latency(third, Duration.ofNanos(500), Duration.ZERO),
                "as BlackPipe: whole milliseconds");
        assertThrows(IllegalArgumentException.class, () -> blackPipe.latency(third, Duration.ZERO, Duration.ZERO), "no latency at all");
        blackPipe.latency(third, Duration.ofMillis(150), Duration.ofMillis(30), Direction.BOTH, Duration.ofMinutes(1));
        assertEquals("both", blackPipe.members().get(2).latencyDirection());
        assertThrows(IllegalArgumentException.class, () -> blackPipe.latency(third, Duration.ofMillis(1), Duration.ZERO, null, Duration.ZERO));
        blackPipe.bandwidth(third, 64 * 1024, Duration.ofMinutes(1));
        assertEquals(64 * 1024, blackPipe.members().get(2).bandwidthBytesPerSecond());
        assertEquals("both", blackPipe.members().get(2).bandwidthDirection());
        assertEquals(150, blackPipe.members().get(2).latencyMillis(), "a bandwidth and a latency hold together");
        assertEquals(0, blackPipe.members().get(0).bandwidthBytesPerSecond(), "the other members' links are as wide as before");
        assertThrows(IllegalArgumentException.class, () -> blackPipe.bandwidth(third, 0, Duration.ZERO), "as BlackPipe: at least 1 B/s");
        assertNull(blackPipe.members().get(0).bandwidthDirection(), "no bandwidth, no direction");
        blackPipe.bandwidth(third, 1_000, Direction.REQUESTS, Duration.ofMinutes(1));
        assertEquals(List.of(1_000L, "requests"), List.of(blackPipe.members().get(2).bandwidthBytesPerSecond(),
                blackPipe.members().get(2).bandwidthDirection()));
        assertThrows(IllegalArgumentException.class, () -> blackPipe.bandwidth(third, 1_000, null, Duration.ZERO), "as BlackPipe: a direction");
        blackPipe.idleTimeout(third, Duration.ofMinutes(4), IdleTimeout.Then.RESET, Duration.ofHours(1));
        assertEquals(List.of(240_000L, "reset"), List.of(blackPipe.members().get(2).idleTimeoutMillis(), blackPipe.members().get(2).idleTimeoutThen()));
        assertEquals(0, blackPipe.members().get(0).idleTimeoutMillis());
        assertNull(blackPipe.members().get(0).idleTimeoutThen());
        assertThrows(IllegalArgumentException.class, () -> blackPipe.idleTimeout(third, Duration.ZERO, IdleTimeout.Then.DROP, Duration.ZERO),
                "as BlackPipe: at least 1 ms");

        blackPipe.restart(third, Duration.ofHours(1), Duration.ofSeconds(5));
        assertEquals("quiescing", blackPipe.members().get(2).state());
        assertThrows(IllegalArgumentException.class, () -> blackPipe.restart(third, Duration.ofNanos(500), Duration.ofSeconds(1)),
                "as BlackPipe: whole milliseconds");
        assertThrows(IllegalArgumentException.class, () -> blackPipe.restart(third, Duration.ZERO, Duration.ZERO), "down at least 1 ms");

        blackPipe.failover(Duration.ofMinutes(1));
        assertEquals(List.of("secondary", "secondary", "secondary"), roles(blackPipe), "no primary while the set elects");
        IllegalStateException during = assertThrows(IllegalStateException.class, blackPipe::failover);
        assertTrue(during.getMessage().contains("409 Conflict: no member is primary: an election is under way"), during.getMessage());
        assertThrows(IllegalArgumentException.class, () -> blackPipe.failover(Duration.ofNanos(500)), "under 1 ms, not zero");

        blackPipe.reset();
        assertEquals(List.of("primary", "secondary", "secondary"), roles(blackPipe), "the first member is primary again");
        assertTrue(blackPipe.members().stream().allMatch(m -> m.state().equals("up") && m.latencyMillis() == 0
                && m.bandwidthBytesPerSecond() == 0 && m.idleTimeoutMillis() == 0), blackPipe.members().toString());
        c.insertOne(new Document("_id", 3));
        c.withWriteConcern(WriteConcern.W1).insertOne(new Document("_id", 4));
        assertEquals(1, blackPipe.failover(Duration.ZERO, Duration.ofSeconds(30)), "the insert acknowledged with w: 1 is rolled back");
        assertThrows(IllegalArgumentException.class, () -> blackPipe.failover(Duration.ZERO, Duration.ofSeconds(61)), "as BlackPipe");
        try (MongoClient direct = UpstreamLane.directClient()) {
            assertEquals(3, direct.getDatabase(db).getCollection("c").countDocuments());
        }
    }

    private static List<String> roles(RemoteBlackPipe blackPipe) {
        return blackPipe.members().stream().map(RemoteBlackPipe.MemberStatus::role).toList();
    }

    /**
     * A sidecar restarted under a test between its resetCounters() and its check: the counts began anew, and a count
     * less the baseline would be a guess (negative, or too low): an IllegalStateException that says so.
     */
    @Test
    void aProxyStartedAgainSinceResetCountersIsSaidNotCountedWrong() throws Exception {
        BindRetry.upTo(3, this::aProxyStartedAgainSinceResetCountersIsSaid);
    }

    /**
     * The first proxy's admin server takes a free port itself, and the second is started on that port: one given to
     * another process in between fails that start, and the whole case is run again.
     */
    private void aProxyStartedAgainSinceResetCountersIsSaid() throws Exception {
        running = BlackPipe.builder().upstream(UpstreamLane.singleNodeUri()).adminPort(0).start();
        int adminPort = java.net.URI.create(running.adminUrl()).getPort();
        RemoteBlackPipe blackPipe = RemoteBlackPipe.connect(running.adminUrl());
        String db = UpstreamLane.freshDatabaseName("remote-run");
        client(blackPipe, "", new CopyOnWriteArrayList<>()).getDatabase(db).getCollection("c").insertOne(new Document("_id", 1));
        blackPipe.resetCounters();
        assertEquals(0, blackPipe.attempts("insert"));
        running.close();
        running = BlackPipe.builder().upstream(UpstreamLane.singleNodeUri()).adminPort(adminPort).start();
        IllegalStateException said = assertThrows(IllegalStateException.class, () -> blackPipe.attempts("insert"));
        assertTrue(said.getMessage().startsWith("the proxy at http://127.0.0.1:" + adminPort + " started again since"
                + " resetCounters() or reset()"), said::getMessage);
        blackPipe.resetCounters();
        assertEquals(0, blackPipe.attempts("insert"), "counting from now");
    }

    @Test
    void afterResetTheNextCommandIsAFirstAttemptAndCountsAndHistoryStartAgain() throws Exception {
        // As a test suite sharing one container and one MongoClient runs it: the first test's find fails (a
        // command error: the driver hands the same pooled session out again); the next test runs the same find.
        RemoteBlackPipe blackPipe = start(BlackPipe.builder());
        String db = UpstreamLane.freshDatabaseName("remote-reset");
        List<BsonDocument> started = new CopyOnWriteArrayList<>();
        MongoCollection<Document> items = client(blackPipe, "retryReads=true", started).getDatabase(db).getCollection("items");
        String rule = blackPipe.fail("find").times(1).error("Unauthorized");
        assertEquals(13, assertThrows(MongoCommandException.class, () -> items.find(new Document("_id", 1)).first()).getErrorCode());
        assertEquals(1, blackPipe.fired(rule));
        blackPipe.rule("later", FIND_ERROR.replace("'alwaysOn'", "{skip: 5}"));

        blackPipe.reset();
        assertEquals(List.of(), blackPipe.rules());
        assertEquals(0, blackPipe.fired(rule), "a reset starts the rules' counts again");
        assertEquals(0, blackPipe.attempts("find"));
        assertEquals(List.of(), blackPipe.history(), "nothing since the reset");

        items.find(new Document("_id", 1)).first();
        List<BsonDocument> finds = started.stream().filter(c -> c.getFirstKey().equals("find")).toList();
        assertEquals(2, finds.size(), "the driver sent each find once");
        assertEquals(finds.get(0).get("lsid"), finds.get(1).get("lsid"), "the pooled session came back (else this shows nothing)");
        assertEquals(1, blackPipe.attempts("find"));
        assertEquals(0, blackPipe.retries("find"), "the proxy forgot the sessions: no retry of the earlier test's find");
        List<HistoryEntry> history = blackPipe.history();
        assertEquals(List.of("find"), history.stream().map(HistoryEntry::command).toList(), "only what came after the reset");
        assertEquals(1, history.get(0).attempt());
        assertEquals(2, running.history().stream().filter(e -> e.command().equals("find")).count(), "the proxy keeps both");
    }

    @Test
    void aWrongTokenAnUnreachableProxyAndABadUrlSayWhatToFix() throws Exception {
        start(BlackPipe.builder());
        try (AdminServer guarded = AdminServer.start(running.server(), "127.0.0.1", 0, "s3cret")) {
            String url = "http://127.0.0.1:" + guarded.port();
            IllegalStateException noToken = assertThrows(IllegalStateException.class, () -> RemoteBlackPipe.connect(url).rules());
            assertEquals("GET " + url + "/api/v1/rules answered 401 Unauthorized: this resource needs Authorization: Bearer <admin token>"
                    + " (give the proxy's admin token: RemoteBlackPipe.connect(adminUrl, token))", noToken.getMessage());
            assertEquals("GET " + url + "/api/v1/rules answered 401 Unauthorized: the Authorization given is not this proxy's: it needs"
                    + " Authorization: Bearer <admin token> (give the proxy's admin token: RemoteBlackPipe.connect(adminUrl, token))",
                    assertThrows(IllegalStateException.class, () -> RemoteBlackPipe.connect(url, "other").rules()).getMessage(),
                    "a wrong token is not told as none");
            RemoteBlackPipe withToken = RemoteBlackPipe.connect(url + "/", "s3cret");
            assertEquals("t", withToken.fail("find").id("t").with(Fault.CLOSE));
            assertEquals(List.of("t"), running.server().rules().rules().stream().map(r -> r.id()).toList());
            assertEquals(url, withToken.adminUrl(), "the trailing slash dropped");
            RemoteBlackPipe noScheme = RemoteBlackPipe.connect("127.0.0.1:" + guarded.port(), "s3cret");
            assertEquals(url, noScheme.adminUrl(), "http:// added, as the CLI's --admin adds it");
            assertEquals(List.of("t"), noScheme.rules().stream().map(rule -> org.bson.BsonDocument.parse(rule).getString("id").getValue())
                    .toList());
            assertTrue(assertThrows(IllegalStateException.class, () -> RemoteBlackPipe.connect(url, "").rules()).getMessage()
                    .contains("401 Unauthorized"), "an empty token is none, as an empty BLACKPIPE_ADMIN_TOKEN is unset");
            IllegalArgumentException unsendable = assertThrows(IllegalArgumentException.class,
                    () -> RemoteBlackPipe.connect(url, "s3cret word"));
            assertEquals("token: must be printable ASCII without spaces: it goes in an HTTP header, which carries nothing else",
                    unsendable.getMessage(), "refused at connect, never quoted: it is a secret");
            assertEquals("adminUrl: '" + url + "/api/v1' names the API's path, which every request adds; give the admin address: " + url,
                    assertThrows(IllegalArgumentException.class, () -> RemoteBlackPipe.connect(url + "/api/v1", "s3cret")).getMessage());
            assertEquals("adminUrl: 'https://gw.example/blackpipe/api/v1/' names the API's path, which every request adds; give the"
                    + " admin address: https://gw.example/blackpipe", assertThrows(IllegalArgumentException.class,
                    () -> RemoteBlackPipe.connect("https://gw.example/blackpipe/api/v1/")).getMessage(), "a prefix is kept");
            assertEquals("https://gw.example/api/v1x", RemoteBlackPipe.connect("https://gw.example/api/v1x").adminUrl());
            assertEquals("http://[::1]:9090", RemoteBlackPipe.connect("[::1]:9090").adminUrl());
            // no scheme and no port: the admin server's default port, not HTTP's 80
            assertEquals("http://localhost:9090", RemoteBlackPipe.connect("localhost").adminUrl());
            assertEquals("http://[::1]:9090/prefix", RemoteBlackPipe.connect("[::1]/prefix").adminUrl());
            assertEquals("http://localhost", RemoteBlackPipe.connect("http://localhost").adminUrl(), "a URL given whole is HTTP's");
            assertEquals("adminUrl: 'localhost:' is not a URL such as http://127.0.0.1:9090: the port after ':' is missing",
                    assertThrows(IllegalArgumentException.class, () -> RemoteBlackPipe.connect("localhost:")).getMessage());
        }

        try (HeldPort refusing = HeldPort.any()) { // bound, not listening: refused, and given to no process that would answer
            int closed = refusing.port();
            IllegalStateException unreachable = assertThrows(IllegalStateException.class,
                    () -> RemoteBlackPipe.connect("http://127.0.0.1:" + closed).attempts("insert"));
            assertTrue(unreachable.getMessage().startsWith("cannot reach the blackpipe admin API at http://127.0.0.1:" + closed + " ("),
                    unreachable.getMessage());
        }
        for (String bad : new String[] {"ftp://127.0.0.1:9090", "http://127.0.0.1:9090/?x=1", "", null}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RemoteBlackPipe.connect(bad));
            assertEquals("adminUrl: '" + bad + "' is not a URL such as http://127.0.0.1:9090", e.getMessage());
        }
        // what was wrong, where it can be told: these got the line above alone
        for (String outOfRange : new String[] {"http://127.0.0.1:0", "[::1]:99999"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RemoteBlackPipe.connect(outOfRange));
            assertEquals("adminUrl: '" + outOfRange + "' is not a URL such as http://127.0.0.1:9090: port "
                    + outOfRange.substring(outOfRange.lastIndexOf(':') + 1) + " is out of range 1-65535", e.getMessage());
        }
        for (String withUser : new String[] {"http://user@127.0.0.1:9090", "http://user:s3cret@127.0.0.1:9090", "user:s3cret@[::1]:9090/x"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RemoteBlackPipe.connect(withUser));
            assertTrue(e.getMessage().startsWith("adminUrl: 'http://…@"), e.getMessage()); // never quoting the password
            assertTrue(e.getMessage().endsWith("' carries user info, which the admin API does not read: give its token with"
                    + " --admin-token (BLACKPIPE_ADMIN_TOKEN)"), e.getMessage());
        }
        assertEquals("adminUrl: '127.0.0.1:9090:1' is not a URL such as http://127.0.0.1:9090",
                assertThrows(IllegalArgumentException.class, () -> RemoteBlackPipe.connect("127.0.0.1:9090:1")).getMessage());
        for (String unbracketed : new String[] {"::1:9090", "http://fd00::5:9090/"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RemoteBlackPipe.connect(unbracketed));
            assertEquals("adminUrl: '" + unbracketed + "' is not a URL such as http://127.0.0.1:9090: an IPv6 address goes in brackets"
                    + " (http://[::1]:9090)", e.getMessage());
        }
    }

    /** The remote mistake is an IllegalArgumentException saying {@code request} and then what the embedded API says of it. */
    private static void assertRefusedAsEmbedded(Executable embedded, Executable remote, String request) {
        String expected = request + assertThrows(IllegalArgumentException.class, embedded).getMessage();
        assertEquals(expected, assertThrows(IllegalArgumentException.class, remote).getMessage());
    }
}
