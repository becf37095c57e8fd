package io.blackpipe.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCursor;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** The benchmark's fast upstream answers what the driver needs (no timing here: the benchmark is bench/run). */
class WireResponderTest {
    @Test
    void answersTheDriversHandshakeAndTheWorkloadsCommands() {
        try (WireResponder responder = WireResponder.start("127.0.0.1", 0, 1, 10, 2500);
             MongoClient client = MongoClients.create("mongodb://" + responder.address() + "/?directConnection=true")) {
            Document hello = client.getDatabase("admin").runCommand(new Document("hello", 1));
            assertEquals(WireResponder.SET_NAME, hello.getString("setName"));
            assertEquals(responder.address(), hello.getString("primary"));
            assertEquals(WireResponder.MAX_WIRE_VERSION, hello.getInteger("maxWireVersion"));

            MongoDatabase db = client.getDatabase("bench");
            Document user = db.getCollection(Workloads.USERS).find(Filters.eq("_id", 7)).first();
            assertNotNull(user);
            assertEquals("user-7", user.getString("name"));
            db.getCollection(Workloads.EVENTS).insertOne(new Document("n", 1));

            int docs = 0;
            try (MongoCursor<Document> cursor = db.getCollection(WireResponder.BIG).find().batchSize(1000).iterator()) {
                while (cursor.hasNext()) {
                    assertEquals(docs, cursor.next().getInteger("_id"));
                    docs++;
                }
            }
            assertEquals(2500, docs); // a find and two getMores
            try (MongoCursor<Document> cursor = db.getCollection(WireResponder.BIG).find().batchSize(10).iterator()) {
                assertTrue(cursor.hasNext()); // closed early: killCursors
            }
        }
    }
}
