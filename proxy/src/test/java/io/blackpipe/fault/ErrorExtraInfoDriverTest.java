package io.blackpipe.fault;

import static com.mongodb.client.model.Filters.eq;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Updates;
import io.blackpipe.BlackPipe;
import io.blackpipe.testing.UpstreamLane;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * failCommand's errorExtraInfo through the proxy, as the real driver meets it: a findAndModify
 * failed with 11000 DuplicateKey carries keyPattern and keyValue, the fields an application reads
 * to tell which unique index refused it; given as a rule, by a configureFailPoint sent through the
 * proxy (a failCommand suite), or with the Java API. The server's document is left as it was.
 */
class ErrorExtraInfoDriverTest extends DriverRigTest {
    private static final String EXTRA = "{keyPattern: {sku: 1}, keyValue: {sku: 'A1'}}";

    /** A findOneAndUpdate through {@code client}: the driver's error, after checking the server kept the document. */
    private MongoCommandException failedFindAndModify(MongoClient client) {
        MongoCommandException e = assertThrows(MongoCommandException.class,
                () -> rig.collection(client).findOneAndUpdate(eq("_id", 1), Updates.set("sku", "A1")));
        assertEquals(new Document("_id", 1).append("sku", "B2"), rig.serverSide("c").find().first(), "the command never ran");
        return e;
    }

    private static void assertDuplicateKeyWithItsExtraInformation(MongoCommandException e) {
        assertEquals(11000, e.getErrorCode());
        assertEquals("DuplicateKey", e.getErrorCodeName());
        assertEquals(BsonDocument.parse("{sku: 1}"), e.getResponse().getDocument("keyPattern"));
        assertEquals(BsonDocument.parse("{sku: 'A1'}"), e.getResponse().getDocument("keyValue"));
    }

    @Test
    void aRulesExtraInformationReachesTheDriverInTheErrorsReply() {
        rig.serverSide("c").insertOne(new Document("_id", 1).append("sku", "B2"));
        rig.rule("{times: 1}", "findAndModify", "errorCode: 11000, errorExtraInfo: " + EXTRA);
        MongoClient client = rig.client("retryWrites=true");
        assertDuplicateKeyWithItsExtraInformation(failedFindAndModify(client));
        rig.assertAttempts("findAndModify", 1, 0); // DuplicateKey is not retryable
    }

    @Test
    void aFailCommandSuitesConfigureFailPointWithErrorExtraInfoWorksThroughTheProxy() {
        rig.serverSide("c").insertOne(new Document("_id", 1).append("sku", "B2"));
        MongoClient client = rig.client("retryWrites=true");
        Document ok = client.getDatabase("admin").runCommand(Document.parse("{configureFailPoint: 'failCommand', mode: {times: 1},"
                + " data: {failCommands: ['findAndModify'], errorCode: 11000, errorExtraInfo: " + EXTRA + "}}"));
        assertEquals(1.0, ok.get("ok", Number.class).doubleValue());
        assertDuplicateKeyWithItsExtraInformation(failedFindAndModify(client));
    }

    @Test
    void theJavaApiGivesItToo() {
        rig.serverSide("c").insertOne(new Document("_id", 1).append("sku", "B2"));
        try (BlackPipe blackPipe = BlackPipe.start(UpstreamLane.uri());
             MongoClient client = MongoClients.create(blackPipe.connectionString() + "&socketTimeoutMS=5000")) {
            String id = blackPipe.fail("findAndModify").times(1).errorCode(11000, BsonDocument.parse(EXTRA));
            MongoCollection<Document> c = client.getDatabase(rig.db).getCollection("c");
            MongoCommandException e = assertThrows(MongoCommandException.class,
                    () -> c.findOneAndUpdate(eq("_id", 1), Updates.set("sku", "A1")));
            assertDuplicateKeyWithItsExtraInformation(e);
            assertEquals(1, blackPipe.fired(id));
            assertEquals(new Document("_id", 1).append("sku", "A1"), c.findOneAndUpdate(eq("_id", 1), Updates.set("sku", "A1"),
                    new com.mongodb.client.model.FindOneAndUpdateOptions().returnDocument(com.mongodb.client.model.ReturnDocument.AFTER)),
                    "the rule spent, the next one runs");
        }
    }
}
