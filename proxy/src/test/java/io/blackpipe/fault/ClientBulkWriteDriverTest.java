package io.blackpipe.fault;

import static com.mongodb.client.model.Filters.eq;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.MongoNamespace;
import com.mongodb.MongoSocketException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.bulk.ClientBulkWriteResult;
import com.mongodb.client.model.bulk.ClientNamespacedWriteModel;
import io.blackpipe.testing.UpstreamLane;
import java.util.ArrayList;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * MongoDB 8.0's bulkWrite command, a driver's client-wide bulk write (its operations across collections in one command
 * to admin, as OP_MSG document sequences), passes as any write does: counted, its retry counted, a lost reply retried
 * and the write applied once. A server before 8.0 refuses it (CommandNotFound), and so does jongodb 0.1.6, whose own
 * bulkWrite command is another (TypeMismatch); the Java and Node.js drivers send it whatever the wire version. Such a
 * refusal reaches the driver as it came, with the same counts. Each test asks the upstream straight which it does.
 */
class ClientBulkWriteDriverTest extends DriverRigTest {
    private MongoNamespace namespace(String collection) {
        return new MongoNamespace(rig.db, collection);
    }

    /** Two inserts and an update of the first, across two collections. */
    private List<ClientNamespacedWriteModel> retryableBulk() {
        return List.of(ClientNamespacedWriteModel.insertOne(namespace("c"), new Document("_id", 1)),
                ClientNamespacedWriteModel.insertOne(namespace("other"), new Document("_id", 2)),
                ClientNamespacedWriteModel.updateOne(namespace("c"), eq("_id", 1), Updates.inc("n", 1)));
    }

    /** The upstream's refusal of a client bulk write, asked straight; null where it takes one (MongoDB 8.0+). */
    private MongoCommandException refusalStraightFromTheUpstream() {
        try {
            rig.direct.bulkWrite(List.of(ClientNamespacedWriteModel.insertOne(namespace("asked"), new Document())));
            return null;
        } catch (MongoCommandException refused) {
            System.out.println("[blackpipe] " + UpstreamLane.name() + " refuses MongoDB 8.0's bulkWrite: " + refused.getErrorCode()
                    + " " + refused.getErrorMessage());
            return refused;
        }
    }

    private List<Document> stored(String collection) {
        return rig.serverSide(collection).find().sort(Sorts.ascending("_id")).into(new ArrayList<>());
    }

    private static void assertSameRefusal(MongoCommandException straight, MongoCommandException throughTheProxy) {
        assertEquals(straight.getErrorCode(), throughTheProxy.getErrorCode(), throughTheProxy.getMessage());
        assertEquals(straight.getErrorMessage(), throughTheProxy.getErrorMessage());
    }

    @Test
    void aClientBulkWriteWhoseReplyWasLostIsRetriedOnceAndAppliedOnce() {
        MongoCommandException refusal = refusalStraightFromTheUpstream();
        rig.rule("{times: 1}", "bulkWrite", "dropReply: true");
        MongoClient client = rig.client("retryWrites=true");
        if (refusal == null) {
            ClientBulkWriteResult result = client.bulkWrite(retryableBulk());
            assertEquals(2, result.getInsertedCount(), "the first run's counts, not the retry's duplicates");
            assertEquals(1, result.getModifiedCount());
            assertEquals(List.of(new Document("_id", 1).append("n", 1)), stored("c"), "updated once");
            assertEquals(List.of(new Document("_id", 2)), stored("other"));
        } else {
            assertSameRefusal(refusal, assertThrows(MongoCommandException.class, () -> client.bulkWrite(retryableBulk())));
            assertEquals(List.of(), stored("c"));
        }
        rig.assertAttempts("bulkWrite", 2, 1);
        assertEquals(1, rig.faults("dropReply", "bulkWrite"));
        assertEquals(0, rig.attempts("insert") + rig.attempts("update"), "one command, not the collections' write commands");
    }

    @Test
    void aNotWritablePrimaryReplyIsRetriedOnTheMember() {
        MongoCommandException refusal = refusalStraightFromTheUpstream();
        rig.rule("{times: 1}", "bulkWrite", "errorCode: 10107");
        MongoClient client = rig.client("retryWrites=true");
        if (refusal == null) {
            assertEquals(2, client.bulkWrite(retryableBulk()).getInsertedCount());
            assertEquals(List.of(new Document("_id", 1).append("n", 1)), stored("c"));
        } else {
            assertSameRefusal(refusal, assertThrows(MongoCommandException.class, () -> client.bulkWrite(retryableBulk())));
        }
        rig.assertAttempts("bulkWrite", 2, 1);
        assertEquals(1, rig.faults("errorReply", "bulkWrite"));
    }

    /** An updateMany makes the bulk write one that drivers never retry: its lost reply reaches the app as a network error. */
    @Test
    void aBulkWriteWithAMultiUpdateIsNotRetriedAndItsLostReplyReachesTheApp() {
        MongoCommandException refusal = refusalStraightFromTheUpstream();
        rig.serverSide("c").insertMany(List.of(new Document("_id", 1), new Document("_id", 2)));
        rig.rule("{times: 1}", "bulkWrite", "dropReply: true");
        MongoClient client = rig.client("retryWrites=true");
        MongoException failed = assertThrows(MongoException.class, () -> client.bulkWrite(
                List.of(ClientNamespacedWriteModel.updateMany(namespace("c"), new Document(), Updates.inc("n", 1)))));
        assertTrue(causedByANetworkError(failed), () -> "a network error, not a retry: " + failed);
        rig.assertAttempts("bulkWrite", 1, 0);
        List<Document> expected = refusal == null
                ? List.of(new Document("_id", 1).append("n", 1), new Document("_id", 2).append("n", 1)) // applied, the app unaware
                : List.of(new Document("_id", 1), new Document("_id", 2));
        assertEquals(expected, stored("c"));
    }

    private static boolean causedByANetworkError(Throwable failed) {
        for (Throwable t = failed; t != null; t = t.getCause()) {
            if (t instanceof MongoSocketException) {
                return true;
            }
        }
        return false;
    }
}
