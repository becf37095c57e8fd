package io.blackpipe.fault;

import static com.mongodb.client.model.Filters.eq;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoBulkWriteException;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoSocketReadTimeoutException;
import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.InsertManyOptions;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.Updates;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.UpstreamLane;
import org.bson.BsonDocument;
import java.time.Duration;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * A write's duplicate key reaches the driver as mongod sends it, on every lane: ok: 1 with the error in
 * writeErrors, which the Java driver raises as a MongoWriteException of category DUPLICATE_KEY (jongodb
 * answers ok: 0, and blackpipe gives mongod's shape: DuplicateKeys). The idempotent insert of the article
 * that started this project catches exactly that.
 */
class DuplicateKeyDriverTest extends DriverRigTest {
    /** Ian's insert: after a network error, insert again; a duplicate key says the first one landed. */
    @Test
    void theIdempotentInsertCatchesTheDuplicateKeyOfItsOwnLostReply() {
        rig.rule("{times: 1}", "insert", "dropReply: true");
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=false"));
        Document order = new Document("_id", "order-1").append("qty", 3);
        assertThrows(MongoSocketException.class, () -> c.insertOne(order));
        MongoWriteException again = assertThrows(MongoWriteException.class, () -> c.insertOne(order));
        assertEquals(ErrorCategory.DUPLICATE_KEY, again.getError().getCategory(), "on " + UpstreamLane.name());
        assertKeyInTheReply("{_id: 1}", "{_id: 'order-1'}");
        assertEquals(1, rig.serverCount(), "the first one landed");
        assertEquals(1, rig.outcomes("insert", "ok"), "counted as the member's reply is: ok, with a write error");
    }

    @Test
    void anUpdateThatMeetsAUniqueIndexRaisesAWriteError() {
        rig.serverSide("c").createIndex(Indexes.ascending("sku"), new IndexOptions().unique(true));
        rig.serverSide("c").insertOne(new Document("_id", 1).append("sku", "A1"));
        rig.serverSide("c").insertOne(new Document("_id", 2).append("sku", "B2"));
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=true"));
        MongoWriteException duplicate = assertThrows(MongoWriteException.class, () -> c.updateOne(eq("_id", 2), Updates.set("sku", "A1")));
        assertEquals(ErrorCategory.DUPLICATE_KEY, duplicate.getError().getCategory(), "on " + UpstreamLane.name());
        assertEquals("B2", rig.serverSide("c").find(eq("_id", 2)).first().getString("sku"));
    }

    /**
     * mongod names the index and the duplicate values in the write error (keyPattern, keyValue: the Node.js driver's
     * error fields, by which Mongoose reports a unique field): the driver gets them for a compound unique index too.
     */
    @Test
    void anInsertThatMeetsACompoundUniqueIndexIsToldItsKeyPatternAndValues() {
        rig.serverSide("c").createIndex(Indexes.compoundIndex(Indexes.ascending("email"), Indexes.descending("tenant")),
                new IndexOptions().unique(true));
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=true"));
        c.insertOne(new Document("_id", 1).append("email", "a@x").append("tenant", 7));
        MongoWriteException duplicate = assertThrows(MongoWriteException.class,
                () -> c.insertOne(new Document("_id", 2).append("email", "a@x").append("tenant", 7)));
        assertEquals(ErrorCategory.DUPLICATE_KEY, duplicate.getError().getCategory(), "on " + UpstreamLane.name());
        assertKeyInTheReply("{email: 1, tenant: -1}", "{email: 'a@x', tenant: 7}");
    }

    /**
     * An ordered batch that meets a duplicate key: mongod inserts the documents before it and stops there, and the
     * driver's MongoBulkWriteException says so (jongodb applies none of it; blackpipe inserts it again as mongod would).
     */
    @Test
    void anOrderedBatchInsertsTheDocumentsBeforeItsDuplicate() {
        rig.serverSide("c").insertOne(new Document("_id", 3));
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=true"));
        MongoBulkWriteException batch = assertThrows(MongoBulkWriteException.class, () -> c.insertMany(documents(0, 1, 2, 3, 4, 5)));
        assertEquals(3, batch.getWriteResult().getInsertedCount(), "on " + UpstreamLane.name() + ": " + batch.getMessage());
        assertEquals(1, batch.getWriteErrors().size(), batch::getMessage);
        assertEquals(3, batch.getWriteErrors().get(0).getIndex(), batch::getMessage);
        assertEquals(ErrorCategory.DUPLICATE_KEY, ErrorCategory.fromErrorCode(batch.getWriteErrors().get(0).getCode()));
        assertEquals(List.of(0, 1, 2, 3), idsOnTheServer(), "those before the duplicate, and the one that was there");
        assertKeyInTheReply("{_id: 1}", "{_id: 3}");
        assertEquals(1, rig.outcomes("insert", "ok"), "counted as mongod's reply is: ok, with a write error");
    }

    /** An unordered one inserts every other document, a duplicate of one in the batch itself too, and names each that failed. */
    @Test
    void anUnorderedBatchInsertsEveryDocumentButItsDuplicates() {
        rig.serverSide("c").insertOne(new Document("_id", 2));
        rig.serverSide("c").insertOne(new Document("_id", 7));
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=true"));
        List<Document> documents = documents(0, 1, 2, 3, 4, 5, 6, 7, 8, 4, 9);
        MongoBulkWriteException batch = assertThrows(MongoBulkWriteException.class,
                () -> c.insertMany(documents, new InsertManyOptions().ordered(false)));
        assertEquals(8, batch.getWriteResult().getInsertedCount(), "on " + UpstreamLane.name() + ": " + batch.getMessage());
        assertEquals(List.of(2, 7, 9), batch.getWriteErrors().stream().map(BulkWriteError::getIndex).toList(), batch::getMessage);
        assertEquals(List.of(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), idsOnTheServer());
        MongoBulkWriteException again = assertThrows(MongoBulkWriteException.class,
                () -> c.insertMany(documents(9, 10, 11), new InsertManyOptions().ordered(false)));
        assertEquals(2, again.getWriteResult().getInsertedCount(), again::getMessage);
        assertEquals(List.of(0), again.getWriteErrors().stream().map(BulkWriteError::getIndex).toList(), again::getMessage);
        c.insertMany(documents(12, 13)); // a batch without a duplicate passes as it came
        assertEquals(14, rig.serverCount());
    }

    /** Its reply lost after the member applied it: the retry is answered as the batch was, and nothing is inserted twice. */
    @Test
    void aBatchWhoseReplyIsLostIsAnsweredAsItWasOnItsRetry() {
        rig.serverSide("c").insertOne(new Document("_id", 2));
        rig.rule("{times: 1}", "insert", "dropReply: true");
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=true"));
        MongoBulkWriteException batch = assertThrows(MongoBulkWriteException.class, () -> c.insertMany(documents(0, 1, 2, 3)));
        assertEquals(2, batch.getWriteResult().getInsertedCount(), "on " + UpstreamLane.name() + ": " + batch.getMessage());
        assertEquals(List.of(2), batch.getWriteErrors().stream().map(BulkWriteError::getIndex).toList(), batch::getMessage);
        assertEquals(List.of(0, 1, 2), idsOnTheServer());
        assertEquals(1, rig.retries("insert"), "the driver retried the insert once");
    }

    /**
     * Its client gave up during a block (failCommand's blockConnection) and left: the member runs the batch when the block
     * ends, and mongod inserts the documents before the duplicate though nobody waits for the answer.
     */
    @Test
    void aBatchWhoseClientGaveUpDuringABlockInsertsTheDocumentsBeforeItsDuplicate() throws InterruptedException {
        rig.serverSide("c").insertOne(new Document("_id", 2));
        rig.rule("{times: 1}", "insert", "blockConnection: true, blockTimeMS: 1000");
        MongoClient client = rig.client("retryWrites=false&socketTimeoutMS=300");
        client.getDatabase("admin").runCommand(new Document("ping", 1)); // connected first: the 300 ms are the insert's alone
        MongoCollection<Document> c = rig.collection(client);
        assertThrows(MongoSocketReadTimeoutException.class, () -> c.insertMany(documents(0, 1, 2, 3)));
        rig.awaitOutcome("insert", "network_error", 1);
        Await.until(Duration.ofSeconds(10), () -> "the batch run when the block ended, on " + UpstreamLane.name() + ": " + idsOnTheServer(),
                () -> idsOnTheServer().size() >= 3);
        assertEquals(List.of(0, 1, 2), idsOnTheServer(), "those before the duplicate, and the one that was there");
    }

    private static List<Document> documents(int... ids) {
        return java.util.Arrays.stream(ids).mapToObj(id -> new Document("_id", id)).toList();
    }

    private List<Integer> idsOnTheServer() {
        return rig.serverSide("c").find().sort(new Document("_id", 1)).map(d -> d.getInteger("_id")).into(new java.util.ArrayList<>());
    }

    /** The write error of the last insert reply the driver got names this index and these values. */
    private void assertKeyInTheReply(String keyPattern, String keyValue) {
        BsonDocument reply = rig.driverSucceeded().stream().filter(e -> e.getCommandName().equals("insert"))
                .reduce((first, last) -> last).orElseThrow().getResponse();
        BsonDocument writeError = reply.getArray("writeErrors").get(0).asDocument();
        assertEquals(BsonDocument.parse(keyPattern), writeError.getDocument("keyPattern"), () -> UpstreamLane.name() + ": " + reply.toJson());
        assertEquals(BsonDocument.parse(keyValue), writeError.getDocument("keyValue"), () -> UpstreamLane.name() + ": " + reply.toJson());
    }
}
