package io.blackpipe.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoException;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.blackpipe.BlackPipe;
import io.blackpipe.Fault;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.UpstreamLane;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A scenario's {@code restore:} and {@code clear: true} steps, started with {@code BlackPipe.runScenario}
 * and seen by the real driver: an outage of the primary at 0s cuts a command in flight (counted as an
 * outage) and fails the driver's server selection until the scenario's restore, after which writes
 * land; a rule the scenario adds at 0s fails inserts until its {@code clear: true}, after which they
 * land. The server holds only the writes made after the step. Each step is awaited in the scenario's
 * status, never slept to; a step that fired before the driver's "during" attempt (a stalled machine)
 * is the window missed, and the scenario runs again.
 */
class ScenarioRestoreClearDriverTest {
    private static final int WINDOW_TRIES = 3;

    @TempDir
    Path temp;

    private static final String OUTAGE_THEN_RESTORE = """
            name: outage-then-restore
            description: the primary refuses connections until the restore step
            timeline:
              - at: 0s
                outage: {member: primary}
              - at: 2s
                restore: primary
            """;

    private static final String RULE_THEN_CLEAR = """
            name: rule-then-clear
            description: inserts fail with BadValue until the clear step
            timeline:
              - at: 0s
                add: {id: refuse-inserts, configureFailPoint: failCommand, mode: alwaysOn, data: {failCommands: [insert], errorCode: 2}}
              - at: 2s
                clear: true
            """;

    private static List<String> stepsDone(BlackPipe blackPipe) {
        return blackPipe.server().scenarios().status().getArray("stepsDone").stream()
                .map(BsonValue::asString).map(s -> s.getValue()).toList();
    }

    private static List<String> ruleIds(BlackPipe blackPipe) {
        return blackPipe.rules().stream().map(rule -> BsonDocument.parse(rule).getString("id").getValue()).toList();
    }

    private static void awaitSteps(BlackPipe blackPipe, int steps) throws InterruptedException {
        Await.until(Duration.ofSeconds(60), () -> steps + " steps done: " + blackPipe.server().scenarios().status().toJson(),
                () -> stepsDone(blackPipe).size() >= steps);
    }

    private static MongoClient shortSelection(String connectionString) {
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(connectionString + "&retryWrites=false&retryReads=false"))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(500, TimeUnit.MILLISECONDS))
                .build());
    }

    @Test
    void theScenariosRestoreEndsItsOutageOfThePrimaryAndTheDriverWritesAgain() throws Exception {
        Path file = Files.writeString(temp.resolve("outage-then-restore.yaml"), OUTAGE_THEN_RESTORE);
        try (BlackPipe blackPipe = BlackPipe.start(UpstreamLane.uri()); MongoClient direct = UpstreamLane.directClient()) {
            for (int tries = 1; ; tries++) {
                String db = UpstreamLane.freshDatabaseName("scenario_restore");
                blackPipe.reset();
                blackPipe.resetCounters();
                // a find held by the proxy when the outage begins: the outage cuts it, and is counted
                blackPipe.fail("find").times(1).with(Fault.HANG);
                try (MongoClient held = MongoClients.create(blackPipe.connectionString() + "&retryReads=false");
                     MongoClient client = shortSelection(blackPipe.connectionString())) {
                    MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
                    CompletableFuture<Throwable> cut = Await.failureOf(() -> held.getDatabase(db).getCollection("c").find().first());
                    Await.until(Duration.ofSeconds(30), "the find held by the proxy", () -> blackPipe.attempts("find") == 1);

                    blackPipe.runScenario(file); // the outage at 0s is in force when this returns
                    assertInstanceOf(MongoSocketException.class, cut.get(60, TimeUnit.SECONDS), "the held find was cut by the outage");
                    Await.until(Duration.ofSeconds(30), "the outage counted", () -> blackPipe.faultsInjected("outage") >= 1);
                    assertEquals(1, blackPipe.faultsInjected("outage"), "the proxy counted the outage that cut it, once");

                    Throwable during = null;
                    try {
                        c.insertOne(new Document("_id", "during"));
                    } catch (MongoException e) {
                        during = e;
                    }
                    if (during == null && stepsDone(blackPipe).size() == 2 && tries < WINDOW_TRIES) {
                        System.out.println("the restore fired before the write during the outage (a stalled machine): again");
                        continue;
                    }
                    assertInstanceOf(MongoTimeoutException.class, during, "no server to select while the primary is out");
                    assertEquals(List.of("0ms outage of primary"), stepsDone(blackPipe), "the failed write came before the restore");

                    awaitSteps(blackPipe, 2);
                    assertEquals("2000ms restore primary", stepsDone(blackPipe).get(1));
                    int failedAfter = 0;
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                    while (true) { // the driver's monitor finds the member again at its own pace
                        try {
                            c.insertOne(new Document("_id", "after"));
                            break;
                        } catch (MongoTimeoutException e) {
                            failedAfter++;
                            assertTrue(System.nanoTime() < deadline, "the driver never wrote after the restore: " + e);
                        }
                    }
                    System.out.println("writes that timed out after the restore, before the driver's monitor saw it: " + failedAfter);
                }
                assertEquals(List.of(new Document("_id", "after")), direct.getDatabase(db).getCollection("c").find().into(new ArrayList<>()),
                        "only the write after the restore landed");
                return;
            }
        }
    }

    @Test
    void theScenariosClearRemovesTheRuleItAddedAndInsertsLandAgain() throws Exception {
        Path file = Files.writeString(temp.resolve("rule-then-clear.yaml"), RULE_THEN_CLEAR);
        try (BlackPipe blackPipe = BlackPipe.start(UpstreamLane.uri()); MongoClient direct = UpstreamLane.directClient()) {
            for (int tries = 1; ; tries++) {
                String db = UpstreamLane.freshDatabaseName("scenario_clear");
                blackPipe.reset();
                try (MongoClient client = MongoClients.create(blackPipe.connectionString() + "&retryWrites=false")) {
                    MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
                    c.countDocuments(); // connected before the scenario starts, so the inserts below are all that it meets
                    blackPipe.runScenario(file); // the rule added at 0s is in force when this returns
                    assertEquals(List.of("refuse-inserts"), ruleIds(blackPipe));

                    List<Integer> codes = new ArrayList<>();
                    for (int i = 0; i < 3; i++) {
                        try {
                            c.insertOne(new Document("_id", "before-" + i));
                            codes.add(0);
                        } catch (MongoException e) {
                            codes.add(e.getCode());
                        }
                    }
                    if (codes.contains(0) && stepsDone(blackPipe).size() == 2 && tries < WINDOW_TRIES) {
                        System.out.println("the clear fired before the inserts meant to fail (a stalled machine): again");
                        continue;
                    }
                    assertEquals(List.of(2, 2, 2), codes, "the scenario's rule failed every insert before the clear");
                    assertEquals(List.of("0ms add rule refuse-inserts"), stepsDone(blackPipe), "the failed inserts came before the clear");
                    assertEquals(3, blackPipe.fired("refuse-inserts"));

                    awaitSteps(blackPipe, 2);
                    assertEquals("2000ms clear all rules", stepsDone(blackPipe).get(1));
                    assertEquals(List.of(), ruleIds(blackPipe), "the clear left no rule");
                    for (int i = 0; i < 3; i++) {
                        c.insertOne(new Document("_id", "after-" + i));
                    }
                    assertEquals(3, blackPipe.fired("refuse-inserts"), "the cleared rule failed nothing more");
                }
                assertEquals(List.of(new Document("_id", "after-0"), new Document("_id", "after-1"), new Document("_id", "after-2")),
                        direct.getDatabase(db).getCollection("c").find().sort(new Document("_id", 1)).into(new ArrayList<>()),
                        "only the inserts after the clear landed");
                return;
            }
        }
    }
}
