package io.blackpipe.fault;

import static com.mongodb.client.model.Filters.eq;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoSocketReadTimeoutException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.MongoWriteConcernException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Updates;
import com.mongodb.connection.ServerDescription;
import com.mongodb.event.ConnectionPoolClearedEvent;
import com.mongodb.event.ConnectionPoolListener;
import io.blackpipe.pipe.MemberListener;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.CommandLog;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.topology.Member;
import io.blackpipe.topology.MemberState;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.bson.BsonArray;
import org.bson.BsonValue;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Every script in fault-scripts/ run through the proxy with the real Java driver, asserting what
 * the script's comments say a correct application sees: what the driver raised, whether it
 * retried (the driver's own CommandStartedEvents against blackpipe's attempt and retry counters),
 * and what the server holds afterwards.
 */
class ScenarioScriptsTest {
    private static final Duration WAIT = Duration.ofSeconds(20);

    private ProxyServer proxy;
    private MongoClient direct;
    private final List<MongoClient> clients = new ArrayList<>();
    private final CommandLog log = new CommandLog();
    private final List<ConnectionPoolClearedEvent> poolsCleared = new CopyOnWriteArrayList<>();

    @BeforeEach
    void start() {
        proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()));
        direct = UpstreamLane.directClient();
    }

    @AfterEach
    void stop() {
        clients.forEach(MongoClient::close);
        if (direct != null) {
            direct.close();
        }
        if (proxy != null) {
            proxy.close();
        }
    }

    // ------------------------------------------------------------------ helpers

    private Scenario script(String name) throws IOException {
        return proxy.scenarioLoader().load(ScenarioLoaderTest.script(name));
    }

    private void run(String name) throws IOException {
        run(script(name));
    }

    private void run(Scenario scenario) {
        proxy.scenarios().start(scenario);
        assertEquals(ScenarioRunner.State.RUNNING, proxy.scenarios().state());
        assertEquals(scenario.name(), proxy.scenarios().status().getString("name").getValue());
    }

    /** A driver client through the proxy; every client has a socket timeout, so nothing can hang. */
    private MongoClient client(String options, int socketTimeoutMillis, int serverSelectionMillis) {
        String uri = CommandLog.withOptions(proxy.connectionString(), "socketTimeoutMS=" + socketTimeoutMillis
                + (options.isEmpty() ? "" : "&" + options));
        MongoClient client = MongoClients.create(log.driverOn(uri)
                .applicationName("scenario-scripts")
                .applyToClusterSettings(b -> b.serverSelectionTimeout(serverSelectionMillis, TimeUnit.MILLISECONDS))
                .applyToSocketSettings(b -> b.connectTimeout(5, TimeUnit.SECONDS))
                .applyToConnectionPoolSettings(b -> b.addConnectionPoolListener(new ConnectionPoolListener() {
                    @Override
                    public void connectionPoolCleared(ConnectionPoolClearedEvent event) {
                        poolsCleared.add(event);
                    }
                }))
                .build());
        clients.add(client);
        return client;
    }

    private MongoClient client(String options) {
        return client(options, 10_000, 10_000);
    }

    private long driverStarted(String command) {
        return log.startedCount(command);
    }

    private long attempts(String command) {
        return Meters.attempts(proxy.registry(), command);
    }

    private long retries(String command) {
        return Meters.retries(proxy.registry(), command);
    }

    private long outcomes(String command, String outcome) {
        return Meters.outcomes(proxy.registry(), command, outcome);
    }

    private MongoCollection<Document> serverSide(String db, String collection) {
        return direct.getDatabase(db).getCollection(collection);
    }

    private List<String> stepsDone() {
        List<String> done = new ArrayList<>();
        for (BsonValue step : proxy.scenarios().status().getArray("stepsDone", new BsonArray())) {
            done.add(step.asString().getValue());
        }
        return done;
    }

    private static long millisSince(long startNanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }

    // ------------------------------------------------------------------ transient-blip

    @Test
    void transientBlipIsHiddenByRetryableWrites() throws Exception {
        run("transient-blip");
        String db = UpstreamLane.freshDatabaseName("blip");
        client("retryWrites=true").getDatabase(db).getCollection("c").insertOne(new Document("_id", 1));

        assertEquals(2, driverStarted("insert"), "the driver retried the insert once");
        assertEquals(2, attempts("insert"));
        assertEquals(1, retries("insert"));
        assertEquals(1, outcomes("insert", "network_error"));
        assertEquals(1, outcomes("insert", "ok"));
        assertEquals(1, Meters.faults(proxy.registry(), "resetConnection", "insert"));
        assertEquals(1, serverSide(db, "c").countDocuments(), "the server holds the document once");
    }

    @Test
    void transientBlipWithoutRetryableWritesIsANetworkErrorAndNothingWasWritten() throws Exception {
        run("transient-blip");
        String db = UpstreamLane.freshDatabaseName("blipnr");
        MongoCollection<Document> c = client("retryWrites=false").getDatabase(db).getCollection("c");
        assertThrows(MongoSocketException.class, () -> c.insertOne(new Document("_id", 1)));

        assertEquals(1, driverStarted("insert"));
        assertEquals(1, attempts("insert"));
        assertEquals(0, retries("insert"));
        assertEquals(1, outcomes("insert", "network_error"));
        assertEquals(0, serverSide(db, "c").countDocuments(), "the reset came before the server saw the insert");
    }

    // ------------------------------------------------------------------ reply-lost-after-apply

    @Test
    void replyLostAfterApplyWithoutRetryReportsAFailureForAWriteThatHappened() throws Exception {
        String db = UpstreamLane.freshDatabaseName("lost");
        serverSide(db, "counters").insertOne(new Document("_id", "day").append("counter", 0));
        run("reply-lost-after-apply");
        MongoCollection<Document> counters = client("retryWrites=false").getDatabase(db).getCollection("counters");
        assertThrows(MongoSocketException.class, () -> counters.updateOne(eq("_id", "day"), Updates.inc("counter", 1)));

        assertEquals(1, driverStarted("update"));
        assertEquals(1, attempts("update"));
        assertEquals(1, outcomes("update", "network_error"));
        assertEquals(1, Meters.faults(proxy.registry(), "dropReply", "update"));
        assertEquals(1, serverSide(db, "counters").find(eq("_id", "day")).first().getInteger("counter"),
                "the server applied the update the driver reported as failed");
    }

    @Test
    void replyLostAfterApplyIsRetriedAndTheCounterMovesOnceAsTheRetryIsDeduplicated() throws Exception {
        String db = UpstreamLane.freshDatabaseName("lostretry");
        serverSide(db, "counters").insertOne(new Document("_id", "day").append("counter", 0));
        run("reply-lost-after-apply");
        client("retryWrites=true").getDatabase(db).getCollection("counters").updateOne(eq("_id", "day"), Updates.inc("counter", 1));

        assertEquals(2, driverStarted("update"), "the driver retried the update once");
        assertEquals(2, attempts("update"));
        assertEquals(1, retries("update"));
        int counter = serverSide(db, "counters").find(eq("_id", "day")).first().getInteger("counter");
        // mongod answers the retry from the first run; blackpipe does so in the place of a member that would not (jongodb)
        assertEquals(1, counter, "the retry was de-duplicated: the counter moved once");
    }

    @Test
    void replyLostAfterApplyDoesNoHarmToAnIdempotentUpdate() throws Exception {
        String db = UpstreamLane.freshDatabaseName("lostset");
        serverSide(db, "orders").insertOne(new Document("_id", 7).append("status", "new"));
        run("reply-lost-after-apply");
        client("retryWrites=true").getDatabase(db).getCollection("orders").updateOne(eq("_id", 7), Updates.set("status", "paid"));

        assertEquals(2, driverStarted("update"));
        assertEquals(1, retries("update"));
        assertEquals("paid", serverSide(db, "orders").find(eq("_id", 7)).first().getString("status"));
    }

    // ------------------------------------------------------------------ persistent-outage

    @Test
    void persistentOutageFailsWithServerSelectionTimeoutsAndRecoversByItself() throws Exception {
        String text = Files.readString(ScenarioLoaderTest.script("persistent-outage"));
        assertTrue(text.contains("duration: 40s"), text);
        Scenario shortened = proxy.scenarioLoader().parse("persistent-outage.yaml (5s)", text.replace("duration: 40s", "duration: 5s"));
        assertEquals(5_000, shortened.timeline().get(0).durationMillis());

        String db = UpstreamLane.freshDatabaseName("outage");
        MongoClient client = client("retryWrites=true&retryReads=true", 5_000, 1_500);
        MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
        c.insertOne(new Document("_id", "before"));
        Member primary = proxy.members().stream()
                .filter(m -> proxy.memberState(m.upstream()).role() == MemberState.Role.PRIMARY).findFirst().orElseThrow();

        long outageStarted = System.nanoTime();
        run(shortened);
        Await.until(WAIT, "the outage step to fire", () -> proxy.listener(primary.upstream()).down());
        assertEquals(List.of("0ms outage of primary for 5000 ms"), stepsDone());
        // the driver's monitor saw its connection reset: the primary is unknown until it is back
        Await.until(WAIT, "the driver to lose the primary", () -> client.getClusterDescription().getServerDescriptions().stream()
                .noneMatch(ServerDescription::isPrimary));

        long before = System.nanoTime();
        MongoTimeoutException timeout = assertThrows(MongoTimeoutException.class, () -> c.insertOne(new Document("_id", "during")),
                "an operation during the outage fails after serverSelectionTimeoutMS instead of hanging");
        long took = millisSince(before);
        assertTrue(took >= 1_400 && took < 4_900, "failed after " + took + " ms, serverSelectionTimeoutMS is 1500");
        assertTrue(millisSince(outageStarted) < 5_000, "the timeout came while the member was still down");
        assertNotNull(timeout.getMessage());

        // it comes back on its own: poll with operations until one succeeds
        int failuresAfter = 0;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try {
                c.insertOne(new Document("_id", "after"));
                break;
            } catch (MongoTimeoutException | MongoSocketException e) {
                failuresAfter++;
                assertTrue(System.nanoTime() < deadline, "the driver did not recover within 30 s of the outage");
            }
        }
        long recoveredAfter = millisSince(outageStarted);
        assertTrue(recoveredAfter >= 5_000, "recovered after " + recoveredAfter + " ms, while the outage lasts 5000 ms");
        assertFalse(proxy.listener(primary.upstream()).down());
        assertTrue(failuresAfter < 20, "polled " + failuresAfter + " times: no tight retry loop");

        // the write that timed out never reached the server; the ones before and after did
        assertEquals(List.of("after", "before"),
                serverSide(db, "c").find().map(d -> d.getString("_id")).into(new ArrayList<>()).stream().sorted().toList());
        assertEquals(ScenarioRunner.State.RUNNING, proxy.scenarios().state(), "the scenario has no end step; it keeps running");
    }

    // ------------------------------------------------------------------ command-error-not-retried

    @Test
    void commandErrorIsRaisedAndNotRetried() throws Exception {
        run("command-error-not-retried");
        String db = UpstreamLane.freshDatabaseName("unauth");
        MongoCollection<Document> c = client("retryWrites=true").getDatabase(db).getCollection("c");
        for (int i = 0; i < 3; i++) {
            int id = i;
            MongoCommandException denied = assertThrows(MongoCommandException.class, () -> c.insertOne(new Document("_id", id)));
            assertEquals(13, denied.getErrorCode());
            assertEquals("Unauthorized", denied.getErrorCodeName());
        }
        assertEquals(3, driverStarted("insert"), "one driver attempt per insert: no retry");
        assertEquals(3, attempts("insert"));
        assertEquals(0, retries("insert"));
        assertEquals(3, outcomes("insert", "error"));
        assertEquals(3, Meters.faults(proxy.registry(), "errorReply", "insert"));
        assertEquals(0, serverSide(db, "c").countDocuments());
    }

    // ------------------------------------------------------------------ a timeline "remove" step

    @Test
    void aRemoveStepTakesItsRuleOutAtItsOffsetAndLeavesTheOthers() throws Exception {
        run(proxy.scenarioLoader().parse("remove-step.yaml", String.join("\n",
                "name: remove-step",
                "rules:",
                "  - {id: deny, configureFailPoint: failCommand, mode: alwaysOn, data: {failCommands: [insert], errorCode: 13}}",
                "  - {id: denyDeletes, configureFailPoint: failCommand, mode: alwaysOn, data: {failCommands: [delete], errorCode: 13}}",
                "timeline:",
                "  - {at: 1s, remove: deny}")));
        String db = UpstreamLane.freshDatabaseName("removestep");
        MongoCollection<Document> c = client("retryWrites=true").getDatabase(db).getCollection("c");
        MongoCommandException denied = assertThrows(MongoCommandException.class, () -> c.insertOne(new Document("_id", 1)));
        assertEquals(13, denied.getErrorCode(), "before the step the rule is in force");
        Await.until(WAIT, () -> "the remove step never fired: " + proxy.scenarios().status(), () -> !stepsDone().isEmpty());
        c.insertOne(new Document("_id", 2)); // the rule is gone: the insert reaches the server
        assertEquals(List.of("denyDeletes"), proxy.rules().rules().stream().map(Rule::id).toList(),
                "only the named rule is removed");
        assertEquals(13, assertThrows(MongoCommandException.class, () -> c.deleteOne(new Document("_id", 2))).getErrorCode(),
                "the scenario's other rule is still in force");
        assertEquals(ScenarioRunner.State.RUNNING, proxy.scenarios().state());
        assertEquals(1, Meters.faults(proxy.registry(), "errorReply", "insert"));
        assertEquals(1, outcomes("insert", "ok"));
        assertEquals(List.of(new Document("_id", 2)), serverSide(db, "c").find().into(new ArrayList<>()),
                "the server holds the insert made after the step, not the one refused before it");
    }

    // ------------------------------------------------------------------ stop and end restore what the scenario faulted

    @Test
    void stopAndEndRestoreTheMembersTheScenarioTookDownEvenAfterAFailover() throws Exception {
        proxy.close();
        proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.singleNodeUri()).withSimulatedMembers(3));
        MemberListener first = proxy.select("primary").get(0);

        run(proxy.scenarioLoader().parse("outfail.yaml", "name: outfail\ntimeline:\n"
                + "  - at: 0s\n    outage: primary\n  - at: 0s\n    failover: {}\n  - at: 0s\n    blackhole: primary\n"));
        assertTrue(first.down(), "the outage step took the first primary down");
        List<MemberListener> primaryNow = proxy.select("primary");
        assertEquals(1, primaryNow.size());
        MemberListener second = primaryNow.get(0);
        assertFalse(second == first, "the failover moved the primary role");
        assertTrue(second.blackholed(), "after the failover, 'primary' named the next member");

        proxy.scenarios().stop();
        assertFalse(first.down(), "stop restores the member the outage took down, though it is no longer primary");
        assertFalse(second.blackholed());
        assertTrue(proxy.select("all").stream().noneMatch(l -> l.down() || l.blackholed()));

        run(proxy.scenarioLoader().parse("outfail-end.yaml", "name: outfail-end\ntimeline:\n"
                + "  - at: 0s\n    outage: primary\n  - at: 0s\n    failover: {}\n  - at: 100ms\n    end: true\n"));
        MemberListener downNow = proxy.select("all").stream().filter(MemberListener::down).findFirst().orElseThrow();
        Await.until(WAIT, "the end step", () -> proxy.scenarios().state() == ScenarioRunner.State.FINISHED);
        assertFalse(downNow.down(), "end restores it too");
        assertTrue(proxy.select("all").stream().noneMatch(MemberListener::down));
    }

    // ------------------------------------------------------------------ not-writable-primary-once

    @Test
    void notWritablePrimaryOnceIsInvisibleWithRetryableWrites() throws Exception {
        run("not-writable-primary-once");
        String db = UpstreamLane.freshDatabaseName("nwp");
        client("retryWrites=true").getDatabase(db).getCollection("c").insertOne(new Document("_id", 1));

        assertEquals(2, driverStarted("insert"));
        assertEquals(2, attempts("insert"));
        assertEquals(1, retries("insert"));
        assertEquals(1, outcomes("insert", "error"));
        assertEquals(1, outcomes("insert", "ok"));
        assertEquals(1, serverSide(db, "c").countDocuments(), "the document once");
    }

    // ------------------------------------------------------------------ failover-during-writes

    private boolean multiMemberReplicaSet() {
        return proxy.deployment().isReplicaSet() && proxy.members().size() > 1;
    }

    @Test
    void failoverDuringWrites() throws Exception {
        String text = Files.readString(ScenarioLoaderTest.script("failover-during-writes"));
        assertTrue(text.contains("at: 5s"), text);
        if (!multiMemberReplicaSet()) {
            // one member: nothing to fail over to, and the scenario is refused as it loads instead of pretending
            ScenarioException refused = assertThrows(ScenarioException.class,
                    () -> proxy.scenarioLoader().parse("failover-during-writes.yaml", text));
            assertTrue(refused.getMessage().startsWith("failover-during-writes.yaml:11: timeline[0].failover: failover needs a"
                    + " replica set with more than one member"), refused.getMessage());
            assertEquals(ScenarioRunner.State.IDLE, proxy.scenarios().state());
            return;
        }
        Scenario scenario = proxy.scenarioLoader().parse("failover-during-writes.yaml (1s)", text.replace("at: 5s", "at: 1s"));
        String db = UpstreamLane.freshDatabaseName("failover");
        MongoClient client = client("retryWrites=true&w=majority", 30_000, 60_000);
        MongoCollection<Document> c = client.getDatabase(db).getCollection("writes");
        c.insertOne(new Document("_id", 0));
        String primaryBefore = primaryName();

        run(scenario);
        AtomicInteger acknowledged = new AtomicInteger(1);
        List<Throwable> escaped = new ArrayList<>();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        // a stream of writes: through the step, and on until the step is done (plus a little)
        int afterStep = 0;
        while (afterStep < 20 && System.nanoTime() < end) {
            try {
                c.insertOne(new Document("_id", acknowledged.get()));
                acknowledged.incrementAndGet();
            } catch (MongoException e) {
                escaped.add(e);
                break;
            }
            if (!stepsDone().isEmpty()) {
                afterStep++;
            }
            Thread.sleep(20);
        }
        List<String> done = stepsDone();
        assertEquals(1, done.size(), () -> "the failover step fired: " + proxy.scenarios().status().toJson());

        assertFalse(done.get(0).contains("FAILED"), done::toString);
        assertTrue(escaped.isEmpty(), () -> "a correct app keeps writing; the driver raised " + escaped);
        Await.until(Duration.ofSeconds(60), "a new primary", () -> {
            String now = primaryName();
            return now != null && !now.equals(primaryBefore);
        });
        // every acknowledged write is on the server, none twice (a double apply would have raised E11000)
        assertEquals(acknowledged.get(), direct.getDatabase(db).getCollection("writes")
                .withWriteConcern(com.mongodb.WriteConcern.MAJORITY).countDocuments());
        assertTrue(driverStarted("insert") >= acknowledged.get());
    }

    @Test
    void failoverDuringWritesOnASimulatedReplicaSetKeepsTheWritesGoing() throws Exception {
        proxy.close();
        proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.singleNodeUri()).withSimulatedMembers(3));
        String text = Files.readString(ScenarioLoaderTest.script("failover-during-writes"));
        Scenario scenario = proxy.scenarioLoader().parse("failover-during-writes.yaml (1s)", text.replace("at: 5s", "at: 1s"));
        String db = UpstreamLane.freshDatabaseName("simfailover");
        MongoClient client = client("retryWrites=true", 10_000, 10_000);
        MongoCollection<Document> c = client.getDatabase(db).getCollection("writes");
        c.insertOne(new Document("_id", 0));
        String firstPrimary = proxy.members().get(0).advertised().toString();
        String nextPrimary = proxy.members().get(1).advertised().toString();
        Await.until(WAIT, "the driver to see the first member as primary", () -> firstPrimary.equals(driverPrimary(client)));

        run(scenario);
        int acknowledged = 1;
        int afterStep = 0;
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (afterStep < 20 && System.nanoTime() < end) {
            c.insertOne(new Document("_id", acknowledged)); // a correct app never sees the failover
            acknowledged++;
            if (!stepsDone().isEmpty()) {
                afterStep++;
            }
            Thread.sleep(20);
        }
        assertEquals(List.of("1000ms fail over"), stepsDone(), () -> proxy.scenarios().status().toJson());
        Await.until(WAIT, "the driver to follow the new primary", () -> nextPrimary.equals(driverPrimary(client)));

        // the one write that met the old primary got NotWritablePrimary (never applied) and was retried once
        assertTrue(retries("insert") <= 1, "retries: " + retries("insert"));
        assertEquals(retries("insert"), outcomes("insert", "error"));
        assertEquals(driverStarted("insert"), attempts("insert"), "every driver attempt reached the proxy");
        assertEquals(acknowledged + retries("insert"), driverStarted("insert"));
        assertEquals(acknowledged, serverSide(db, "writes").countDocuments(), "no acknowledged write lost, none applied twice");
    }

    @Test
    void rollingRestartOnASimulatedReplicaSetKeepsReadsAndWritesGoing() throws Exception {
        Scenario scenario = bundledOnASimulatedSet("rolling-restart", "1s each", "at: 5s", "at: 1s",
                "{quiesce: 5s, down: 5s, between: 5s}", "{quiesce: 1s, down: 1s, between: 1s}");
        String db = UpstreamLane.freshDatabaseName("rolling");
        MongoClient client = client("retryWrites=true&heartbeatFrequencyMS=500", 10_000, 20_000);
        MongoCollection<Document> c = client.getDatabase(db).getCollection("writes");
        c.insertOne(new Document("_id", 0));
        MongoCollection<Document> secondaries = c.withReadPreference(com.mongodb.ReadPreference.secondaryPreferred());
        List<String> members = proxy.members().stream().map(m -> m.upstream().toString()).toList();
        Await.until(WAIT, "the driver to see the first member as primary",
                () -> proxy.members().get(0).advertised().toString().equals(driverPrimary(client)));

        run(scenario);
        int acknowledged = 1;
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        // through all three restarts (the primary's begins 7 s in and it is back 2 s later), and on for a little
        while (!(stepsDone().size() == 4 && proxy.members().stream().allMatch(m -> isUp(m.upstream()))) && System.nanoTime() < end) {
            c.insertOne(new Document("_id", acknowledged)); // a correct app never sees the restarts
            acknowledged++;
            assertEquals(0, secondaries.find(new Document("_id", 0)).first().getInteger("_id"));
            Thread.sleep(10);
        }
        List<String> steps = stepsDone();
        assertEquals("1000ms rolling restart (quiesce 1000 ms, down 1000 ms, 1000 ms between members)", steps.get(0));
        List<String> turns = List.of(members.get(1), members.get(2), "primary " + members.get(0));
        for (int i = 0; i < turns.size(); i++) { // each at the time its restart began: 3 s (quiesce, down, between) after the last
            Matcher turn = Pattern.compile("(\\d+)ms rolling restart: (.+)").matcher(steps.get(i + 1));
            assertTrue(turn.matches(), steps::toString);
            assertEquals(turns.get(i), turn.group(2), steps::toString);
            assertTrue(Long.parseLong(turn.group(1)) >= 1000 + i * 3000L, steps::toString);
        }
        assertTrue(proxy.members().stream().allMatch(m -> isUp(m.upstream())), "every member serves again");
        assertEquals(MemberState.Role.PRIMARY, proxy.memberState(proxy.members().get(1).upstream()).role(),
                "the primary stepped down to the next member before it restarted");
        assertEquals(acknowledged, serverSide(db, "writes").countDocuments(), "no acknowledged write lost, none applied twice");
        assertTrue(Meters.sum(proxy.registry(), "blackpipe.faults.injected", "fault", "restart") > 0, "the members' hellos answered ShutdownInProgress while they quiesced");
    }

    /**
     * The bundled failover-with-rollback (3 s in, reaching back 1 s): an app writing with w: 1 loses what it was told the old
     * primary had written in the rollback's reach, its latest writes before the failover, and goes on with the new primary;
     * what it wrote with majority stays.
     */
    @Test
    void failoverWithRollbackLosesTheLatestW1WritesAndKeepsTheMajorityOnes() throws Exception {
        Scenario scenario = bundledOnASimulatedSet("failover-with-rollback", "3s in, 1s back", "at: 10s", "at: 3s",
                "failover: {rollback: 5s}", "failover: {rollback: 1s}");
        String db = UpstreamLane.freshDatabaseName("rolledBack");
        MongoClient client = client("retryWrites=true&heartbeatFrequencyMS=500", 10_000, 20_000);
        MongoCollection<Document> c = client.getDatabase(db).getCollection("writes");
        c.insertOne(new Document("_id", -1)); // majority
        MongoCollection<Document> w1 = c.withWriteConcern(com.mongodb.WriteConcern.W1);

        run(scenario);
        int acknowledged = 0;
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (stepsDone().isEmpty() && System.nanoTime() < end) {
            w1.insertOne(new Document("_id", acknowledged)); // to the old primary until the failover, then to the new one
            acknowledged++;
            Thread.sleep(5);
        }
        int last = acknowledged;
        w1.insertOne(new Document("_id", last));
        assertEquals(List.of("3000ms fail over rolling back the old primary's last 1000 ms"), stepsDone(),
                () -> proxy.scenarios().status().toJson());

        List<Integer> kept = serverSide(db, "writes").find().sort(new Document("_id", 1)).map(d -> d.getInteger("_id")).into(new ArrayList<>());
        assertTrue(kept.contains(-1) && kept.contains(last), "the majority write stays, and so does the new primary's: " + kept);
        List<Integer> lost = new ArrayList<>();
        for (int id = 0; id <= last; id++) {
            if (!kept.contains(id)) {
                lost.add(id);
            }
        }
        assertFalse(lost.isEmpty(), "the w: 1 writes of the last second before the failover are lost: kept " + kept);
        assertEquals(lost.get(lost.size() - 1) - lost.get(0) + 1, lost.size(), "the old primary's latest writes, one run of them"
                + " (a write under way at the failover may stay, as one replicated in time): " + lost);
        assertTrue(lost.get(0) > 0, "what the old primary acknowledged before the rollback's reach stays: " + lost);
    }

    /**
     * The proxy started afresh over a simulated set of three, and the bundled scenario {@code name} shortened: each pair of
     * {@code replacements} (what the file says, and what the test runs) replaced; the file must say each.
     */
    private Scenario bundledOnASimulatedSet(String name, String shortened, String... replacements) throws IOException {
        proxy.close();
        proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.singleNodeUri()).withSimulatedMembers(3));
        String text = Files.readString(ScenarioLoaderTest.script(name));
        for (int i = 0; i < replacements.length; i += 2) {
            assertTrue(text.contains(replacements[i]), name + " says " + replacements[i] + ":\n" + text);
            text = text.replace(replacements[i], replacements[i + 1]);
        }
        return proxy.scenarioLoader().parse(name + ".yaml (" + shortened + ")", text);
    }

    private boolean isUp(io.blackpipe.topology.MemberAddress member) {
        MemberListener listener = proxy.listener(member);
        return !listener.down() && listener.quiesce() == null;
    }

    private static String driverPrimary(MongoClient client) {
        return client.getClusterDescription().getServerDescriptions().stream().filter(ServerDescription::isPrimary)
                .map(d -> d.getAddress().toString()).findFirst().orElse("none");
    }

    /** The upstream name of the member the proxy last heard say it is primary (asked afresh). */
    private String primaryName() {
        proxy.refreshMemberStates();
        return proxy.members().stream().filter(m -> proxy.memberState(m.upstream()).role() == MemberState.Role.PRIMARY)
                .map(m -> m.upstream().toString()).findFirst().orElse(null);
    }

    // ------------------------------------------------------------------ hang-until-socket-timeout

    @Test
    void hangEndsInTheDriversSocketTimeoutWithoutClearingThePool() throws Exception {
        String db = UpstreamLane.freshDatabaseName("hang");
        serverSide(db, "c").insertOne(new Document("_id", 1));
        MongoClient client = client("retryReads=false", 1_000, 10_000);
        MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
        client.getDatabase("admin").runCommand(new Document("ping", 1)); // connected before the fault
        run("hang-until-socket-timeout");

        long before = System.nanoTime();
        assertThrows(MongoSocketReadTimeoutException.class, () -> c.find(eq("_id", 1)).first());
        long took = millisSince(before);
        assertTrue(took >= 950 && took < 8_000, "timed out after " + took + " ms with socketTimeoutMS=1000");
        assertEquals(1, driverStarted("find"));
        assertEquals(1, attempts("find"));
        assertEquals(1, Meters.faults(proxy.registry(), "hang", "find"));
        Await.until(WAIT, "the swallowed find to end as a network error when the driver closed its connection",
                () -> outcomes("find", "network_error") == 1);
        assertTrue(poolsCleared.isEmpty(), () -> "a timeout must not clear the pool, as a reset does: " + poolsCleared);

        assertEquals(1, c.find(eq("_id", 1)).first().getInteger("_id"), "the rule fired once; the next find works");
        assertEquals(2, attempts("find"));
        assertEquals(1, outcomes("find", "ok"));
    }

    @Test
    void hangWithRetryableReadsIsRetriedOnceAfterTheSocketTimeout() throws Exception {
        String db = UpstreamLane.freshDatabaseName("hangretry");
        serverSide(db, "c").insertOne(new Document("_id", 1));
        MongoClient client = client("retryReads=true", 1_000, 10_000);
        MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
        client.getDatabase("admin").runCommand(new Document("ping", 1));
        run("hang-until-socket-timeout");

        long before = System.nanoTime();
        assertEquals(1, c.find(eq("_id", 1)).first().getInteger("_id"));
        long took = millisSince(before);
        assertTrue(took >= 950, "the answer came after the socket timeout, " + took + " ms");
        assertEquals(2, driverStarted("find"), "the Java driver retries a read after a socket timeout, once");
        assertEquals(2, attempts("find"));
        assertEquals(1, retries("find"));
        assertEquals(1, Meters.faults(proxy.registry(), "hang", "find"));
        assertTrue(poolsCleared.isEmpty(), () -> "a timeout must not clear the pool: " + poolsCleared);
    }

    // ------------------------------------------------------------------ slow-network

    /** Inserts {_id: 1, n: 1} and increments n: how long each took, in ms. */
    private static long[] insertThenIncrementMillis(MongoCollection<Document> c) {
        long before = System.nanoTime();
        c.insertOne(new Document("_id", 1).append("n", 1));
        long insert = millisSince(before);
        before = System.nanoTime();
        c.updateOne(eq("_id", 1), Updates.inc("n", 1));
        return new long[] {insert, millisSince(before)};
    }

    @Test
    void slowNetworkMakesEveryReplyAndHelloLateOnEveryMemberButEverythingWorksOnceAndItsEndRestoresTheLink() throws Exception {
        String db = UpstreamLane.freshDatabaseName("slownet");
        run("slow-network");
        MongoClient client = client("retryWrites=true&heartbeatFrequencyMS=500", 10_000, 10_000); // its handshakes cross the link
        MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
        long[] took = insertThenIncrementMillis(c);
        long insert = took[0];
        long update = took[1];
        Document found = c.find(eq("_id", 1)).first();

        assertTrue(insert >= 100 && update >= 100, "each reply at least 200 - 100 ms late: insert " + insert + " ms, update "
                + update + " ms");
        assertEquals(2, found.getInteger("n"));
        assertEquals(1, driverStarted("insert"), "slow is not failed: nothing retried");
        assertEquals(0, retries("insert") + retries("update") + retries("find"));
        assertEquals(2, direct.getDatabase(db).getCollection("c").find(eq("_id", 1)).first().getInteger("n"), "stored once");
        Await.until(WAIT, "the driver's round-trip time to grow past 50 ms", () -> client.getClusterDescription()
                .getServerDescriptions().stream().anyMatch(d -> d.isOk() && d.getRoundTripTimeNanos() > 50_000_000));
        assertTrue(proxy.select("all").stream().allMatch(l -> new Latency(200, 100).equals(l.latency())));

        proxy.scenarios().stop();
        assertTrue(proxy.select("all").stream().allMatch(l -> l.latency() == null), "its end ends the latency it began");
    }

    // ------------------------------------------------------------------ a resetConnections step

    /**
     * A scenario's resetConnections step resets every connection of the member at its time, as a load balancer that
     * drops its flows: an insert held by a rule's delay (applied, its reply not yet sent) is cut with its connection,
     * the driver retries it on a new one, and it lands once.
     */
    @Test
    void aResetConnectionsStepCutsTheCommandsInFlightAndARetryableWriteLandsOnce() throws Exception {
        String db = UpstreamLane.freshDatabaseName("resetstep");
        MongoClient client = client("retryWrites=true");
        MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
        c.insertOne(new Document("_id", 1)); // connected before the scenario
        long before = System.nanoTime(); // before the scenario starts, which the step's 700 ms count from
        run(proxy.scenarioLoader().parse("reset.yaml", """
                name: reset
                rules:
                  - {configureFailPoint: failCommand, mode: {times: 1}, data: {failCommands: [insert], delayReplyMS: 3000}}
                timeline:
                  - at: 700ms
                    resetConnections: primary
                """));
        c.insertOne(new Document("_id", 2));
        long took = millisSince(before);

        assertTrue(took >= 700, "the insert ended with the reset at 700 ms, not before: " + took + " ms");
        assertEquals(1, Meters.faults(proxy.registry(), DeploymentFaults.CONNECTIONS_RESET, "insert"), "the held insert was cut");
        assertEquals(1, retries("insert"), "the driver retried it on a new connection");
        assertEquals(2, direct.getDatabase(db).getCollection("c").countDocuments(), "each insert landed once");
        assertTrue(proxy.scenarios().status().toJson().contains("reset the connections of primary"), proxy.scenarios().status()::toJson);
    }

    // ------------------------------------------------------------------ narrow-link

    @Test
    void narrowLinkTricklesALargeReplyInLongerThanTheSocketTimeoutWithoutATimeoutAndItsEndWidensTheLink() throws Exception {
        String db = UpstreamLane.freshDatabaseName("narrow");
        direct.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1).append("payload", "z".repeat(100_000)));
        MongoClient client = client("retryReads=true", 1_000, 10_000);
        MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
        c.insertOne(new Document("_id", 2)); // connected before the link narrows
        run("narrow-link");
        Await.until(WAIT, "the scenario's bandwidth", () -> proxy.select("primary").stream()
                .allMatch(l -> new Bandwidth(32 * 1024).equals(l.bandwidth())));

        long before = System.nanoTime();
        Document found = c.find(eq("_id", 1)).first();
        long find = millisSince(before);
        assertEquals(100_000, found.getString("payload").length());
        assertTrue(find >= 3_000, "a 100 KB reply at 32 KiB a second took " + find + " ms");
        assertEquals(1, driverStarted("find"), "no read waited the 1 s socketTimeoutMS, though the reply took three: nothing retried");
        assertEquals(0, retries("find"));
        c.updateOne(eq("_id", 2), Updates.inc("n", 1));
        assertEquals(1, direct.getDatabase(db).getCollection("c").find(eq("_id", 2)).first().getInteger("n"), "stored once");

        proxy.scenarios().stop();
        assertTrue(proxy.select("all").stream().allMatch(l -> l.bandwidth() == null), "its end ends the bandwidth it began");
    }

    // ------------------------------------------------------------------ slow-primary

    @Test
    void slowPrimaryMakesEveryCallAtLeast800MillisecondsSlowerButWorking() throws Exception {
        String db = UpstreamLane.freshDatabaseName("slow");
        MongoClient client = client("retryWrites=true", 10_000, 10_000);
        MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
        client.getDatabase("admin").runCommand(new Document("ping", 1));
        run("slow-primary");

        long[] took = insertThenIncrementMillis(c);
        long insert = took[0];
        long update = took[1];
        long before = System.nanoTime();
        Document found = c.find(eq("_id", 1)).first();
        long find = millisSince(before);
        client.getDatabase("admin").runCommand(new Document("ping", 1));

        assertTrue(insert >= 800, "insert took " + insert + " ms");
        assertTrue(update >= 800, "update took " + update + " ms");
        assertTrue(find >= 800, "find took " + find + " ms");
        assertEquals(2, found.getInteger("n"));
        assertEquals(1, driverStarted("insert"), "slow is not failed: nothing retried");
        assertEquals(0, retries("insert") + retries("update") + retries("find"));
        assertEquals(1, Meters.faults(proxy.registry(), "delayReply", "insert"));
        assertEquals(1, Meters.faults(proxy.registry(), "delayReply", "find"));
        assertEquals(0, Meters.faults(proxy.registry(), "delayReply", "ping"), "ping is not in failCommands");
    }

    @Test
    void slowPrimaryWithATightSocketTimeoutTimesOutWritesThatHappened() throws Exception {
        String db = UpstreamLane.freshDatabaseName("slowtight");
        MongoClient client = client("retryWrites=false", 500, 10_000);
        MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
        client.getDatabase("admin").runCommand(new Document("ping", 1));
        run("slow-primary");

        assertThrows(MongoSocketReadTimeoutException.class, () -> c.insertOne(new Document("_id", "paid")));
        Await.until(WAIT, "the timed-out insert to be on the server", () -> serverSide(db, "c").countDocuments() == 1);
        assertEquals(1, attempts("insert"));
    }

    // ------------------------------------------------------------------ write-concern-error-after-apply

    @Test
    void writeConcernErrorAfterApplyIsRaisedWhileTheDocumentIsOnTheServer() throws Exception {
        run("write-concern-error-after-apply");
        String db = UpstreamLane.freshDatabaseName("wce");
        MongoCollection<Document> c = client("retryWrites=true").getDatabase(db).getCollection("orders");
        MongoWriteConcernException wce = assertThrows(MongoWriteConcernException.class, () -> c.insertOne(new Document("order", 7)));
        assertEquals(64, wce.getWriteConcernError().getCode());
        assertEquals(1, driverStarted("insert"), "WriteConcernFailed is not retried");
        assertEquals(1, attempts("insert"));
        assertEquals(0, retries("insert"));
        assertEquals(1, Meters.faults(proxy.registry(), "writeConcernError", "insert"));
        assertEquals(1, serverSide(db, "orders").countDocuments(eq("order", 7)), "the document IS on the server");

        // an app that retries the non-idempotent write itself writes it twice
        c.insertOne(new Document("order", 7));
        assertEquals(2, serverSide(db, "orders").countDocuments(eq("order", 7)));
    }
}
