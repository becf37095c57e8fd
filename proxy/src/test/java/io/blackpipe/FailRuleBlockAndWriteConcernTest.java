package io.blackpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import io.blackpipe.testing.UpstreamLane;
import java.time.Duration;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * Two of the README's actions, blockConnection and writeConcernError, had no builder call: a test wrote the failCommand
 * JSON by hand. FailRule now builds both, and they behave as the JSON rule does with the real driver.
 */
class FailRuleBlockAndWriteConcernTest {
    @Test
    void blockThenRunAndWriteConcernErrorRetried() {
        try (BlackPipe blackPipe = BlackPipe.start(UpstreamLane.uri());
             MongoClient client = MongoClients.create(blackPipe.connectionString())) {
            MongoCollection<Document> orders = client.getDatabase(UpstreamLane.freshDatabaseName("blockwce")).getCollection("orders");
            String block = blackPipe.fail("insert").times(1).blockConnection(Duration.ofMillis(300)).errorCode(0);
            long start = System.nanoTime();
            orders.insertOne(new Document("_id", 1).append("status", "NEW"));
            assertTrue(System.nanoTime() - start >= 300_000_000L, "the insert was not held");
            assertEquals(1, blackPipe.fired(block));
            assertEquals(1, blackPipe.attempts("insert"));
            assertEquals(1, orders.countDocuments(), "blocked alone, the insert ran");

            String wce = blackPipe.fail("update").times(1).writeConcernError(91, "shutting down");
            orders.updateOne(Filters.eq("_id", 1), Updates.set("status", "PAID")); // 91 is retryable: retried, succeeds
            assertEquals(1, blackPipe.fired(wce));
            assertEquals(2, blackPipe.attempts("update"));
            assertEquals(1, blackPipe.retries("update"));
            assertEquals(1, blackPipe.faultsInjected("writeConcernError"));
            assertEquals("PAID", orders.find(Filters.eq("_id", 1)).first().getString("status"), "the update ran");

            FailRule rule = blackPipe.fail("find").blockConnection(Duration.ofMillis(5));
            assertThrows(IllegalStateException.class, () -> rule.blockConnection(Duration.ofMillis(5)));
            assertThrows(IllegalArgumentException.class, () -> blackPipe.fail("find").blockConnection(Duration.ZERO));
        }
    }
}
