package io.blackpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.blackpipe.testing.UpstreamLane;
import java.util.ArrayList;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * {@code BlackPipe.builder().seed(N)} replays a run: a {@code fail("insert").probability(0.5)} rule
 * fails the same of 40 driver inserts (no retries) in a second proxy started with the same seed, and
 * others under another seed; the server holds exactly the inserts the driver saw succeed.
 */
class SeedReplayApiTest {
    private static final int INSERTS = 40;

    /** Which inserts failed (true) through a proxy built with {@code seed} and the probability rule. */
    static List<Boolean> failuresUnderBuilderSeed(long seed) {
        try (BlackPipe blackPipe = BlackPipe.builder().upstream(UpstreamLane.uri()).seed(seed).start()) {
            String id = blackPipe.fail("insert").probability(0.5).errorCode(2);
            List<Boolean> failed = runInserts(blackPipe.connectionString());
            long failures = failed.stream().filter(f -> f).count();
            assertEquals(failures, blackPipe.fired(id), "the proxy counted each failure the driver saw");
            assertEquals(failures, blackPipe.faultsInjected("errorReply"));
            return failed;
        }
    }

    /** The inserts through {@code uri}, one by one: which failed with the rule's error; the server holds the others, and only them. */
    static List<Boolean> runInserts(String uri) {
        String db = UpstreamLane.freshDatabaseName("seedapi");
        List<Boolean> failed = new ArrayList<>();
        List<Document> expected = new ArrayList<>();
        try (MongoClient client = MongoClients.create(uri + "&retryWrites=false&socketTimeoutMS=30000")) {
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            for (int i = 0; i < INSERTS; i++) {
                try {
                    c.insertOne(new Document("_id", i));
                    failed.add(false);
                    expected.add(new Document("_id", i));
                } catch (MongoException e) {
                    assertEquals(2, e.getCode(), () -> "the rule's error, not " + e);
                    failed.add(true);
                }
            }
        }
        try (MongoClient direct = UpstreamLane.directClient()) {
            assertEquals(expected, direct.getDatabase(db).getCollection("c").find().sort(new Document("_id", 1)).into(new ArrayList<>()),
                    "the server holds exactly the inserts that succeeded");
        }
        long failures = failed.stream().filter(f -> f).count();
        assertTrue(failures > 0 && failures < INSERTS, "a probability of 0.5 fails some and not all: " + failed);
        return failed;
    }

    /**
     * A reset is a fresh proxy's slate for the draws too: the same rule after it fails the same inserts, so a
     * test run alone decides as it did after others (the JUnit extension resets before each test).
     */
    @Test
    void afterAResetTheSameRuleFailsTheSameInserts() {
        try (BlackPipe blackPipe = BlackPipe.builder().upstream(UpstreamLane.uri()).seed(7).start()) {
            blackPipe.fail("insert").probability(0.5).errorCode(2);
            List<Boolean> first = runInserts(blackPipe.connectionString());
            blackPipe.fail("find").probability(0.5).errorCode(2); // one more rule, as another test would add
            blackPipe.reset();
            blackPipe.fail("insert").probability(0.5).errorCode(2);
            assertEquals(first, runInserts(blackPipe.connectionString()), "the draws start over at a reset");
            assertEquals(first, failuresUnderBuilderSeed(7), "as on a proxy just started with the seed");
        }
    }

    @Test
    void theSameBuilderSeedReplaysTheSameFailuresAndAnotherSeedGivesOthers() {
        List<Boolean> first = failuresUnderBuilderSeed(7);
        assertEquals(first, failuresUnderBuilderSeed(7), "seed(7) twice: the same inserts failed");
        assertNotEquals(first, failuresUnderBuilderSeed(8), "seed(8): other inserts failed");
    }
}
