package io.blackpipe.observe;

import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.gte;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoCursor;
import com.mongodb.client.model.Updates;
import com.mongodb.event.ConnectionClosedEvent;
import com.mongodb.event.ConnectionPoolListener;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.UpstreamLane;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The counters are the truth: for every fault action and every kind of workload, the real Java
 * driver goes through the proxy while a CommandListener records what the driver itself sent, and
 * the proxy's attempts, retries, outcomes, faults and round-trip timers must agree with it. Each
 * scenario gets its own proxy (so its own registry) in front of the shared upstream lane.
 */
class CountersMatchDriverTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final int HANG_SOCKET_TIMEOUT_MS = 1000;
    private static final Set<String> HELLOS = Set.of("hello", "isMaster", "ismaster");

    /** How the faulted attempt ends, as the proxy counts it. */
    enum Ends { OK, ERROR, NETWORK_ERROR }

    enum Fault {
        RESET("resetConnection", "resetConnection: true", Ends.NETWORK_ERROR, false),
        CLOSE("closeConnection", "closeConnection: true", Ends.NETWORK_ERROR, false),
        DROP_REPLY("dropReply", "dropReply: true", Ends.NETWORK_ERROR, true),
        /** The reply's first 20 bytes, then a FIN: the header and a little of the body. */
        TRUNCATE_REPLY("truncateReply", "truncateReplyBytes: 20", Ends.NETWORK_ERROR, true),
        NOT_WRITABLE_PRIMARY("errorReply", "errorCode: 10107", Ends.ERROR, false),
        UNAUTHORIZED("errorReply", "errorCode: 13", Ends.ERROR, false),
        HANG("hang", "hang: true", Ends.NETWORK_ERROR, false),
        BLOCK_CONNECTION("blockConnection", "blockConnection: true, blockTimeMS: 300", Ends.OK, true),
        DELAY_REPLY("delayReply", "delayReplyMS: 300", Ends.OK, true),
        /** WriteConcernFailed (a wtimeout): the Java driver does not retry it, whatever the labels. */
        WRITE_CONCERN_ERROR("writeConcernError", "writeConcernError: {code: 64, errmsg: 'waiting for replication timed out'}",
                Ends.ERROR, true),
        /** PrimarySteppedDown as a writeConcernError: the write happened, the driver retries it. */
        RETRYABLE_WRITE_CONCERN_ERROR("writeConcernError", "writeConcernError: {code: 189}", Ends.ERROR, true);

        final String label;
        final String data;
        final Ends ends;
        /** Whether the faulted attempt still reaches the upstream (and so is timed). */
        final boolean forwarded;

        Fault(String label, String data, Ends ends, boolean forwarded) {
            this.label = label;
            this.data = data;
            this.ends = ends;
            this.forwarded = forwarded;
        }

        int socketTimeoutMs() {
            return this == HANG ? HANG_SOCKET_TIMEOUT_MS : 20_000;
        }
    }

    enum Workload {
        /** insertOne with retryWrites=true: lsid + txnNumber. */
        RETRYABLE_WRITE("insert", "retryWrites=true",
                EnumSet.of(Fault.RESET, Fault.CLOSE, Fault.DROP_REPLY, Fault.TRUNCATE_REPLY, Fault.NOT_WRITABLE_PRIMARY, Fault.HANG,
                        Fault.RETRYABLE_WRITE_CONCERN_ERROR)),
        /** find with retryReads=true, then (if it worked) the same find again: no txnNumber, fingerprint. */
        RETRYABLE_READ("find", "retryReads=true",
                EnumSet.of(Fault.RESET, Fault.CLOSE, Fault.DROP_REPLY, Fault.TRUNCATE_REPLY, Fault.NOT_WRITABLE_PRIMARY, Fault.HANG)),
        /** insertOne with retryWrites=false (no txnNumber), then another insertOne in the same session. */
        NON_RETRYABLE_WRITE("insert", "retryWrites=false", EnumSet.noneOf(Fault.class)),
        /** A cursor whose first getMore is faulted: drivers never retry getMore. */
        GET_MORE("getMore", "retryReads=true", EnumSet.noneOf(Fault.class)),
        /** updateMany is not a retryable write (no txnNumber), then another updateMany. */
        UPDATE_MANY("update", "retryWrites=true", EnumSet.noneOf(Fault.class));

        final String command;
        final String options;
        final Set<Fault> driverRetries;

        Workload(String command, String options, Set<Fault> driverRetries) {
            this.command = command;
            this.options = options;
            this.driverRetries = driverRetries;
        }
    }

    private static MongoClient direct;

    @BeforeAll
    static void upstream() {
        direct = UpstreamLane.directClient();
    }

    @AfterAll
    static void closeDirect() {
        if (direct != null) {
            direct.close();
        }
    }

    static Stream<Arguments> scenarios() {
        List<Arguments> all = new ArrayList<>();
        for (Workload workload : Workload.values()) {
            for (Fault fault : Fault.values()) {
                boolean read = workload.command.equals("find") || workload.command.equals("getMore");
                if (read && fault.label.equals("writeConcernError")) {
                    continue; // refused: a server adds no writeConcernError to a read (RuleParserTest)
                }
                all.add(Arguments.of(workload, fault));
            }
        }
        return all.stream();
    }

    // ================================================================ the matrix

    @ParameterizedTest(name = "{0} with {1}")
    @MethodSource("scenarios")
    void theProxysCountersEqualWhatTheDriverReports(Workload workload, Fault fault) throws Exception {
        String db = UpstreamLane.freshDatabaseName("ctr_" + workload.name().toLowerCase() + "_" + fault.name().toLowerCase());
        String app = "bp-" + workload.name().toLowerCase() + "-" + fault.name().toLowerCase();
        seed(db, workload);
        DriverEvents driver = new DriverEvents();
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            rule(proxy, "{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['" + workload.command
                    + "'], " + fault.data + "}}");
            try (MongoClient client = client(proxy, app, driver, workload.options + "&socketTimeoutMS=" + fault.socketTimeoutMs())) {
                run(workload, client.getDatabase(db).getCollection("c"));
            }
            PrometheusMeterRegistry registry = proxy.registry();
            awaitEveryAttemptEnded(registry);

            String context = workload + " with " + fault + ": driver sent " + driver.commandNames() + ", proxy counted "
                    + countedCommands(registry) + "; driver events:" + driver.describe() + "\n";
            // every command the driver sent, first attempt or retry, and nothing else
            assertEquals(driver.commandNames(), countedCommands(registry), context);
            for (String command : driver.commandNames()) {
                assertEquals(driver.started(command), Meters.attempts(registry, CommandNames.label(command)), context + ": attempts of " + command);
                assertEquals(driver.retries(command), Meters.retries(registry, CommandNames.label(command)), context + ": retries of " + command);
            }
            // what the driver did is what this test expects it to do: once for retryable faults, else never
            long expectedRetries = workload.driverRetries.contains(fault) ? 1 : 0;
            assertEquals(expectedRetries, driver.retries(workload.command), context + ": the driver's own retries");
            long attempts = Meters.attempts(registry, workload.command);
            if (workload == Workload.GET_MORE) {
                DriverEvents.Started faulted = driver.started().stream().filter(e -> e.name().equals("getMore")).findFirst().get();
                if (driver.failed(faulted)) { // a getMore that failed is never sent again: the cursor is gone
                    assertEquals(1, driver.started("getMore"), context + ": getMore is never retried");
                    assertEquals(1, attempts, context + ": the proxy saw the one getMore");
                }
            } else {
                assertEquals(1 + expectedRetries, attemptsOfTheFaultedOperation(driver, workload.command),
                        context + ": the faulted operation's attempts");
            }
            assertEquals(expectedRetries, Meters.retries(registry, workload.command),
                    context + ": retries = the faulted operation's attempts after the first");

            // outcomes: the faulted attempt (the first of its command) ends as its fault says; every other
            // attempt as the driver saw it end, ok or a server error
            java.util.Map<String, java.util.Map<String, Long>> expectedOutcomes = new java.util.TreeMap<>();
            boolean faultedSeen = false;
            for (DriverEvents.Started e : driver.started()) {
                String outcome;
                if (!faultedSeen && e.name().equals(workload.command)) {
                    faultedSeen = true;
                    outcome = fault.ends.name().toLowerCase();
                } else {
                    outcome = driver.failed(e) ? "error" : "ok";
                }
                expectedOutcomes.computeIfAbsent(CommandNames.label(e.name()), k -> new java.util.TreeMap<>()).merge(outcome, 1L, Long::sum);
            }
            for (String command : expectedOutcomes.keySet()) {
                assertEquals(expectedOutcomes.get(command), outcomes(registry, command), context + ": outcomes of " + command);
            }
            assertEquals(0, (long) Meters.sum(registry, "blackpipe.command.outcomes", "outcome", "no_reply"), context + ": no_reply");

            // the fault, once, on the faulted command
            assertEquals(1, Meters.faults(registry, fault.label, workload.command), context + ": faults injected");
            assertEquals(1, (long) Meters.sum(registry, "blackpipe.faults.injected"), context + ": faults injected in all");

            // round trips are timed for what reached the upstream
            assertEquals(attempts - (fault.forwarded ? 0 : 1), durationCount(registry, workload.command), context + ": duration count");

            assertMonitoringKeptApart(registry, driver, context);
            assertAppLabel(registry, app, context);
        }
    }

    // ================================================================ w:0

    @ParameterizedTest(name = "w:0 insert with {0}")
    @EnumSource(Fault.class)
    void anUnacknowledgedInsertIsCountedWithoutAReply(Fault fault) throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(scripted.uri("replicaSet=" + ScriptedMongod.SET_NAME)))) {
            rule(proxy, "{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['insert'], " + fault.data + "}}");
            DriverEvents driver = new DriverEvents();
            // not primary, mongod closes a w:0 write's connection (OP_MSG spec), as the proxy does for it
            boolean connectionSurvives = fault != Fault.RESET && fault != Fault.CLOSE && fault != Fault.NOT_WRITABLE_PRIMARY;
            try (MongoClient client = client(proxy, "bp-w0-" + fault.name().toLowerCase(), driver,
                    "maxPoolSize=1&socketTimeoutMS=20000")) {
                MongoCollection<Document> c = client.getDatabase("w0").getCollection("c");
                c.withWriteConcern(WriteConcern.UNACKNOWLEDGED).insertOne(new Document("_id", "fire-and-forget"));
                Await.until(WAIT, () -> "the w:0 insert's outcome; outcomes " + outcomes(proxy.registry(), "insert"),
                        () -> outcomes(proxy.registry(), "insert").values().stream().mapToLong(Long::longValue).sum() == 1);
                if (connectionSurvives) {
                    // the same (only) pooled connection must be fit for the next, acknowledged command:
                    // no stray reply may wait on it for a request that did not ask for one
                    assertEquals(List.of(), c.find(eq("_id", "nothing")).into(new ArrayList<>()));
                }
            }
            MeterRegistry registry = proxy.registry();
            awaitEveryAttemptEnded(registry);
            String context = "w:0 with " + fault + ": outcomes " + outcomes(registry, "insert");
            assertEquals(1, driver.started("insert"), context);
            assertEquals(1, Meters.attempts(registry, "insert"), context);
            assertEquals(0, Meters.retries(registry, "insert"), context);
            String expected = switch (fault) {
                case RESET, CLOSE -> "network_error"; // the proxy broke the connection: nothing reached the server
                case NOT_WRITABLE_PRIMARY, UNAUTHORIZED -> "error"; // an injected error nobody hears of
                default -> "no_reply";
            };
            assertEquals(1, Meters.outcomes(registry, "insert", expected), context);
            assertEquals(1, Meters.faults(registry, fault.label, "insert"), context);
            for (String command : driver.commandNames()) {
                assertEquals(driver.started(command), Meters.attempts(registry, CommandNames.label(command)), context + ": " + command);
            }
            boolean reachedServer = fault.forwarded;
            assertEquals(reachedServer ? 1 : 0, scripted.documents("w0", "c").size(), context + ": documents on the server");
        }
    }

    @Test
    void anUnacknowledgedInsertWithoutAFaultIsOneAttemptWithNoReply() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(scripted.uri("replicaSet=" + ScriptedMongod.SET_NAME)))) {
            DriverEvents driver = new DriverEvents();
            try (MongoClient client = client(proxy, "bp-w0", driver, "maxPoolSize=1")) {
                MongoCollection<Document> c = client.getDatabase("w0").getCollection("c");
                c.withWriteConcern(WriteConcern.UNACKNOWLEDGED).insertOne(new Document("_id", 1));
                c.withWriteConcern(WriteConcern.UNACKNOWLEDGED).insertOne(new Document("_id", 2));
                assertEquals(2, c.countDocuments());
            }
            PrometheusMeterRegistry registry = proxy.registry();
            awaitEveryAttemptEnded(registry);
            assertEquals(2, driver.started("insert"));
            assertEquals(2, Meters.attempts(registry, "insert"));
            assertEquals(0, Meters.retries(registry, "insert"));
            assertEquals(2, Meters.outcomes(registry, "insert", "no_reply"));
            assertEquals(0, Meters.outcomes(registry, "insert", "ok"));
            assertEquals(0, durationCount(registry, "insert"), "a w:0 insert has no round trip to time");
            assertEquals(driver.started("aggregate"), Meters.attempts(registry, "aggregate"));
            assertEquals(0, Meters.sum(registry, "blackpipe.faults.injected"));
        }
    }

    /**
     * A w:0 insert a rule blocks, whose connection a `connections reset` cuts meanwhile: the driver, which asked for no
     * reply, never hears of it, and the member still gets it when the block ends (as under failCommand's block), so
     * nobody can know: no_reply, as a w:0 write the member was sent. It was counted a network error. The reset cuts the
     * monitors too, and the driver, told by one, clears its pool and closes the idle connection the insert went on: when
     * that close reaches the proxy before the reset does (about one run in ten), the insert ended by its client's close,
     * under its rule's label only; either way it is no_reply, and which way it went is checked from the driver's events.
     */
    @Test
    void anUnacknowledgedInsertBlockedWhenItsConnectionIsResetHasNoReply() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(scripted.uri("replicaSet=" + ScriptedMongod.SET_NAME)))) {
            rule(proxy, "{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['insert'], blockConnection: true,"
                    + " blockTimeMS: 1500}}");
            DriverEvents driver = new DriverEvents();
            List<ConnectionClosedEvent> closedByTheDriver = new CopyOnWriteArrayList<>();
            String base = proxy.connectionString();
            try (MongoClient client = MongoClients.create(MongoClientSettings.builder()
                    .applyConnectionString(new ConnectionString(base + (base.contains("?") ? "&" : "?") + "maxPoolSize=1"))
                    .applicationName("bp-w0-blocked").addCommandListener(driver)
                    .applyToConnectionPoolSettings(b -> b.addConnectionPoolListener(new ConnectionPoolListener() {
                        @Override
                        public void connectionClosed(ConnectionClosedEvent event) {
                            closedByTheDriver.add(event);
                        }
                    })).build())) {
                client.getDatabase("w0").getCollection("c").withWriteConcern(WriteConcern.UNACKNOWLEDGED)
                        .insertOne(new Document("_id", "blocked"));
                PrometheusMeterRegistry registry = proxy.registry();
                Await.until(WAIT, "the insert at the proxy", () -> Meters.attempts(registry, "insert") == 1);
                assertTrue(proxy.resetConnections(proxy.members().get(0).upstream().toString()) >= 1, "the insert's and the monitors'");
                Await.until(WAIT, () -> "the insert's end; outcomes " + outcomes(registry, "insert"),
                        () -> Meters.outcomes(registry, "insert", "no_reply") == 1);
                assertEquals(0, Meters.outcomes(registry, "insert", "network_error"), () -> "outcomes " + outcomes(registry, "insert"));
                assertEquals(1, driver.started("insert"));
                String endedBy = proxy.history().recent().stream().filter(e -> e.command().equals("insert")).findFirst().orElseThrow().fault();
                if (endedBy.equals("connectionsReset")) {
                    assertEquals(1, Meters.faults(registry, "connectionsReset", "insert"), "the reset cut it");
                } else {
                    assertEquals("blockConnection", endedBy, "cut by its client's close, under its rule's label");
                    assertEquals(0, Meters.faults(registry, "connectionsReset", "insert"));
                    assertTrue(closedByTheDriver.stream().anyMatch(e -> e.getReason() == ConnectionClosedEvent.Reason.STALE),
                            () -> "the driver closed the insert's connection, its pool cleared by the monitor's reset: " + closedByTheDriver);
                }
            }
            Await.until(WAIT, "the blocked insert at the member once its block ended", () -> scripted.documents("w0", "c").size() == 1);
        }
    }

    // ================================================================ a hang, retried on an idle pooled connection

    @RepeatedTest(8)
    void aHungReadRetriedAtOnceOnAnIdlePooledConnectionIsStillARetry() throws Exception {
        // The driver gives up on the hung find (socket timeout), closes that connection and re-sends
        // on another, already open one: the retry may reach the proxy before the close does.
        String db = UpstreamLane.freshDatabaseName("ctr_pooled_hang");
        direct.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1));
        DriverEvents driver = new DriverEvents();
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            try (MongoClient client = client(proxy, "bp-pooled-hang", driver, "retryReads=true&socketTimeoutMS=1500")) {
                MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
                java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
                List<Thread> warmers = new ArrayList<>();
                for (int i = 0; i < 4; i++) { // several connections in the pool
                    Thread t = new Thread(() -> {
                        try {
                            go.await();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                        c.find(eq("_id", 1)).first();
                    });
                    t.start();
                    warmers.add(t);
                }
                go.countDown();
                for (Thread t : warmers) {
                    t.join();
                }
                rule(proxy, "{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['find'], hang: true}}");
                assertEquals(1, c.find(eq("_id", 1)).first().getInteger("_id"));
                c.find(eq("_id", 1)).first(); // and the same read once more: new work, not a retry
            }
            MeterRegistry registry = proxy.registry();
            awaitEveryAttemptEnded(registry);
            String context = "driver events:" + driver.describe();
            assertEquals(1, driver.retries("find"), context);
            assertEquals(driver.started("find"), Meters.attempts(registry, "find"), context);
            assertEquals(1, Meters.retries(registry, "find"), context);
            assertEquals(1, Meters.outcomes(registry, "find", "network_error"), context);
        }
    }

    // ================================================================ a write between a failed read and the same read

    @Test
    void aWriteBetweenAFailedReadAndTheSameReadMakesTheSecondReadNewWork() throws Exception {
        // One thread, so the pooled session that served the failed find serves the insert and the
        // next find too: the session moved on, and the driver retried nothing.
        String db = UpstreamLane.freshDatabaseName("ctr_read_write_read");
        direct.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1));
        DriverEvents driver = new DriverEvents();
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            try (MongoClient client = client(proxy, "bp-read-write-read", driver, "retryReads=true&retryWrites=true")) {
                MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
                rule(proxy, "{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['find'], errorCode: 2}}");
                assertThrows(MongoCommandException.class, () -> c.find(eq("_id", 1)).first());
                c.insertOne(new Document("_id", 2));
                assertEquals(1, c.find(eq("_id", 1)).first().getInteger("_id"));
            }
            MeterRegistry registry = proxy.registry();
            awaitEveryAttemptEnded(registry);
            String context = "driver events:" + driver.describe();
            assertEquals(0, driver.retries("find"), context);
            assertEquals(2, Meters.attempts(registry, "find"), context);
            assertEquals(0, Meters.retries(registry, "find"), context);
            assertEquals(1, Meters.attempts(registry, "insert"), context);
        }
        assertEquals(2, direct.getDatabase(db).getCollection("c").countDocuments());
    }

    // ================================================================ an error the driver turns into an answer

    @Test
    void listingTheIndexesOfAMissingCollectionTwiceIsNotARetry() throws Exception {
        // mongod answers NamespaceNotFound (26) and the driver returns an empty list; jongodb lists an
        // _id index instead, so the rule gives mongod's answer. Nothing failed for the app, nothing was retried.
        String db = UpstreamLane.freshDatabaseName("ctr_list_missing");
        DriverEvents driver = new DriverEvents();
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            rule(proxy, "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['listIndexes'], errorCode: 26}}");
            try (MongoClient client = client(proxy, "bp-list-missing", driver, "retryReads=true")) {
                MongoCollection<Document> missing = client.getDatabase(db).getCollection("missing");
                assertEquals(List.of(), missing.listIndexes().into(new ArrayList<>()));
                assertEquals(List.of(), missing.listIndexes().into(new ArrayList<>()));
            }
            MeterRegistry registry = proxy.registry();
            awaitEveryAttemptEnded(registry);
            String context = "driver events:" + driver.describe();
            assertEquals(0, driver.retries("listIndexes"), context);
            assertEquals(2, Meters.attempts(registry, "listIndexes"), context);
            assertEquals(0, Meters.retries(registry, "listIndexes"), context);
            assertEquals(2, Meters.outcomes(registry, "listIndexes", "error"), "the server's answer was an error all the same");
        }
    }

    // ================================================================ timeoutMS

    /**
     * Under timeoutMS the driver recomputes maxTimeMS for every attempt, and retries a read until that time is up: each
     * attempt after the first is counted as a retry, once or twice.
     */
    @ParameterizedTest(name = "{0} x{1}")
    @CsvSource(delimiter = '|', value = {"resetConnection: true|1", "errorCode: 10107|2"})
    void aReadRetriedUnderTimeoutMsCountsEachRetry(String fault, int times) throws Exception {
        String db = UpstreamLane.freshDatabaseName("ctr_csot");
        direct.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1));
        DriverEvents driver = new DriverEvents();
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            rule(proxy, "{configureFailPoint: 'failCommand', mode: {times: " + times + "}, data: {failCommands: ['find'], " + fault + "}}");
            try (MongoClient client = client(proxy, "bp-csot", driver, "retryReads=true&timeoutMS=15000")) {
                assertEquals(1, client.getDatabase(db).getCollection("c").find(eq("_id", 1)).first().getInteger("_id"));
            }
            MeterRegistry registry = proxy.registry();
            awaitEveryAttemptEnded(registry);
            String context = "driver events:" + driver.describe();
            assertEquals(times + 1, driver.started("find"), context);
            assertEquals(times + 1, Meters.attempts(registry, "find"), context);
            assertEquals(times, Meters.retries(registry, "find"), "maxTimeMS differs between the attempts: " + context);
        }
    }

    /**
     * The app sending a read again after the driver's retry failed: a read has no txnNumber, so each sending on the
     * same pooled session counts as a further retry, as the README says (and as the report's "always retry" counts).
     */
    @Test
    void aReadTheAppSendsAgainAfterTheDriversRetryFailedCountsAsAFurtherRetry() throws Exception {
        String db = UpstreamLane.freshDatabaseName("ctr_app_again");
        direct.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1));
        DriverEvents driver = new DriverEvents();
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            rule(proxy, "{configureFailPoint: 'failCommand', mode: {times: 2}, data: {failCommands: ['find'], errorCode: 10107}}");
            try (MongoClient client = client(proxy, "bp-app-again", driver, "retryReads=true")) {
                MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
                assertThrows(MongoException.class, () -> c.find(eq("_id", 1)).first());
                assertEquals(1, c.find(eq("_id", 1)).first().getInteger("_id"), "the app's own second try");
            }
            MeterRegistry registry = proxy.registry();
            awaitEveryAttemptEnded(registry);
            String context = "driver events:" + driver.describe();
            assertEquals(3, driver.started("find"), context);
            assertEquals(3, Meters.attempts(registry, "find"), context);
            assertEquals(2, Meters.retries(registry, "find"), "the driver's retry and the app's sending again: " + context);
        }
    }

    // ================================================================ labels

    @Test
    void unknownCommandNamesFoldIntoOther() throws Exception {
        DriverEvents driver = new DriverEvents();
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            rule(proxy, "{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['blackpipeNoSuchCommand'], errorCode: 2}}");
            try (MongoClient client = client(proxy, "bp-other", driver, "retryReads=true")) {
                for (int i = 0; i < 2; i++) {
                    MongoCommandException e = assertThrows(MongoCommandException.class,
                            () -> client.getDatabase("admin").runCommand(new Document("blackpipeNoSuchCommand", 1)));
                    assertTrue(e.getErrorCode() != 0);
                }
                client.getDatabase("admin").runCommand(new Document("blackpipeAnotherUnknown", 1).append("x", 1),
                        BsonDocument.class); // jongodb or mongod: an error reply either way, or ok; counted all the same
            } catch (MongoCommandException expected) {
                // the last unknown command's error
            }
            MeterRegistry registry = proxy.registry();
            awaitEveryAttemptEnded(registry);
            assertEquals(3, Meters.attempts(registry, "other"));
            assertEquals(driver.started("blackpipeNoSuchCommand") + driver.started("blackpipeAnotherUnknown"),
                    Meters.attempts(registry, "other"));
            assertEquals(1, Meters.faults(registry, "errorReply", "other"));
            for (Meter meter : registry.getMeters()) {
                String command = meter.getId().getTag("command");
                assertFalse(command != null && command.startsWith("blackpipe"), "a raw unknown name became a label: " + meter.getId());
            }
        }
    }

    @Test
    void thePrometheusTextCarriesTheContractNames() throws Exception {
        String db = UpstreamLane.freshDatabaseName("ctr_prom");
        DriverEvents driver = new DriverEvents();
        String member;
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            rule(proxy, "{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['insert'], closeConnection: true}}");
            try (MongoClient client = client(proxy, "bp-prometheus", driver, "retryWrites=true")) {
                client.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1));
                assertEquals(1, client.getDatabase(db).getCollection("c").find().into(new ArrayList<>()).size());
                member = primaryLabel(proxy);
                String open = proxy.registry().scrape();
                assertTrue(open.matches("(?s).*\\nblackpipe_connections_open\\{member=\"" + quote(member) + "\"\\} [1-9].*"),
                        "a connection is open while the client is:\n" + open);
            }
            awaitEveryAttemptEnded(proxy.registry());
            Await.until(WAIT, "the proxy to see the client's connections close",
                    () -> proxy.members().stream().mapToInt(mb -> proxy.openConnections(mb.upstream())).sum() == 0);
            String text = proxy.registry().scrape();
            String m = quote(member);
            String[] expected = {
                "blackpipe_command_attempts_total\\{app=\"bp-prometheus\",command=\"insert\",member=\"" + m + "\"\\} 2(\\.0)?",
                "blackpipe_command_retries_total\\{app=\"bp-prometheus\",command=\"insert\",member=\"" + m + "\"\\} 1(\\.0)?",
                "blackpipe_command_attempts_total\\{app=\"bp-prometheus\",command=\"find\",member=\"" + m + "\"\\} 1(\\.0)?",
                "blackpipe_command_outcomes_total\\{command=\"insert\",member=\"" + m + "\",outcome=\"network_error\"\\} 1(\\.0)?",
                "blackpipe_command_outcomes_total\\{command=\"insert\",member=\"" + m + "\",outcome=\"ok\"\\} 1(\\.0)?",
                "blackpipe_command_outcomes_total\\{command=\"insert\",member=\"" + m + "\",outcome=\"no_reply\"\\} 0(\\.0)?",
                "blackpipe_faults_injected_total\\{command=\"insert\",fault=\"closeConnection\",member=\"" + m + "\"\\} 1(\\.0)?",
                "blackpipe_command_duration_seconds_bucket\\{command=\"insert\",member=\"" + m + "\",le=\"[^\"]+\"\\} 1(\\.0)?",
                "blackpipe_command_duration_seconds_count\\{command=\"insert\",member=\"" + m + "\"\\} 1(\\.0)?",
                "blackpipe_connections_open\\{member=\"" + m + "\"\\} 0(\\.0)?",
                "blackpipe_connections_total\\{member=\"" + m + "\"\\} [1-9][0-9]*(\\.0)?",
                "blackpipe_bytes_total\\{direction=\"client_to_upstream\",member=\"" + m + "\"\\} [1-9][0-9.E]*",
                "blackpipe_bytes_total\\{direction=\"upstream_to_client\",member=\"" + m + "\"\\} [1-9][0-9.E]*",
                "blackpipe_monitoring_commands_total\\{command=\"[a-zA-Z]+\",member=\"" + m + "\"\\} [1-9][0-9.E]*",
            };
            for (String line : expected) {
                assertTrue(text.matches("(?s)(.*\\n)?" + line + "\\n.*"), "no line matching " + line + " in:\n" + text);
            }
            assertFalse(text.matches("(?s).*blackpipe_command_attempts_total\\{[^}]*command=\"(hello|isMaster|ismaster)\".*"),
                    "hello is not an application command:\n" + text);
        }
    }

    // ================================================================ workloads

    private static void seed(String db, Workload workload) {
        MongoCollection<Document> c = direct.getDatabase(db).getCollection("c");
        switch (workload) {
            case RETRYABLE_READ -> c.insertOne(new Document("_id", 1).append("v", 1));
            case GET_MORE, UPDATE_MANY -> {
                List<Document> docs = new ArrayList<>();
                for (int i = 1; i <= 5; i++) {
                    docs.add(new Document("_id", i).append("n", 0));
                }
                c.insertMany(docs);
            }
            default -> {
            }
        }
    }

    /** Runs the workload; the application's own errors are the driver's business, not this test's. */
    private static void run(Workload workload, MongoCollection<Document> c) {
        switch (workload) {
            case RETRYABLE_WRITE -> ignoringErrors(() -> c.insertOne(new Document("_id", 1)));
            case RETRYABLE_READ -> {
                boolean worked = ignoringErrors(() -> c.find(eq("_id", 1)).first());
                if (worked) {
                    // the same read of the next request, in the same pooled session: not a retry. (After a
                    // failed one it would be indistinguishable from a driver retry, so it is not repeated then.)
                    c.find(eq("_id", 1)).first();
                }
            }
            case NON_RETRYABLE_WRITE -> {
                ignoringErrors(() -> c.insertOne(new Document("_id", 1)));
                ignoringErrors(() -> c.insertOne(new Document("_id", 2))); // another write: never a retry of the first
            }
            case GET_MORE -> ignoringErrors(() -> {
                try (MongoCursor<Document> cursor = c.find().batchSize(2).iterator()) {
                    while (cursor.hasNext()) {
                        cursor.next();
                    }
                }
            });
            case UPDATE_MANY -> {
                ignoringErrors(() -> c.updateMany(gte("_id", 1), Updates.inc("n", 1)));
                ignoringErrors(() -> c.updateMany(gte("_id", 3), Updates.inc("n", 1)));
            }
        }
    }

    /** How often the driver sent {@code command} for the operation that sent it first (the faulted one). */
    private static long attemptsOfTheFaultedOperation(DriverEvents driver, String command) {
        List<DriverEvents.Started> sent = driver.started().stream().filter(e -> e.name().equals(command)).toList();
        long operation = sent.get(0).operationId();
        return sent.stream().filter(e -> e.operationId() == operation).count();
    }

    private static boolean ignoringErrors(Runnable work) {
        try {
            work.run();
            return true;
        } catch (MongoException e) {
            return false;
        }
    }

    // ================================================================ plumbing

    static MongoClient client(ProxyServer proxy, String appName, DriverEvents events, String options) {
        String base = proxy.connectionString();
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(base + (base.contains("?") ? "&" : "?") + options))
                .applicationName(appName)
                .applyToClusterSettings(b -> b.serverSelectionTimeout(15, TimeUnit.SECONDS))
                .addCommandListener(events)
                .build());
    }

    static void rule(ProxyServer proxy, String json) {
        proxy.rules().put(proxy.ruleParser().parse("r" + proxy.rules().rules().size(), BsonDocument.parse(json)));
    }

    /** Outcomes are counted when an attempt ends, which for a hang is when the client gives up the connection. */
    static void awaitEveryAttemptEnded(MeterRegistry registry) throws InterruptedException {
        Await.until(WAIT, () -> "every attempt to have an outcome: attempts " + (long) Meters.sum(registry, "blackpipe.command.attempts")
                        + ", outcomes " + (long) Meters.sum(registry, "blackpipe.command.outcomes"),
                () -> Meters.sum(registry, "blackpipe.command.attempts") == Meters.sum(registry, "blackpipe.command.outcomes"));
    }

    static Set<String> countedCommands(MeterRegistry registry) {
        Set<String> names = new TreeSet<>();
        for (Counter counter : registry.find("blackpipe.command.attempts").counters()) {
            if (counter.count() > 0) {
                names.add(counter.getId().getTag("command"));
            }
        }
        return names;
    }

    static java.util.Map<String, Long> outcomes(MeterRegistry registry, String command) {
        java.util.Map<String, Long> byOutcome = new java.util.TreeMap<>();
        for (Counter counter : registry.find("blackpipe.command.outcomes").tag("command", command).counters()) {
            if (counter.count() > 0) {
                byOutcome.merge(counter.getId().getTag("outcome"), (long) counter.count(), Long::sum);
            }
        }
        return byOutcome;
    }

    /** Round trips timed for {@code command}, summed over members, as /metrics shows them. */
    static long durationCount(PrometheusMeterRegistry registry, String command) {
        Matcher count = Pattern.compile("(?m)^blackpipe_command_duration_seconds_count\\{command=\"" + Pattern.quote(command)
                + "\",member=\"[^\"]+\"\\} (\\S+)$").matcher(registry.scrape());
        long sum = 0;
        while (count.find()) {
            sum += Long.parseLong(count.group(1));
        }
        return sum;
    }

    private static void assertMonitoringKeptApart(MeterRegistry registry, DriverEvents driver, String context) {
        for (String hello : HELLOS) {
            assertEquals(0, Meters.sum(registry, "blackpipe.command.attempts", "command", hello), context + ": " + hello + " attempts");
            assertEquals(0, driver.started(hello), context + ": the driver does not report its monitoring hellos");
        }
        assertTrue(Meters.sum(registry, "blackpipe.monitoring.commands") > 0, context + ": monitoring traffic has its own meter");
    }

    private static void assertAppLabel(MeterRegistry registry, String app, String context) {
        List<Counter> attempts = new ArrayList<>(registry.find("blackpipe.command.attempts").counters());
        assertFalse(attempts.isEmpty(), context);
        for (Counter counter : attempts) {
            assertEquals(app, counter.getId().getTag("app"), context + ": " + counter.getId());
        }
    }

    /**
     * The member label the application's commands carry: the upstream host:port of the member
     * they went to (the primary), which must be one of the proxy's members.
     */
    static String primaryLabel(ProxyServer proxy) {
        Set<String> labels = new TreeSet<>();
        registryAttempts(proxy.registry()).forEach(c -> labels.add(c.getId().getTag("member")));
        assertEquals(1, labels.size(), "every command went to the primary: " + labels);
        String member = labels.iterator().next();
        assertTrue(proxy.members().stream().anyMatch(m -> m.upstream().toString().equals(member)),
                member + " is the upstream address of one of " + proxy.members());
        return member;
    }

    private static List<Counter> registryAttempts(MeterRegistry registry) {
        return new ArrayList<>(registry.find("blackpipe.command.attempts").counters());
    }

    private static String quote(String s) {
        return java.util.regex.Pattern.quote(s);
    }
}
