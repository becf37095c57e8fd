package io.blackpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoClientSettings;
import com.mongodb.ServerAddress;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import io.blackpipe.fault.Bandwidth;
import io.blackpipe.fault.Direction;
import io.blackpipe.fault.IdleTimeout;
import io.blackpipe.fault.Latency;
import io.blackpipe.observe.HistoryEntry;
import io.blackpipe.pipe.MemberListener;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.UpstreamLane;
import java.lang.reflect.Array;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.ConnectException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/** The in-process API as a user's test would use it: start, break, read the counters, close. */
class BlackPipeApiTest {

    @Test
    void aResetInsertIsRetriedOnceAndTheCountersAgreeWithTheDriver() throws Exception {
        String db = UpstreamLane.freshDatabaseName("api");
        List<BsonDocument> started = new CopyOnWriteArrayList<>();
        String connectionString;
        try (BlackPipe blackPipe = BlackPipe.start(UpstreamLane.uri())) {
            connectionString = blackPipe.connectionString();
            String id = blackPipe.fail("insert").times(1).with(Fault.RESET);
            assertEquals(1, blackPipe.rules().size());
            assertTrue(blackPipe.rules().get(0).contains("\"resetConnection\": true"), blackPipe.rules().get(0));

            try (MongoClient client = client(connectionString, started)) {
                client.getDatabase(db).getCollection("orders").insertOne(new Document("order", 1));
            }

            long driverInserts = started.stream().filter(c -> c.getFirstKey().equals("insert")).count();
            assertEquals(2, driverInserts, "the driver sent the insert, then retried it once");
            assertEquals(driverInserts, blackPipe.attempts("insert"));
            assertEquals(1, blackPipe.retries("insert"));
            assertEquals(1, blackPipe.faultsInjected(Fault.RESET));
            Await.until(Duration.ofSeconds(10), "both insert outcomes counted",
                    () -> blackPipe.outcomes("insert", "network_error") + blackPipe.outcomes("insert", "ok") == 2);
            assertEquals(1, blackPipe.outcomes("insert", "network_error"));
            assertEquals(1, blackPipe.outcomes("insert", "ok"));
            try (MongoClient direct = UpstreamLane.directClient()) {
                assertEquals(1, direct.getDatabase(db).getCollection("orders").countDocuments(),
                        "the reset insert never reached the server, the retry did");
            }

            blackPipe.resetCounters();
            assertEquals(0, blackPipe.attempts("insert"));
            assertEquals(0, blackPipe.faultsInjected(Fault.RESET));
            assertTrue(blackPipe.registry().find("blackpipe.command.attempts").counters().stream()
                    .mapToDouble(c -> c.count()).sum() >= 2, "the registry (and /metrics) stay monotonic");
            assertFalse(blackPipe.removeRule("no-such-rule"));
            assertTrue(blackPipe.removeRule(id));
            assertTrue(blackPipe.rules().isEmpty());
        }

        for (ServerAddress member : new ConnectionString(connectionString).getHosts().stream().map(ServerAddress::new).toList()) {
            // try-with-resources closed every listener: the driver's addresses are refused now
            assertThrows(ConnectException.class, () -> new Socket(member.getHost(), member.getPort()).close(),
                    "after close nothing listens on " + member);
        }
    }

    @Test
    void afterAResetTheNextTestsFirstCommandIsAFirstAttemptNotARetryOfTheLastTests() {
        // As @BlackPipeTest runs it: one proxy and, as tests often share one, one MongoClient for two tests.
        // The first test's find fails (a command error: the driver keeps the session and hands it out again);
        // the second test runs the same find, its first command: no retry of anything in that test.
        String db = UpstreamLane.freshDatabaseName("api-reset");
        List<BsonDocument> started = new CopyOnWriteArrayList<>();
        try (BlackPipe blackPipe = BlackPipe.start(UpstreamLane.uri());
             MongoClient client = client(blackPipe.connectionString(), started)) {
            MongoCollection<Document> items = client.getDatabase(db).getCollection("items");
            String rule = blackPipe.fail("find").times(1).error("Unauthorized");
            assertEquals(13, assertThrows(MongoCommandException.class, () -> items.find(new Document("_id", 1)).first()).getErrorCode());
            assertEquals(0, blackPipe.retries("find"));
            assertEquals(1, blackPipe.fired(rule), "the rule faulted the find");

            blackPipe.reset(); // what the JUnit extension does before the next test
            assertEquals(0, blackPipe.fired(rule), "a reset starts the rules' counts again");

            items.find(new Document("_id", 1)).first();
            List<BsonDocument> finds = started.stream().filter(c -> c.getFirstKey().equals("find")).toList();
            assertEquals(2, finds.size(), "the driver sent each find once");
            assertEquals(finds.get(0).get("lsid"), finds.get(1).get("lsid"),
                    "the pooled session came back (else this test shows nothing)");
            assertEquals(1, blackPipe.attempts("find"));
            assertEquals(0, blackPipe.retries("find"), "a test's first command retries nothing of the test before it");
            HistoryEntry last = blackPipe.history().get(blackPipe.history().size() - 1);
            assertEquals("find", last.command());
            assertEquals(1, last.attempt(), "attempt 1 in the history too");
        }
    }

    @Test
    void aCommandAnOutageCutIsReadUnderTheOutagesLabel() throws Exception {
        String db = UpstreamLane.freshDatabaseName("api-outage");
        try (BlackPipe blackPipe = BlackPipe.start(UpstreamLane.uri());
             MongoClient client = client(blackPipe.connectionString() + "&retryReads=false", new CopyOnWriteArrayList<>())) {
            MongoCollection<Document> items = client.getDatabase(db).getCollection("items");
            items.find().first(); // the pool's connection is open: the outage will cut it, not refuse it
            blackPipe.fail("find").times(1).with(Fault.HANG);
            java.util.concurrent.CompletableFuture<Document> cut = java.util.concurrent.CompletableFuture.supplyAsync(
                    () -> items.find().first());
            Await.until(Duration.ofSeconds(10), () -> "the find to hang", () -> blackPipe.faultsInjected(Fault.HANG) == 1);
            blackPipe.outage("primary", Duration.ofMillis(200));
            assertThrows(java.util.concurrent.ExecutionException.class, () -> cut.get(10, TimeUnit.SECONDS));
            assertEquals(1, blackPipe.faultsInjected("outage"), "the outage ended the hung find");
            assertEquals(1, blackPipe.faultsInjected(Fault.HANG));
            assertEquals(0, blackPipe.faultsInjected("connectionsReset"));
            assertEquals("outage", blackPipe.history().get(blackPipe.history().size() - 1).fault());
        }
    }

    @Test
    void failAllReachesEveryCommandOfTheApp() {
        String db = UpstreamLane.freshDatabaseName("api-all");
        List<BsonDocument> started = new CopyOnWriteArrayList<>();
        try (BlackPipe blackPipe = BlackPipe.start(UpstreamLane.uri());
             MongoClient client = client(blackPipe.connectionString(), started)) {
            // the app's database only: a rule on all commands would fail the driver's hellos too, as on a server
            blackPipe.failAll().onNamespace(db).times(3).error("Unauthorized");
            assertTrue(blackPipe.rules().get(0).contains("\"failAllCommands\": true"), blackPipe.rules().get(0));
            MongoCollection<Document> items = client.getDatabase(db).getCollection("items");
            for (Runnable command : List.<Runnable>of(() -> items.insertOne(new Document("_id", 1)), () -> items.find().first(),
                    () -> client.getDatabase(db).runCommand(new Document("ping", 1)))) {
                assertEquals(13, assertThrows(MongoCommandException.class, command::run).getErrorCode());
            }
            items.insertOne(new Document("_id", 2));
            assertEquals(3, blackPipe.faultsInjected("errorReply"));
            assertEquals(2, blackPipe.attempts("insert"));
            try (MongoClient direct = UpstreamLane.directClient()) {
                assertEquals(List.of(new Document("_id", 2)), direct.getDatabase(db).getCollection("items").find().into(new ArrayList<>()));
            }
        }
    }

    @Test
    void rulesAreCheckedWholeAndErrorsNameTheField() {
        try (BlackPipe blackPipe = BlackPipe.builder().upstream(UpstreamLane.uri()).seed(42).start()) {
            assertEquals("mine", blackPipe.rule("mine", "{configureFailPoint: 'failCommand', mode: {times: 2},"
                    + " data: {failCommands: ['find'], errorCode: 91}}"));
            String generated = blackPipe.rule("{configureFailPoint: 'failCommand', mode: 'alwaysOn',"
                    + " data: {failCommands: ['update'], closeConnection: true}}");
            assertEquals(2, blackPipe.rules().size());
            assertTrue(generated.startsWith("rule-"), generated);
            // a generated id passes over one the test gave: rule-2 is taken, so the next is not rule-2
            assertEquals("rule-2", blackPipe.rule("rule-2", "{configureFailPoint: 'failCommand', mode: 'alwaysOn',"
                    + " data: {failCommands: ['delete'], errorCode: 2}}"));
            String next = blackPipe.fail("count").with(Fault.HANG);
            assertEquals("rule-3", next);
            assertEquals(4, blackPipe.rules().size(), "rule-2 was not replaced");
            blackPipe.removeRule("rule-2");
            blackPipe.removeRule(next);

            IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class,
                    () -> blackPipe.fail("insert").error("NoSuchError"));
            assertTrue(unknown.getMessage().startsWith("data.error: unknown error name"), unknown.getMessage());
            IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
                    () -> blackPipe.rule("{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['x'], hang: 1}}"));
            assertEquals("data.hang: must be true or false", bad.getMessage());
            assertThrows(IllegalArgumentException.class, () -> blackPipe.rule("{not json"));
            IllegalArgumentException twoRules = assertThrows(IllegalArgumentException.class, () -> blackPipe.rule(
                    "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['x'], hang: true}} {id: 'second'}"));
            assertTrue(twoRules.getMessage().contains("trailing content"), twoRules.getMessage());
            IllegalArgumentException numericId = assertThrows(IllegalArgumentException.class, () -> blackPipe.rule(
                    "{id: 5, configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['x'], hang: true}}"));
            assertEquals("id: must be a string, got int32", numericId.getMessage());
            IllegalArgumentException otherId = assertThrows(IllegalArgumentException.class, () -> blackPipe.rule("a",
                    "{id: 'b', configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['x'], hang: true}}"));
            assertEquals("id: 'b' differs from 'a'", otherId.getMessage());
            assertThrows(IllegalArgumentException.class, () -> blackPipe.rule("a",
                    "{id: 5, configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['x'], hang: true}}"));
            assertEquals("rule-4", blackPipe.fail("distinct").with(Fault.HANG), "a refused rule uses up no generated id");
            blackPipe.removeRule("rule-4");
            IllegalArgumentException tooShort = assertThrows(IllegalArgumentException.class,
                    () -> blackPipe.outage("primary", Duration.ofNanos(500)));
            assertTrue(tooShort.getMessage().startsWith("duration: must be zero (until restored) or at least 1ms"), tooShort.getMessage());
            assertThrows(IllegalArgumentException.class, () -> blackPipe.blackhole("primary", Duration.ofSeconds(-1)));
            assertEquals("delay: must be at least 1ms, got PT0.0005S", assertThrows(IllegalArgumentException.class,
                    () -> blackPipe.fail("find").delay(Duration.ofNanos(500_000))).getMessage(), "not a rule that delays nothing");
            assertTrue(assertThrows(IllegalArgumentException.class, () -> blackPipe.fail("find").probability(Double.NaN)
                    .with(Fault.RESET)).getMessage().startsWith("mode.activationProbability: "), "NaN would never fire");
            Map<String, Executable> nulls = Map.of(
                    "fail(): a command name: required, got null", () -> blackPipe.fail("find", null).with(Fault.RESET),
                    "with(): the fault: required, got null", () -> blackPipe.fail("find").with(null),
                    "error(): the code name: required, got null", () -> blackPipe.fail("find").error(null),
                    "member: required, got null", () -> blackPipe.fail("find").onMember(null).with(Fault.RESET),
                    "rule: a failCommand document is required, got null", () -> blackPipe.rule(null),
                    "member: required (primary, secondary, all or host:port), got null", () -> blackPipe.outage(null, Duration.ZERO),
                    "duration: required (Duration.ZERO: until restored), got null", () -> blackPipe.blackhole("primary", null));
            nulls.forEach((message, call) -> assertEquals(message, assertThrows(IllegalArgumentException.class, call).getMessage()));
            assertEquals("skip(2): this rule's mode is already times(1); a rule has one mode", assertThrows(IllegalStateException.class,
                    () -> blackPipe.fail("find").times(1).skip(2)).getMessage(), "skip would silently have replaced times");
            assertEquals("id(): this rule's id is already 'first'; a rule has one id", assertThrows(IllegalStateException.class,
                    () -> blackPipe.fail("find").id("first").id("second")).getMessage(), "the second id silently replaced the first");
            Duration beyondMillis = Duration.ofSeconds(Long.MAX_VALUE / 1000 + 1);
            assertEquals("duration: beyond any time blackpipe can wait for, got " + beyondMillis, assertThrows(
                    IllegalArgumentException.class, () -> blackPipe.outage("primary", beyondMillis)).getMessage(),
                    "not toMillis()'s ArithmeticException");
            Map<String, Executable> beyond = Map.of( // each an argument error naming it, not toMillis()'s ArithmeticException
                    "delay: beyond", () -> blackPipe.fail("find").delay(beyondMillis),
                    "delay(): the jitter: beyond", () -> blackPipe.fail("find").delay(Duration.ofMillis(5), beyondMillis),
                    "blockConnection(): the block: beyond", () -> blackPipe.fail("find").blockConnection(beyondMillis).errorCode(0),
                    "trickleReply(): the interval: beyond", () -> blackPipe.fail("find").trickleReply(8, beyondMillis),
                    "election: beyond", () -> blackPipe.failover(beyondMillis),
                    "delay: must be zero or whole milliseconds up to 24h", () -> blackPipe.latency("primary", beyondMillis, Duration.ZERO));
            beyond.forEach((start, call) -> assertTrue(assertThrows(IllegalArgumentException.class, call).getMessage().startsWith(start),
                    start));
            assertEquals(2, blackPipe.rules().size(), "a refused rule changes nothing");

            blackPipe.clearRules();
            assertTrue(blackPipe.rules().isEmpty());
            assertEquals("rule-5", blackPipe.fail("count").with(Fault.HANG), "clearRules() goes on counting: fired(id) names one rule");
            blackPipe.reset();
            assertEquals("rule-1", blackPipe.fail("count").with(Fault.HANG), "reset(), which zeroes fired counts, starts ids over");
            assertThrows(IllegalStateException.class, blackPipe::adminUrl, "the admin server is off unless asked for");
        }
    }

    @Test
    void countersAreReadUnderTheNamesTheyAreCountedByAndANameThatWouldReadZeroForeverIsRefused() {
        String db = UpstreamLane.freshDatabaseName("api-names");
        try (BlackPipe blackPipe = BlackPipe.start(UpstreamLane.uri());
             MongoClient client = client(blackPipe.connectionString(), new CopyOnWriteArrayList<>())) {
            client.getDatabase(db).getCollection("items").findOneAndUpdate(new Document("_id", 1),
                    new Document("$set", new Document("x", 1)), new com.mongodb.client.model.FindOneAndUpdateOptions().upsert(true));
            assertEquals(1, blackPipe.attempts("findAndModify"));
            assertEquals(1, blackPipe.attempts("findandmodify"), "the legacy shell's name reads the same count");
            try {
                client.getDatabase(db).runCommand(new Document("noSuchCommandOfTheServer", 1));
            } catch (MongoCommandException expected) {
                // the server refuses it; blackpipe counted the attempt all the same
            }
            assertEquals(1, blackPipe.attempts("other"));

            IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class,
                    () -> blackPipe.attempts("noSuchCommandOfTheServer"));
            assertTrue(unknown.getMessage().startsWith("command: 'noSuchCommandOfTheServer' is not a command blackpipe counts by name")
                    && unknown.getMessage().contains("\"other\""), unknown.getMessage());
            assertTrue(assertThrows(IllegalArgumentException.class, () -> blackPipe.retries("Insert"), "names are case-sensitive")
                    .getMessage().startsWith("command: 'Insert' is not a command blackpipe counts by name: did you mean 'insert'?"));
            assertEquals("outcome: 'networkError' is none of [ok, error, network_error, no_reply]: did you mean 'network_error'?",
                    assertThrows(IllegalArgumentException.class, () -> blackPipe.outcomes("insert", "networkError")).getMessage());
            IllegalArgumentException fault = assertThrows(IllegalArgumentException.class, () -> blackPipe.faultsInjected("reset"));
            assertTrue(fault.getMessage().startsWith("fault: 'reset' is none of [resetConnection, "), fault.getMessage());
            for (Fault each : Fault.values()) {
                assertEquals(0, blackPipe.faultsInjected(each));
            }
            assertEquals(0, blackPipe.faultsInjected("blackhole") + blackPipe.faultsInjected("delayReply"));
        }
    }

    private static final String CLOSED = "this BlackPipe is closed (its listeners are gone): start a new one";

    @Test
    void aClosedBlackPipeStillReportsButRefusesFaultsThatWouldDoNothing(@TempDir Path temp) throws Exception {
        Path scenario = temp.resolve("blip.yaml");
        Files.writeString(scenario, "name: blip\nrules:\n"
                + "  - {configureFailPoint: failCommand, mode: alwaysOn, data: {failCommands: [insert], resetConnection: true}}\n");
        BlackPipe blackPipe = BlackPipe.builder().upstream(UpstreamLane.uri()).adminPort(0).start();
        String id = blackPipe.fail("find").with(Fault.HANG);
        RemoteBlackPipe remote = RemoteBlackPipe.connect(blackPipe.adminUrl());
        blackPipe.close();

        List<Executable> refused = List.of(() -> blackPipe.fail("insert").with(Fault.RESET),
                () -> blackPipe.rule("{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['x'], hang: true}}"),
                () -> blackPipe.runScenario(scenario), blackPipe::failover, () -> blackPipe.outage("primary", Duration.ZERO),
                () -> blackPipe.blackhole("primary", Duration.ZERO), () -> blackPipe.restore("all"),
                // these succeeded silently, doing nothing to a proxy that is gone
                blackPipe::reset, blackPipe::clearRules, blackPipe::stopScenario, () -> blackPipe.removeRule(id),
                () -> blackPipe.resetConnections("all"), () -> blackPipe.runBundledScenario("transient-blip"),
                // refused before their arguments are looked at, as the proxy's state is the first thing wrong
                () -> blackPipe.rule("not json"), () -> blackPipe.outage(null, null), () -> blackPipe.fail());
        for (Executable call : refused) {
            assertEquals(CLOSED, assertThrows(IllegalStateException.class, call).getMessage());
        }
        assertEquals(1, blackPipe.rules().size(), "what it had can still be read");
        assertEquals(0, blackPipe.fired(id));
        assertEquals(0, blackPipe.attempts("find"));
        assertTrue(blackPipe.history().isEmpty());
        blackPipe.resetCounters(); // a read's baseline, in this object: nothing of the proxy's changes
        blackPipe.close(); // idempotent

        // RemoteBlackPipe has no close(): a proxy that is gone refuses its changes as an IllegalStateException too
        List<Executable> remoteRefused = List.of(remote::reset, remote::clearRules, remote::stopScenario,
                () -> remote.removeRule(id), () -> remote.fail("insert").with(Fault.RESET));
        for (Executable call : remoteRefused) {
            assertTrue(assertThrows(IllegalStateException.class, call).getMessage().startsWith("cannot reach the blackpipe admin API"));
        }
    }

    /**
     * Every public method of a closed BlackPipe either reads (allowed) or refuses with the same
     * IllegalStateException, whatever its arguments: a method added later must take a side here.
     */
    @Test
    void everyPublicMethodOfAClosedBlackPipeReadsOrRefusesTheSameWay() throws Exception {
        Set<String> reads = Set.of("connectionString", "adminUrl", "fired", "rules", "attempts", "retries", "outcomes",
                "faultsInjected", "resetCounters", "registry", "history", "server", "close");
        BlackPipe blackPipe = BlackPipe.start(UpstreamLane.uri());
        blackPipe.close();
        List<String> checked = new ArrayList<>();
        for (Method method : BlackPipe.class.getDeclaredMethods()) {
            if (!Modifier.isPublic(method.getModifiers()) || Modifier.isStatic(method.getModifiers()) || method.isSynthetic()
                    || reads.contains(method.getName())) {
                continue;
            }
            Object[] args = Arrays.stream(method.getParameterTypes())
                    .map(type -> type == int.class ? 0 : type == long.class ? 0L : type == boolean.class ? false
                            : type.isArray() ? Array.newInstance(type.getComponentType(), 0) : null)
                    .toArray();
            InvocationTargetException thrown = assertThrows(InvocationTargetException.class, () -> method.invoke(blackPipe, args),
                    () -> method + " did nothing on a closed BlackPipe");
            assertEquals(IllegalStateException.class, thrown.getCause().getClass(), method::toString);
            assertEquals(CLOSED, thrown.getCause().getMessage(), method::toString);
            checked.add(method.getName());
        }
        assertTrue(checked.containsAll(List.of("rule", "fail", "failAll", "removeRule", "clearRules", "runScenario",
                "runBundledScenario", "stopScenario", "failover", "outage", "blackhole", "latency", "bandwidth", "idleTimeout", "restart", "restore", "resetConnections",
                "reset")),
                checked::toString);
    }

    @Test
    void aScenarioRuleWithoutIdLeavesTheTestsOwnRulesAlone(@TempDir Path temp) throws Exception {
        Path scenario = temp.resolve("unnamed.yaml");
        Files.writeString(scenario, "name: unnamed\nrules:\n"
                + "  - {configureFailPoint: failCommand, mode: alwaysOn, data: {failCommands: [insert], resetConnection: true}}\n");
        try (BlackPipe blackPipe = BlackPipe.start(UpstreamLane.uri())) {
            String mine = blackPipe.fail("find").with(Fault.HANG);
            assertEquals(1, blackPipe.rules().size());

            blackPipe.runScenario(scenario);
            assertEquals(2, blackPipe.rules().size(), () -> "the scenario's rule took the id " + mine + ": " + blackPipe.rules());
            blackPipe.stopScenario();

            assertEquals(1, blackPipe.rules().size(), "stopping the scenario removes its rule only");
            assertTrue(blackPipe.rules().get(0).contains("\"id\": \"" + mine + "\""), blackPipe.rules().get(0));
            assertTrue(blackPipe.rules().get(0).contains("\"hang\": true"), blackPipe.rules().get(0));
        }
    }

    @Test
    void deploymentFaultsOnAMemberThatDoesNotExistThrowNamingTheKnownOnes() throws Exception {
        try (ScriptedMongod mongod = ScriptedMongod.start(); // a single-node replica set: no secondary, ever
             BlackPipe blackPipe = BlackPipe.start(mongod.uri())) {
            String member = blackPipe.server().members().get(0).upstream().toString();
            String known = "(known: primary, all, " + member + " / " + blackPipe.server().members().get(0).advertised() + ")";
            List<Runnable> typos = List.of(() -> blackPipe.outage("primray", Duration.ofSeconds(1)),
                    () -> blackPipe.blackhole("primray", Duration.ZERO), () -> blackPipe.restore("primray"),
                    () -> blackPipe.latency("primray", Duration.ofMillis(100), Duration.ZERO),
                    () -> blackPipe.bandwidth("primray", 1_000, Duration.ZERO),
                    () -> blackPipe.idleTimeout("primray", Duration.ofSeconds(30), IdleTimeout.Then.DROP, Duration.ZERO),
                    () -> blackPipe.restart("primray", Duration.ZERO, Duration.ofSeconds(1)));
            for (Runnable typo : typos) {
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class, typo::run);
                assertEquals("no member 'primray': did you mean 'primary'? " + known, e.getMessage());
            }
            IllegalArgumentException noSecondary = assertThrows(IllegalArgumentException.class,
                    () -> blackPipe.outage("secondary", Duration.ofSeconds(1)));
            assertEquals("no member 'secondary' " + known, noSecondary.getMessage());
            assertTrue(blackPipe.server().select("all").stream().noneMatch(l -> l.down() || l.blackholed()));

            MemberListener only = blackPipe.server().listener(blackPipe.server().members().get(0).upstream());
            Map<String, Runnable> badLatencies = Map.of(
                    "delay: must be zero or whole milliseconds up to 24h, got null", () -> blackPipe.latency("primary", null, Duration.ZERO),
                    "jitter: must be zero or whole milliseconds up to 24h, got null",
                    () -> blackPipe.latency("primary", Duration.ofMillis(5), null, Duration.ZERO),
                    "delay: must be zero or whole milliseconds up to 24h, got PT-0.005S",
                    () -> blackPipe.latency("primary", Duration.ofMillis(-5), Duration.ZERO),
                    "delay: must be zero or whole milliseconds up to 24h, got PT0.0005S",
                    () -> blackPipe.latency("primary", Duration.ofMillis(1).dividedBy(2), Duration.ZERO),
                    "delay: must be zero or whole milliseconds up to 24h, got PT25H",
                    () -> blackPipe.latency("primary", Duration.ofHours(25), Duration.ZERO),
                    "delay: a latency of 0 without a jitter slows nothing (to end one, restore the member)",
                    () -> blackPipe.latency("primary", Duration.ZERO, Duration.ZERO),
                    "duration: required (Duration.ZERO: until restored), got null",
                    () -> blackPipe.latency("primary", Duration.ofMillis(5), null),
                    "direction: must be both, replies or requests, got null",
                    () -> blackPipe.latency("primary", Duration.ofMillis(5), Duration.ZERO, null, Duration.ZERO));
            badLatencies.forEach((message, call) -> assertEquals(message, assertThrows(IllegalArgumentException.class, call::run).getMessage()));
            assertNull(only.latency(), "a refused latency slows nothing");
            blackPipe.latency("primary", Duration.ZERO, Duration.ofMillis(40), Duration.ZERO);
            assertEquals(new Latency(0, 40), only.latency(), "a jitter alone is a latency");
            blackPipe.latency("primary", Duration.ofMillis(5), Duration.ZERO, Direction.REQUESTS, Duration.ZERO);
            assertEquals(new Latency(5, 0, Direction.REQUESTS), only.latency(), "a new one replaces it, on requests");
            blackPipe.restore("all");
            assertNull(only.latency());
            Map<String, Runnable> badBandwidths = Map.of(
                    "rate: must be from 1B/s to 1GiB/s, got 0B/s", () -> blackPipe.bandwidth("primary", 0, Duration.ZERO),
                    "rate: must be from 1B/s to 1GiB/s, got 2147483648B/s", () -> blackPipe.bandwidth("primary", 1L << 31, Duration.ZERO),
                    "duration: required (Duration.ZERO: until restored), got null", () -> blackPipe.bandwidth("primary", 1_000, null),
                    "direction: must be both, replies or requests, got null",
                    () -> blackPipe.bandwidth("primary", 1_000, null, Duration.ZERO));
            badBandwidths.forEach((message, call) -> assertEquals(message, assertThrows(IllegalArgumentException.class, call::run).getMessage()));
            assertNull(only.bandwidth(), "a refused bandwidth narrows nothing");
            blackPipe.bandwidth("primary", 1_000, Duration.ZERO);
            assertEquals(new Bandwidth(1_000), only.bandwidth());
            blackPipe.bandwidth("primary", 1_000, Direction.REPLIES, Duration.ZERO);
            assertEquals(new Bandwidth(1_000, Direction.REPLIES), only.bandwidth(), "a new one replaces it, one way");
            blackPipe.reset();
            assertNull(only.bandwidth(), "a reset ends it");
            Map<String, Runnable> badIdleTimeouts = Map.of(
                    "after: must be whole milliseconds from 1ms, got PT0S",
                    () -> blackPipe.idleTimeout("primary", Duration.ZERO, IdleTimeout.Then.DROP, Duration.ZERO),
                    "after: must be whole milliseconds from 1ms, got PT0.0005S",
                    () -> blackPipe.idleTimeout("primary", Duration.ofMillis(1).dividedBy(2), IdleTimeout.Then.DROP, Duration.ZERO),
                    "after: must be from 1ms to 24h, got 90000000ms",
                    () -> blackPipe.idleTimeout("primary", Duration.ofHours(25), IdleTimeout.Then.DROP, Duration.ZERO),
                    "then: must be drop or reset, got null", () -> blackPipe.idleTimeout("primary", Duration.ofSeconds(30), null, Duration.ZERO));
            badIdleTimeouts.forEach((message, call) -> assertEquals(message, assertThrows(IllegalArgumentException.class, call::run).getMessage()));
            assertNull(only.idleTimeout(), "a refused idle timeout forgets nothing");
            blackPipe.idleTimeout("primary", Duration.ofSeconds(30), IdleTimeout.Then.RESET, Duration.ZERO);
            assertEquals(new IdleTimeout(30_000, IdleTimeout.Then.RESET), only.idleTimeout());
            blackPipe.restore("primary");
            assertNull(only.idleTimeout());

            blackPipe.outage("primary", Duration.ZERO); // what exists still works, by role and by address
            assertTrue(blackPipe.server().listener(blackPipe.server().members().get(0).upstream()).down());
            blackPipe.restore(member);
            assertFalse(blackPipe.server().listener(blackPipe.server().members().get(0).upstream()).down());
        }
    }

    @Test
    void aNamedErrorReachesTheDriverAndTheAdminServerIsThereWhenAskedFor() throws Exception {
        String db = UpstreamLane.freshDatabaseName("api-error");
        List<BsonDocument> started = new CopyOnWriteArrayList<>();
        try (BlackPipe blackPipe = BlackPipe.builder().upstream(UpstreamLane.uri()).adminPort(0).start();
             MongoClient client = client(blackPipe.connectionString(), started)) {
            blackPipe.fail("find").onNamespace(db + ".items").times(1).error("NotWritablePrimary");
            client.getDatabase(db).getCollection("items").find().first();
            assertEquals(1, blackPipe.faultsInjected("errorReply"));
            assertEquals(1, blackPipe.retries("find"), "NotWritablePrimary is retryable: the driver read again");

            java.net.http.HttpResponse<String> health = java.net.http.HttpClient.newHttpClient().send(
                    java.net.http.HttpRequest.newBuilder(java.net.URI.create(blackPipe.adminUrl() + "/health")).build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
            assertEquals(200, health.statusCode());
            assertTrue(health.body().contains(blackPipe.connectionString()), health.body());
        }
    }

    /** A client that records each command it starts, copied while the listener runs: the driver reuses its buffer after. */
    private static MongoClient client(String connectionString, List<BsonDocument> started) {
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(connectionString))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(10, TimeUnit.SECONDS))
                .applyToSocketSettings(b -> b.connectTimeout(5, TimeUnit.SECONDS).readTimeout(5, TimeUnit.SECONDS))
                .addCommandListener(new CommandListener() {
                    @Override
                    public void commandStarted(CommandStartedEvent event) {
                        started.add(event.getCommand().clone());
                    }
                })
                .build());
    }
}
