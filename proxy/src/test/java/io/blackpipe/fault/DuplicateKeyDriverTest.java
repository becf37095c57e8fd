package io.blackpipe.fault;

import static com.mongodb.client.model.Filters.eq;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.Updates;
import io.blackpipe.testing.UpstreamLane;
import org.bson.BsonDocument;
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

    /** The write error of the last insert reply the driver got names this index and these values. */
    private void assertKeyInTheReply(String keyPattern, String keyValue) {
        BsonDocument reply = rig.driverSucceeded().stream().filter(e -> e.getCommandName().equals("insert"))
                .reduce((first, last) -> last).orElseThrow().getResponse();
        BsonDocument writeError = reply.getArray("writeErrors").get(0).asDocument();
        assertEquals(BsonDocument.parse(keyPattern), writeError.getDocument("keyPattern"), () -> UpstreamLane.name() + ": " + reply.toJson());
        assertEquals(BsonDocument.parse(keyValue), writeError.getDocument("keyValue"), () -> UpstreamLane.name() + ": " + reply.toJson());
    }
}
