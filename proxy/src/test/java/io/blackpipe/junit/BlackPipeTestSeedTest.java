package io.blackpipe.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.blackpipe.BlackPipe;
import io.blackpipe.testing.UpstreamLane;
import java.util.ArrayList;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code @BlackPipeTest(seed = 7)} seeds the class's proxy: a probability rule fails exactly the
 * driver inserts that {@code BlackPipe.builder().seed(7)} fails with the same rule (so a test's random
 * faults replay outside JUnit too), and the server holds exactly the inserts that succeeded.
 */
@ExtendWith(BlackPipeTestOptionsTest.LaneAsUpstream.class)
@BlackPipeTest(seed = 7)
class BlackPipeTestSeedTest {
    private static final int INSERTS = 40;

    @Test
    void theAnnotationsSeedFailsTheInsertsTheBuildersSameSeedFails(BlackPipe blackPipe) {
        String id = blackPipe.fail("insert").probability(0.5).errorCode(2);
        List<Boolean> annotated = runInserts(blackPipe.connectionString());
        assertEquals(annotated.stream().filter(f -> f).count(), blackPipe.fired(id), "the proxy counted each failure the driver saw");

        List<Boolean> built;
        try (BlackPipe seven = BlackPipe.builder().upstream(UpstreamLane.uri()).seed(7).start()) {
            seven.fail("insert").probability(0.5).errorCode(2);
            built = runInserts(seven.connectionString());
        }
        assertEquals(built, annotated, "@BlackPipeTest(seed = 7) decides as BlackPipe.builder().seed(7)");
    }

    /** The inserts through {@code uri}, one by one: which failed with the rule's error; the server holds the others, and only them. */
    private static List<Boolean> runInserts(String uri) {
        String db = UpstreamLane.freshDatabaseName("seedjunit");
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
}
