package io.blackpipe.fault;

import static com.mongodb.client.model.Filters.eq;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoSocketException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertOneOptions;
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
 * holds the given fields (the insert of one document, the update of one _id, the find of one filter),
 * or whose fields pass a query's operators (a range, a batch's size, a regular expression, an $in
 * list), and leaves the same command with other contents alone; given as a rule, by a configureFailPoint
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

    private List<Object> field(String name) {
        List<Object> values = new ArrayList<>();
        rig.serverSide("c").find().sort(Sorts.ascending("_id")).forEach(d -> values.add(d.get(name)));
        return values;
    }

    @Test
    void aRangeBreaksOnlyTheLargeOrdersWhateverTheNumbersType() {
        rig.rule("'alwaysOn'", "insert", "errorCode: 2, commandMatches: {'documents.qty': {$gte: 100}}"); // BadValue: not retried
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=true"));
        c.insertOne(new Document("_id", 1).append("qty", 5));
        assertEquals(2, assertThrows(MongoCommandException.class, () -> c.insertOne(new Document("_id", 2).append("qty", 100L))).getErrorCode());
        assertEquals(2, assertThrows(MongoCommandException.class, () -> c.insertOne(new Document("_id", 3).append("qty", 250.5))).getErrorCode());
        c.insertOne(new Document("_id", 4).append("qty", 99.99));
        c.insertOne(new Document("_id", 5).append("qty", "1000")); // a string is above no number
        assertEquals(List.of(5, 99.99, "1000"), field("qty"), "the orders of 100 or more never ran");
        rig.assertAttempts("insert", 5, 0);
    }

    @Test
    void aBatchOfThreeIsLostAfterItLandsWhileBatchesOfOtherSizesReturn() {
        rig.rule("'alwaysOn'", "insert", "dropReply: true, commandMatches: {documents: {$size: 3}}");
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=false&socketTimeoutMS=5000"));
        c.insertMany(List.of(new Document("_id", 1), new Document("_id", 2)));
        assertThrows(MongoSocketException.class, () -> c.insertMany(List.of(new Document("_id", 3), new Document("_id", 4),
                new Document("_id", 5))));
        c.insertMany(List.of(new Document("_id", 6), new Document("_id", 7), new Document("_id", 8), new Document("_id", 9)));
        assertEquals(List.of(1, 2, 3, 4, 5, 6, 7, 8, 9), field("_id"), "the batch of three was applied; only its reply was lost");
        assertEquals(1, rig.faults("dropReply", "insert"));
    }

    /** A bit test: the orders flagged express (bit 2) land and lose their replies; the others return. */
    @Test
    void aBitTestLosesTheRepliesOfTheFlaggedOrdersAlone() {
        rig.rule("'alwaysOn'", "insert", "dropReply: true, commandMatches: {'documents.flags': {$bitsAllSet: [2]}}");
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=false&socketTimeoutMS=5000"));
        c.insertOne(new Document("_id", 1).append("flags", 3));
        assertThrows(MongoSocketException.class, () -> c.insertOne(new Document("_id", 2).append("flags", 6L)));
        assertThrows(MongoSocketException.class, () -> c.insertOne(new Document("_id", 3).append("flags", -1))); // every bit, sign-extended
        c.insertOne(new Document("_id", 4).append("flags", 4.5)); // a fractional number has no bits
        c.insertOne(new Document("_id", 5).append("flags", "4"));
        assertEquals(List.of(3, 6L, -1, 4.5, "4"), field("flags"), "every order landed; the flagged ones' replies were lost");
        assertEquals(2, rig.faults("dropReply", "insert"));
    }

    @Test
    void aRegexAndAnInListPickTheirFindsAndUpdates() {
        rig.serverSide("c").insertMany(List.of(new Document("_id", 1).append("sku", "A1"), new Document("_id", 2).append("sku", "B2"),
                new Document("_id", 3).append("sku", "b3")));
        rig.rule("'alwaysOn'", "find", "closeConnection: true, commandMatches: {'filter.sku': {$regex: '^b', $options: 'i'}}");
        rig.rule("'alwaysOn'", "update", "errorCode: 2, commandMatches: {'updates.q._id': {$in: [2, 3]}}");
        MongoCollection<Document> c = rig.collection(rig.client("retryReads=true&retryWrites=true"));
        assertEquals(1, c.find(eq("sku", "A1")).first().getInteger("_id"));
        assertThrows(MongoSocketException.class, () -> c.find(eq("sku", "B2")).first());
        assertThrows(MongoSocketException.class, () -> c.find(eq("sku", "b3")).first());
        rig.assertAttempts("find", 5, 2); // A1; B2, b3 and one retry each
        c.updateOne(eq("_id", 1), Updates.set("sku", "A9"));
        assertEquals(2, assertThrows(MongoCommandException.class, () -> c.updateOne(eq("_id", 3L), Updates.set("sku", "B9"))).getErrorCode());
        assertEquals(List.of("A9", "B2", "b3"), skus(), "the update of _id 3 never ran");
    }

    /** The README's example: operations an app tagged with a comment, picked by a regular expression. */
    @Test
    void aRegexOnTheCommentBreaksTheOperationsAnAppTagged() {
        rig.rule("'alwaysOn'", "insert", "errorCode: 2, commandMatches: {comment: {$regex: '^checkout'}}");
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=true"));
        c.insertOne(new Document("_id", 1).append("sku", "A1"), new InsertOneOptions().comment("browse"));
        MongoCommandException failed = assertThrows(MongoCommandException.class,
                () -> c.insertOne(new Document("_id", 2).append("sku", "B2"), new InsertOneOptions().comment("checkout-42")));
        assertEquals(2, failed.getErrorCode());
        c.insertOne(new Document("_id", 3).append("sku", "C3")); // no comment: no field to match
        assertEquals(List.of("A1", "C3"), skus(), "the tagged insert never ran");
        rig.assertAttempts("insert", 3, 0);
    }

    /** One rule for two commands: $or between them, $elemMatch for one document (or one update) that holds every field. */
    @Test
    void orAndElemMatchPickOneOrderAndOneStatusChangeAcrossInsertsAndUpdates() {
        rig.rule("{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['insert', 'update'], errorCode: 2,"
                + " commandMatches: {$or: [{documents: {$elemMatch: {sku: 'B2', qty: {$gte: 10}}}},"
                + " {updates: {$elemMatch: {'q._id': 1, 'u.$set.status': {$in: ['PAID', 'SHIPPED']}}}}]}}}");
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=true"));
        c.insertOne(new Document("_id", 1).append("sku", "B2").append("qty", 5).append("status", "NEW"));
        // B2 and 10 or more, but in two documents: no one document holds both
        c.insertMany(List.of(new Document("_id", 2).append("sku", "A1").append("qty", 50), new Document("_id", 3).append("sku", "B2").append("qty", 1)));
        assertEquals(2, assertThrows(MongoCommandException.class,
                () -> c.insertOne(new Document("_id", 4).append("sku", "B2").append("qty", 10L))).getErrorCode());
        assertEquals(2, assertThrows(MongoCommandException.class, () -> c.updateOne(eq("_id", 1), Updates.set("status", "PAID"))).getErrorCode());
        c.updateOne(eq("_id", 1), Updates.set("status", "CANCELLED"));
        c.updateOne(eq("_id", 2), Updates.set("status", "PAID"));
        assertEquals(List.of(1, 2, 3), field("_id"), "the order of ten B2 never ran");
        assertEquals(java.util.Arrays.asList("CANCELLED", "PAID", null), field("status"), "nor did _id 1's payment");
        rig.assertAttempts("insert", 3, 0);
        rig.assertAttempts("update", 3, 0);
        assertEquals(1, rig.faults("errorReply", "insert"));
        assertEquals(1, rig.faults("errorReply", "update"));
    }

    /** The Java API takes the driver's Filters, which write $and, $or and $elemMatch as a find filter would. */
    @Test
    void theJavaApiTakesTheDriversFilters() {
        try (BlackPipe blackPipe = BlackPipe.start(UpstreamLane.uri());
             MongoClient client = MongoClients.create(blackPipe.connectionString() + "&retryWrites=true")) {
            String id = blackPipe.fail("insert", "update").whereCommand(Filters.or(
                    Filters.elemMatch("documents", Filters.and(Filters.eq("sku", "B2"), Filters.gte("qty", 10))),
                    Filters.in("updates.q._id", 1, 2))).errorCode(2);
            MongoCollection<Document> c = client.getDatabase(rig.db).getCollection("c");
            c.insertMany(List.of(new Document("_id", 1).append("sku", "B2").append("qty", 1), new Document("_id", 2).append("sku", "A1").append("qty", 50)));
            assertEquals(2, assertThrows(MongoCommandException.class,
                    () -> c.insertOne(new Document("_id", 3).append("sku", "B2").append("qty", 12))).getErrorCode());
            assertEquals(2, assertThrows(MongoCommandException.class, () -> c.updateOne(eq("_id", 2), Updates.set("sku", "A2"))).getErrorCode());
            c.updateOne(eq("_id", 3), Updates.set("sku", "C3")); // none such: runs, and matches nothing
            assertEquals(List.of("B2", "A1"), skus(), "neither the order of twelve B2 nor the update of _id 2 ran");
            assertEquals(2, blackPipe.fired(id));
            IllegalArgumentException unencodable = assertThrows(IllegalArgumentException.class,
                    () -> blackPipe.fail("insert").whereCommand(Filters.eq("documents.owner", new Object())));
            assertEquals(true, unencodable.getMessage().startsWith("whereCommand(): the fields hold a value BSON cannot encode"),
                    unencodable.getMessage());
        }
    }

    /** $type: the inserts whose _id the driver made (an ObjectId) fail; those the app numbered run. */
    @Test
    void aTypePicksTheInsertsWhoseIdTheDriverGenerated() {
        rig.rule("'alwaysOn'", "insert", "errorCode: 2, commandMatches: {'documents._id': {$type: 'objectId'}}");
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=true"));
        assertEquals(2, assertThrows(MongoCommandException.class, () -> c.insertOne(new Document("sku", "A1"))).getErrorCode());
        c.insertOne(new Document("_id", 5).append("sku", "B2"));
        c.insertOne(new Document("_id", 6L).append("sku", "C3"));
        assertEquals(List.of("B2", "C3"), skus(), "the insert with the driver's ObjectId never ran");
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
                        + " data: {failCommands: ['insert'], errorCode: 2, commandMatches: {'documents.qty': {$gt: 5, $where: 'x'}}}}")));
        assertEquals("BadValue", refused.getErrorCodeName());
        assertEquals(true, refused.getErrorMessage().contains("data.commandMatches.documents.qty.$where: not an operator commandMatches takes"),
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
