package io.blackpipe.fault;

import static com.mongodb.client.model.Filters.eq;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoSocketException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.Updates;
import io.blackpipe.BlackPipe;
import io.blackpipe.Fault;
import io.blackpipe.testing.UpstreamLane;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * commandMatches through the proxy, as the real driver meets it: a rule breaks the one command that
 * holds the given fields (the insert of one document, the update of one _id, the find of one filter)
 * and leaves the same command with other contents alone; given as a rule, by a configureFailPoint
 * sent through the proxy, or with the Java API.
 */
class CommandMatchDriverTest extends DriverRigTest {
    private List<Object> skus() {
        List<Object> skus = new ArrayList<>();
        rig.serverSide("c").find().sort(Sorts.ascending("_id")).forEach(d -> skus.add(d.get("sku")));
        return skus;
    }

    @Test
    void onlyTheInsertOfTheMatchingDocumentFailsAndTheDriverRetriesOnlyThatOne() {
        rig.rule("'alwaysOn'", "insert", "errorCode: 91, commandMatches: {'documents.sku': 'B2'}"); // ShutdownInProgress: retryable
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=true"));
        c.insertOne(new Document("_id", 1).append("sku", "A1"));
        MongoCommandException failed = assertThrows(MongoCommandException.class, () -> c.insertOne(new Document("_id", 2).append("sku", "B2")));
        assertEquals(91, failed.getErrorCode());
        c.insertOne(new Document("_id", 3).append("sku", "C3"));
        assertEquals(List.of("A1", "C3"), skus(), "B2 never ran; the inserts around it did");
        rig.assertAttempts("insert", 4, 1); // A1, B2 and its one retry (failed again), C3
        assertEquals(2, rig.faults("errorReply", "insert"));
    }

    @Test
    void anUpdateIsPickedByItsFilterWhateverTheNumbersType() {
        rig.serverSide("c").insertMany(List.of(new Document("_id", 1).append("sku", "A1"), new Document("_id", 2).append("sku", "B2")));
        rig.rule("'alwaysOn'", "update", "errorCode: 2, commandMatches: {'updates.q._id': {$numberLong: '2'}}"); // BadValue
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=true"));
        c.updateOne(eq("_id", 1), Updates.set("sku", "A9"));
        MongoCommandException failed = assertThrows(MongoCommandException.class, () -> c.updateOne(eq("_id", 2), Updates.set("sku", "B9")));
        assertEquals(2, failed.getErrorCode());
        assertEquals(List.of("A9", "B2"), skus(), "the update of _id 2 (an int32 on the wire) never ran");
        rig.assertAttempts("update", 2, 0);
    }

    @Test
    void aFindIsPickedByItsFilterAndAnotherFindOfTheSameCollectionRuns() {
        rig.serverSide("c").insertMany(List.of(new Document("_id", 1).append("status", "NEW"), new Document("_id", 2).append("status", "PAID")));
        rig.rule("'alwaysOn'", "find", "closeConnection: true, commandMatches: {'filter.status': 'PAID'}");
        MongoCollection<Document> c = rig.collection(rig.client("retryReads=true"));
        assertEquals(1, c.find(eq("status", "NEW")).first().getInteger("_id"));
        assertThrows(MongoSocketException.class, () -> c.find(eq("status", "PAID")).first());
        rig.assertAttempts("find", 3, 1); // NEW, PAID and its one retry
    }

    @Test
    void aFailCommandSuitesConfigureFailPointWithCommandMatchesWorksThroughTheProxy() {
        MongoClient client = rig.client("retryWrites=false");
        Document ok = client.getDatabase("admin").runCommand(Document.parse("{configureFailPoint: 'failCommand', mode: {times: 1},"
                + " data: {failCommands: ['insert'], errorCode: 2, commandMatches: {'documents.sku': 'B2'}}}"));
        assertEquals(1.0, ok.get("ok", Number.class).doubleValue());
        MongoCollection<Document> c = rig.collection(client);
        c.insertOne(new Document("_id", 1).append("sku", "A1")); // passes: its times are not spent on it
        assertEquals(2, assertThrows(MongoCommandException.class, () -> c.insertOne(new Document("_id", 2).append("sku", "B2"))).getErrorCode());
        c.insertOne(new Document("_id", 3).append("sku", "B2")); // the one time was spent
        assertEquals(List.of("A1", "B2"), skus());
    }

    @Test
    void aBadPatternIsRefusedWholeThroughTheProxyAndTheRulesInForceStay() {
        MongoClient client = rig.client("retryWrites=false");
        MongoCommandException refused = assertThrows(MongoCommandException.class, () -> client.getDatabase("admin").runCommand(
                Document.parse("{configureFailPoint: 'failCommand', mode: 'alwaysOn',"
                        + " data: {failCommands: ['insert'], errorCode: 2, commandMatches: {'documents.qty': {$gt: 5}}}}")));
        assertEquals("BadValue", refused.getErrorCodeName());
        assertEquals(true, refused.getErrorMessage().contains("data.commandMatches.documents.qty: $gt is a query operator"),
                refused.getErrorMessage());
        rig.collection(client).insertOne(new Document("_id", 1).append("sku", "A1").append("qty", 9));
        assertEquals(List.of("A1"), skus(), "no rule was added");
    }

    @Test
    void theJavaApiLosesTheReplyOfTheOneWriteItNames() {
        try (BlackPipe blackPipe = BlackPipe.start(UpstreamLane.uri());
             MongoClient client = MongoClients.create(blackPipe.connectionString() + "&retryWrites=false&socketTimeoutMS=5000")) {
            String id = blackPipe.fail("insert").whereCommand(BsonDocument.parse("{'documents.sku': 'B2'}")).with(Fault.DROP_REPLY);
            MongoCollection<Document> c = client.getDatabase(rig.db).getCollection("c");
            c.insertOne(new Document("_id", 1).append("sku", "A1"));
            assertThrows(MongoSocketException.class, () -> c.insertOne(new Document("_id", 2).append("sku", "B2")));
            c.insertOne(new Document("_id", 3).append("sku", "C3"));
            assertEquals(List.of("A1", "B2", "C3"), skus(), "B2 was applied; only its reply was lost");
            assertEquals(1, blackPipe.fired(id));
            IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
                    () -> blackPipe.fail("insert").whereCommand(new BsonDocument()).with(Fault.RESET));
            assertEquals(true, bad.getMessage().contains("data.commandMatches: must be a non-empty document"), bad.getMessage());
        }
    }
}
