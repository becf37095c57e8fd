package io.blackpipe.fault;

import static com.mongodb.client.model.Filters.eq;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Updates;
import com.mongodb.event.CommandFailedEvent;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Errors injected into a multi-document transaction: the synthesized reply carries the
 * TransientTransactionError label a real server would add, so the driver's withTransaction
 * aborts and runs the whole transaction again, and the server ends up holding its writes once.
 */
class TransactionErrorsDriverTest extends DriverRigTest {
    /** Moves 4 from the account to a new transfer document in one withTransaction; how often the body ran. */
    private int transfer(MongoClient client) {
        MongoCollection<Document> c = rig.collection(client);
        AtomicInteger bodies = new AtomicInteger();
        try (ClientSession session = client.startSession()) {
            session.withTransaction(() -> {
                bodies.incrementAndGet();
                c.insertOne(session, new Document("_id", "transfer-1").append("amount", 4));
                c.updateOne(session, eq("_id", "account"), Updates.inc("balance", -4));
                return null;
            });
        }
        return bodies.get();
    }

    /**
     * The second statement fails once: the first statement's write must be rolled back by the
     * abort and written again by the retried transaction, not twice and not lost. A server labels
     * these transient (error_labels.cpp): 112 WriteConflict and 24 LockTimeout by name, 246
     * SnapshotUnavailable as a snapshot error, 189 PrimarySteppedDown and 134
     * ReadConcernMajorityNotAvailableYet as retriable errors, 251 NoSuchTransaction; without the
     * label the driver gives up on the first attempt.
     */
    @ParameterizedTest(name = "errorCode {0}")
    @ValueSource(ints = {112, 24, 246, 189, 134, 251})
    void withTransactionRunsTheWholeTransactionAgainOnAnInjectedTransientError(int code) {
        rig.serverSide("c").insertOne(new Document("_id", "account").append("balance", 10));
        rig.rule("{times: 1}", "update", "errorCode: " + code);
        MongoClient client = rig.client("retryWrites=true");
        assertEquals(2, transfer(client), "the whole transaction ran twice");
        rig.assertAttempts("insert", 2, 0);
        rig.assertAttempts("update", 2, 0);
        assertEquals(1, rig.faults("errorReply", "update"));
        assertEquals(1, rig.driverStarted("abortTransaction"));
        assertEquals(1, rig.driverStarted("commitTransaction"));

        CommandFailedEvent failure = rig.driverFailed("update").get(0);
        MongoCommandException seen = assertInstanceOf(MongoCommandException.class, failure.getThrowable());
        assertEquals(code, seen.getErrorCode());
        assertEquals(List.of("TransientTransactionError"), List.copyOf(seen.getErrorLabels()), seen.getResponse().toJson());

        // What the server holds: the insert once, the debit once.
        assertEquals(1, rig.serverSide("c").countDocuments(eq("_id", "transfer-1")));
        assertEquals(6, rig.serverSide("c").find(eq("_id", "account")).first().getInteger("balance"));
        assertEquals(2, rig.serverCount());
    }

    /**
     * NoSuchTransaction on the commit: nothing of the transaction can have been committed, so a
     * server labels it transient (the app, or withTransaction, runs the whole transaction again);
     * a retriable code on a commit is a RetryableWriteError instead (the commit alone is retried).
     * Manual, not withTransaction: jongodb refuses the next transaction of a session whose
     * transaction was left open, where a mongod aborts the old one when a newer txnNumber arrives.
     */
    @Test
    void aCommitThatSaysNoSuchTransactionIsTransientAndNothingIsCommitted() {
        rig.rule("{times: 1}", "commitTransaction", "errorCode: 251");
        MongoClient client = rig.client("retryWrites=true");
        MongoCollection<Document> c = rig.collection(client);
        try (ClientSession session = client.startSession()) {
            session.startTransaction();
            c.insertOne(session, new Document("_id", 1));
            MongoCommandException e = assertThrows(MongoCommandException.class, session::commitTransaction);
            assertEquals(251, e.getErrorCode());
            assertEquals(List.of("TransientTransactionError"), List.copyOf(e.getErrorLabels()), e.getResponse().toJson());
        }
        rig.assertAttempts("commitTransaction", 1, 0);
        assertEquals(0, rig.serverCount(), "the commit never reached the server");
    }

    /**
     * A dropped connection inside a transaction: no reply, so the label is the driver's own (it
     * labels network errors in a transaction); what the proxy owes is that the retried
     * transaction lands once.
     */
    @Test
    void withTransactionRunsAgainAfterTheConnectionIsClosedMidTransaction() {
        rig.serverSide("c").insertOne(new Document("_id", "account").append("balance", 10));
        rig.rule("{times: 1}", "update", "closeConnection: true");
        MongoClient client = rig.client("retryWrites=true");
        assertEquals(2, transfer(client));
        rig.assertAttempts("update", 2, 0);
        assertEquals(1, rig.faults("closeConnection", "update"));
        MongoException seen = assertInstanceOf(MongoException.class, rig.driverFailed("update").get(0).getThrowable());
        assertTrue(seen.hasErrorLabel("TransientTransactionError"), String.valueOf(seen));
        assertEquals(1, rig.serverSide("c").countDocuments(eq("_id", "transfer-1")));
        assertEquals(6, rig.serverSide("c").find(eq("_id", "account")).first().getInteger("balance"));
    }

    /**
     * A manual transaction: the application sees the label on the failed statement, aborts, and
     * the statement that had succeeded before it is not on the server.
     */
    @Test
    void aManualTransactionSeesTheLabelAndItsAbortLeavesNothing() {
        rig.rule("{times: 1}", "insert", "errorCode: 112, namespace: '" + rig.db + ".c'");
        MongoClient client = rig.client("retryWrites=true");
        MongoCollection<Document> other = client.getDatabase(rig.db).getCollection("other");
        MongoCollection<Document> c = rig.collection(client);
        try (ClientSession session = client.startSession()) {
            session.startTransaction();
            other.insertOne(session, new Document("_id", 1));
            MongoException e = assertThrows(MongoException.class, () -> c.insertOne(session, new Document("_id", 2)));
            assertTrue(e.hasErrorLabel("TransientTransactionError"), String.valueOf(e));
            assertEquals(112, e.getCode());
            session.abortTransaction();
        }
        rig.assertAttempts("insert", 2, 0);
        assertEquals(0, rig.serverSide("other").countDocuments(), "the abort rolled back the first statement");
        assertEquals(0, rig.serverCount());
    }

    /**
     * The label is the server's, not a blanket one: outside a transaction the same code is a
     * retryable-write error, and a code a server does not call transient (13 Unauthorized) gets no
     * label inside a transaction either.
     */
    @Test
    void onlyTransientCodesInsideATransactionAreLabelledTransient() {
        rig.rule("{times: 1}", "insert", "errorCode: 13");
        MongoClient client = rig.client("retryWrites=false");
        MongoCollection<Document> c = rig.collection(client);
        try (ClientSession session = client.startSession()) {
            session.startTransaction();
            MongoCommandException e = assertThrows(MongoCommandException.class, () -> c.insertOne(session, new Document("_id", 1)));
            assertEquals(13, e.getErrorCode());
            assertTrue(e.getErrorLabels().isEmpty(), e.getResponse().toJson());
            session.abortTransaction();
        }
        rig.rule("{times: 1}", "insert", "errorCode: 189");
        MongoCommandException outside = assertThrows(MongoCommandException.class, () -> c.insertOne(new Document("_id", 2)));
        assertFalse(outside.hasErrorLabel("TransientTransactionError"), outside.getResponse().toJson());
        assertEquals(0, rig.serverCount());
    }
}
