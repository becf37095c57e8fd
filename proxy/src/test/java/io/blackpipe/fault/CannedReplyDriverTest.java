package io.blackpipe.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoWriteException;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoCollection;
import io.blackpipe.observe.HistoryEntry;
import io.blackpipe.testing.Await;
import java.time.Duration;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * cannedReply, proven with the real Java driver through the proxy: the driver takes the written
 * reply for the member's own (its exception, its retry decision), and the member never saw the
 * command.
 */
class CannedReplyDriverTest extends DriverRigTest {

    private HistoryEntry lastHistoryEntry(String command) throws InterruptedException {
        Await.until(Duration.ofSeconds(10), "a history line for " + command,
                () -> rig.proxy.history().recent().stream().anyMatch(e -> e.command().equals(command)));
        List<HistoryEntry> entries = rig.proxy.history().recent().stream().filter(e -> e.command().equals(command)).toList();
        return entries.get(entries.size() - 1);
    }

    @Test
    void aDuplicateKeyInWriteErrorsReachesTheAppAsTheServersOwnWhileTheMemberNeverSawTheInsert() throws InterruptedException {
        rig.rule("{times: 1}", "insert", "cannedReply: {ok: 1, n: 0, writeErrors: [{index: 0, code: 11000, "
                + "errmsg: 'E11000 duplicate key error collection: x.c index: _id_ dup key: { _id: 1 }', "
                + "keyPattern: {_id: 1}, keyValue: {_id: 1}}]}");
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=true"));

        MongoWriteException e = assertThrows(MongoWriteException.class, () -> c.insertOne(new Document("_id", 1)));
        assertEquals(ErrorCategory.DUPLICATE_KEY, ErrorCategory.fromErrorCode(e.getError().getCode()));
        assertEquals(11000, e.getCode());
        rig.assertAttempts("insert", 1, 0); // a write error is no reason to retry
        assertEquals(0, rig.serverCount(), "the member never saw the insert");
        assertEquals(1, rig.faults("cannedReply", "insert"));
        rig.awaitOutcome("insert", "ok", 1); // ok: 1, as the driver's command succeeded
        HistoryEntry entry = lastHistoryEntry("insert");
        assertEquals("cannedReply", entry.fault());
        assertEquals("fail", entry.type(), "no write applied (n: 0): it did not happen, as for the member's own such reply");
        assertEquals(11000, entry.errorCode());

        c.insertOne(new Document("_id", 1)); // the rule is spent: this one reaches the member
        assertEquals(1, rig.serverCount());
    }

    @Test
    void aCannedCursorGivesTheAppDocumentsTheMemberDoesNotHold() {
        rig.rule("{times: 1}", "find", "cannedReply: {ok: 1, cursor: {id: 0, ns: '" + rig.db + ".c', "
                + "firstBatch: [{_id: 'ghost', total: 42}]}}");
        MongoCollection<Document> c = rig.collection(rig.client("retryReads=true"));
        rig.serverSide("c").insertOne(new Document("_id", "real"));

        assertEquals(new Document("_id", "ghost").append("total", 42), c.find().first());
        assertEquals("real", c.find().first().getString("_id"), "the rule is spent: the member answers");
        rig.assertAttempts("find", 2, 0);
        assertEquals(1, rig.faults("cannedReply", "find"));
    }

    @Test
    void anErrorWithErrInfoReachesTheAppWithEveryFieldAsWritten() {
        rig.rule("{times: 1}", "aggregate", "cannedReply: {ok: 0, code: 121, codeName: 'DocumentValidationFailure', "
                + "errmsg: 'Document failed validation', errInfo: {failingDocumentId: 7, details: {operatorName: '$jsonSchema'}}}");
        MongoCollection<Document> c = rig.collection(rig.client("retryReads=true"));

        MongoCommandException e = assertThrows(MongoCommandException.class,
                () -> c.aggregate(List.of(new Document("$match", new Document()))).first());
        assertEquals(121, e.getErrorCode());
        assertEquals("DocumentValidationFailure", e.getErrorCodeName());
        assertEquals(7, e.getResponse().getDocument("errInfo").getInt32("failingDocumentId").getValue());
        rig.assertAttempts("aggregate", 1, 0); // 121 is not a retryable read error
        assertEquals(1, rig.faults("cannedReply", "aggregate"));
    }

    @Test
    void labelsWrittenInTheReplyDriveTheDriversRetry() throws InterruptedException {
        // no code the driver retries on its own: only the label, as written, makes the insert retryable
        rig.rule("{times: 1}", "insert", "cannedReply: {ok: 0, code: 2, codeName: 'BadValue', errmsg: 'canned', "
                + "errorLabels: ['RetryableWriteError']}");
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=true"));

        c.insertOne(new Document("_id", 1));
        rig.assertAttempts("insert", 2, 1);
        assertEquals(1, rig.serverCount(), "the retry reached the member");
        rig.awaitOutcome("insert", "error", 1);
        rig.awaitOutcome("insert", "ok", 1);
    }

    @Test
    void anUnacknowledgedWriteGetsNoReplyAndTheConnectionServesTheNextCommand() throws InterruptedException {
        rig.rule("{times: 1}", "insert", "cannedReply: {ok: 1, n: 1}");
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=false&maxPoolSize=1"));

        c.withWriteConcern(WriteConcern.UNACKNOWLEDGED).insertOne(new Document("_id", 1));
        assertEquals(0, c.countDocuments(), "answered by the rule, not sent: a reply would have answered this count");
        Await.until(Duration.ofSeconds(10), "the canned insert counted", () -> rig.faults("cannedReply", "insert") == 1);
        assertEquals(0, rig.serverCount());
    }
}
