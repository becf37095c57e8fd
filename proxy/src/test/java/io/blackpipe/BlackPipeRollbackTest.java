package io.blackpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.blackpipe.testing.UpstreamLane;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * What a JUnit test proves with {@link BlackPipe#failover(Duration, Duration)}: an order written with w: 1 just before a
 * failover is lost though the driver was told it was written; one written with the default write concern (majority) is not.
 */
class BlackPipeRollbackTest {
    @Test
    void aFailoverWithARollbackLosesTheAcknowledgedW1WritesAndKeepsTheMajorityOnes() {
        String db = UpstreamLane.freshDatabaseName("api-rollback");
        try (BlackPipe blackPipe = BlackPipe.builder().upstream(UpstreamLane.singleNodeUri()).simulateMembers(3).start();
             MongoClient client = MongoClients.create(blackPipe.connectionString())) {
            MongoCollection<Document> orders = client.getDatabase(db).getCollection("orders");
            orders.insertOne(new Document("_id", "kept"));
            orders.withWriteConcern(WriteConcern.W1).insertOne(new Document("_id", "lost-1"));
            orders.withWriteConcern(WriteConcern.W1).insertOne(new Document("_id", "lost-2"));

            assertEquals(2, blackPipe.failover(Duration.ZERO, Duration.ofSeconds(10)));

            try (MongoClient direct = UpstreamLane.directClient()) {
                assertEquals(List.of(new Document("_id", "kept")),
                        direct.getDatabase(db).getCollection("orders").find().into(new ArrayList<>()));
            }
            IllegalArgumentException tooFar = assertThrows(IllegalArgumentException.class,
                    () -> blackPipe.failover(Duration.ZERO, Duration.ofSeconds(61)));
            assertEquals("rollback: must be from 0 (nothing rolled back) to 60s, got 61000ms", tooFar.getMessage());
            assertThrows(IllegalArgumentException.class, () -> blackPipe.failover(Duration.ZERO, Duration.ofNanos(500)),
                    "whole milliseconds");
            assertThrows(IllegalArgumentException.class, () -> blackPipe.failover(Duration.ZERO, null));
        }
    }
}
