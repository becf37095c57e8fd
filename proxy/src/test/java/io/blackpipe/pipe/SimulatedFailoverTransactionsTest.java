package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCommandException;
import com.mongodb.ServerAddress;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.connection.ServerDescription;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.wire.BlockingCommandClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A failover of a simulated set ends the transactions open on the old primary, as a real stepdown
 * aborts them: the new primary never heard of them, so their commit there is NoSuchTransaction
 * (TransientTransactionError) and none of their writes reach the server. The one real node behind
 * the set would hold them open, and commit them if asked: the proxy has it abort them at the failover.
 */
class SimulatedFailoverTransactionsTest {
    @RegisterExtension
    final SimulatedSetOverTheLane set = new SimulatedSetOverTheLane();

    /**
     * Polled, no scheduled heartbeat between the failover and the commit: the commit meets the old
     * primary first, as between two heartbeats (a streaming driver hears of the election at once).
     */
    private MongoClient client() {
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(set.proxy().connectionString() + "&serverMonitoringMode=poll&heartbeatFrequencyMS=120000"))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(10, TimeUnit.SECONDS))
                .build());
    }

    private static void awaitBothSecondaries(MongoClient client) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (client.getClusterDescription().getServerDescriptions().stream().filter(ServerDescription::isSecondary).count() < 2
                && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
    }

    /** Document 0 written, then a transaction that writes document 1 open on the first member as the second is elected. */
    private MongoCollection<Document> transactionOpenAtTheFailover(MongoClient client, ClientSession session, String db)
            throws InterruptedException {
        MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
        c.insertOne(new Document("_id", 0));
        awaitBothSecondaries(client);
        session.startTransaction();
        c.insertOne(session, new Document("_id", 1));
        set.proxy().failover();
        return c;
    }

    @Test
    void aCommitAfterTheFailoverIsNoSuchTransactionAndTheWritesNeverApply() throws InterruptedException {
        String db = UpstreamLane.freshDatabaseName("simtxn");
        try (MongoClient client = client(); ClientSession session = client.startSession()) {
            MongoCollection<Document> c = transactionOpenAtTheFailover(client, session, db);
            // the old primary refuses the commit (NotWritablePrimary, retryable); the retry meets the new primary
            MongoCommandException e = assertThrows(MongoCommandException.class, session::commitTransaction);
            assertEquals(251, e.getErrorCode(), e.getMessage());
            assertTrue(e.hasErrorLabel("TransientTransactionError"), e.getMessage());
        }
        assertEquals(2, Meters.attempts(set.proxy().registry(), "commitTransaction"));
        assertEquals(1, Meters.retries(set.proxy().registry(), "commitTransaction"));
        assertNull(set.direct().getDatabase(db).getCollection("c").find(new Document("_id", 1)).first());
        assertEquals(1, set.direct().getDatabase(db).getCollection("c").countDocuments());
    }

    @Test
    void aDelayRuleOnTheCommitDelaysTheNewPrimarysAnswerAndChangesNothingElse() throws InterruptedException {
        String db = UpstreamLane.freshDatabaseName("simtxndelay");
        try (MongoClient client = client(); ClientSession session = client.startSession()) {
            MongoCollection<Document> c = transactionOpenAtTheFailover(client, session, db);
            set.proxy().rules().put(set.proxy().ruleParser().parse("late-commit", BsonDocument.parse("{configureFailPoint: 'failCommand',"
                    + " mode: 'alwaysOn', data: {failCommands: ['commitTransaction'], delayReplyMS: 50}}")));
            MongoCommandException e = assertThrows(MongoCommandException.class, session::commitTransaction);
            assertEquals(251, e.getErrorCode(), e.getMessage());
            assertTrue(e.hasErrorLabel("TransientTransactionError"), e.getMessage());
        }
        assertEquals(2, Meters.outcomes(set.proxy().registry(), "commitTransaction", "error"), "the old primary refused it, the new one answered NoSuchTransaction");
        assertNull(set.direct().getDatabase(db).getCollection("c").find(new Document("_id", 1)).first());
    }

    @Test
    void aStatementThatReachesTheNewPrimaryIsNoSuchTransactionAndTheSessionStartsAnother() throws InterruptedException {
        String db = UpstreamLane.freshDatabaseName("simtxnstmt");
        try (MongoClient client = client(); ClientSession session = client.startSession()) {
            MongoCollection<Document> c = transactionOpenAtTheFailover(client, session, db);
            c.insertOne(new Document("_id", 2)); // outside the transaction: NotWritablePrimary, retried, the driver learns the new primary
            MongoCommandException e = assertThrows(MongoCommandException.class, () -> c.insertOne(session, new Document("_id", 3)));
            assertEquals(251, e.getErrorCode(), e.getMessage());
            assertTrue(e.hasErrorLabel("TransientTransactionError"), e.getMessage());
            session.abortTransaction();
            session.startTransaction(); // the real node's copy was aborted: the session may begin again
            c.insertOne(session, new Document("_id", 4));
            session.commitTransaction();
        }
        assertNull(set.direct().getDatabase(db).getCollection("c").find(new Document("_id", 1)).first());
        assertNull(set.direct().getDatabase(db).getCollection("c").find(new Document("_id", 3)).first());
        assertEquals(3, set.direct().getDatabase(db).getCollection("c").countDocuments()); // 0, 2 and 4
    }

    @Test
    void withTransactionRunsItsBodyAgainOnTheNewPrimaryAndEachWriteAppliesOnce() throws InterruptedException {
        String db = UpstreamLane.freshDatabaseName("simtxnretry");
        AtomicInteger runs = new AtomicInteger();
        try (MongoClient client = client(); ClientSession session = client.startSession()) {
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            c.insertOne(new Document("_id", 0).append("n", 0));
            awaitBothSecondaries(client);
            session.withTransaction(() -> {
                c.updateOne(session, new Document("_id", 0), new Document("$inc", new Document("n", 1)));
                c.insertOne(session, new Document("_id", 1));
                if (runs.incrementAndGet() == 1) {
                    set.proxy().failover(); // between the body and its commit
                }
                return null;
            });
        }
        assertEquals(2, runs.get(), "the commit's TransientTransactionError runs the body again");
        assertEquals(1, set.direct().getDatabase(db).getCollection("c").find(new Document("_id", 0)).first().getInteger("n"));
        assertEquals(2, set.direct().getDatabase(db).getCollection("c").countDocuments());
    }

    /**
     * A real stepdown aborts every transaction open on the old primary at once, whether or not its client comes back.
     * One whose client never returns is aborted on the node at the failover: committed there straight after, as the
     * node would have committed it before, it is NoSuchTransaction, and its write never applies.
     */
    @Test
    void aTransactionWhoseClientNeverReturnsIsAbortedOnTheNodeAtTheFailover() throws Exception {
        String db = UpstreamLane.freshDatabaseName("simtxngone");
        try (MongoClient client = client(); ClientSession session = client.startSession()) {
            transactionOpenAtTheFailover(client, session, db);
            BsonDocument reply = straightToTheNode(inTheTransaction(session, new BsonDocument("commitTransaction", new BsonInt32(1))));
            assertEquals(251, reply.getNumber("code", new BsonInt32(0)).intValue(), reply.toJson());
        }
        assertNull(set.direct().getDatabase(db).getCollection("c").find(new Document("_id", 1)).first());
        assertEquals(1, set.direct().getDatabase(db).getCollection("c").countDocuments());
    }

    /**
     * rs.stepDown() on the simulated primary is answered on the connection's event loop, which does not wait for the
     * node: the abort follows, and a read in the transaction, which leaves it as it is, sees it end.
     */
    @Test
    void rsStepDownAbortsTheTransactionsOpenOnTheOldPrimaryToo() throws Exception {
        String db = UpstreamLane.freshDatabaseName("simtxnstepdown");
        try (MongoClient client = client(); ClientSession session = client.startSession()) {
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            c.insertOne(new Document("_id", 0));
            awaitBothSecondaries(client);
            session.startTransaction();
            c.insertOne(session, new Document("_id", 1));
            BsonDocument read = inTheTransaction(session, new BsonDocument("find", new BsonString("c")).append("$db", new BsonString(db)));
            assertEquals(1.0, straightToTheNode(read).getNumber("ok").doubleValue(), "open on the node before the stepdown");

            client.getDatabase("admin").runCommand(new BsonDocument("replSetStepDown", new BsonInt32(10)));
            Await.until(Duration.ofSeconds(10), () -> "the node aborted the transaction",
                    () -> straightToTheNode(read).getNumber("code", new BsonInt32(0)).intValue() == 251);
        }
        assertNull(set.direct().getDatabase(db).getCollection("c").find(new Document("_id", 1)).first());
    }

    /** {@code command} as a later command of {@code session}'s transaction. */
    private static BsonDocument inTheTransaction(ClientSession session, BsonDocument command) {
        return command.append("lsid", session.getServerSession().getIdentifier())
                .append("txnNumber", new BsonInt64(session.getServerSession().getTransactionNumber()))
                .append("autocommit", BsonBoolean.FALSE);
    }

    /** The reply of the one real node to {@code command} (to admin unless it names its $db), past the proxy. */
    private static BsonDocument straightToTheNode(BsonDocument command) {
        ServerAddress node = new ServerAddress(new ConnectionString(UpstreamLane.singleNodeUri()).getHosts().get(0));
        try (BlockingCommandClient client = new BlockingCommandClient(node.getHost(), node.getPort(), 5000)) {
            return client.run(command.isString("$db") ? command.getString("$db").getValue() : "admin", command);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
