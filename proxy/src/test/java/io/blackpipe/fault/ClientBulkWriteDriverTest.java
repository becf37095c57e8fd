package io.blackpipe.fault;

import static com.mongodb.client.model.Filters.eq;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ClientBulkWriteException;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.MongoNamespace;
import com.mongodb.MongoSocketException;
import com.mongodb.bulk.WriteConcernError;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.bulk.ClientBulkWriteResult;
import com.mongodb.client.model.bulk.ClientNamespacedWriteModel;
import io.blackpipe.testing.Closing;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.UpstreamLane;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * MongoDB 8.0's bulkWrite command, a driver's client-wide bulk write (its operations across collections in one command
 * to admin, as OP_MSG document sequences), passes as any write does: counted, its retry counted, a lost reply retried
 * and the write applied once. A server before 8.0 refuses it (CommandNotFound), and so does jongodb 0.1.6, whose own
 * bulkWrite command is another (TypeMismatch); the Java and Node.js drivers send it whatever the wire version. Such a
 * refusal reaches the driver as it came, with the same counts. Each test asks the upstream straight which it does, and
 * runs on the lane, on a scripted member that serves the command as mongod 8.0 does (the lane's may not), and on one that
 * also runs a retried write again, as jongodb does (blackpipe answers the retry from the first run: RetriedWrites).
 */
class ClientBulkWriteDriverTest {
    enum Upstream { LANE, SCRIPTED_MONGOD_8_0, SCRIPTED_8_0_RUNNING_RETRIES_AGAIN }

    private DriverRig rig;
    private ScriptedMongod scripted;
    /** The upstream's refusal of a client bulk write, asked straight as the test starts; null where it takes one. */
    private MongoCommandException refusal;

    private void start(Upstream upstream, TestInfo test) throws IOException {
        String name = test.getTestMethod().orElseThrow().getName();
        if (upstream == Upstream.LANE) {
            rig = new DriverRig(name);
            refusal = refusalStraightFromTheUpstream();
            return;
        }
        ScriptedMongod.Builder member = ScriptedMongod.builder().maxWireVersion(25).version("8.0.0");
        if (upstream == Upstream.SCRIPTED_8_0_RUNNING_RETRIES_AGAIN) {
            member.withoutEndSessions().reappliesRetriedWrites(); // blackpipe asks a member that is no mongod how it takes retries
        }
        scripted = member.start();
        rig = new DriverRig(scripted.uri("replicaSet=" + ScriptedMongod.SET_NAME),
                MongoClients.create(scripted.uri("directConnection=true")), name, 0);
        refusal = refusalStraightFromTheUpstream();
    }

    /** A client through the proxy (retryWrites=true), after a rule that acts on the next bulkWrite once with {@code data}. */
    private MongoClient clientAfterOneRule(String data) {
        rig.rule("{times: 1}", "bulkWrite", data);
        return rig.client("retryWrites=true");
    }

    @AfterEach
    void stop() throws Exception {
        Closing.inTurn(rig, scripted);
    }

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
            String upstream = scripted == null ? UpstreamLane.name() : "the scripted member";
            System.out.println("[blackpipe] " + upstream + " refuses MongoDB 8.0's bulkWrite: " + refused.getErrorCode() + " "
                    + refused.getErrorMessage());
            return refused;
        }
    }

    private List<Document> stored(String collection) {
        List<Document> stored = rig.serverSide(collection).find().into(new ArrayList<>());
        stored.sort(Comparator.comparing(d -> d.getInteger("_id")));
        return stored;
    }

    private static void assertSameRefusal(MongoCommandException straight, MongoCommandException throughTheProxy) {
        assertEquals(straight.getErrorCode(), throughTheProxy.getErrorCode(), throughTheProxy.getMessage());
        assertEquals(straight.getErrorMessage(), throughTheProxy.getErrorMessage());
    }

    @ParameterizedTest
    @EnumSource(Upstream.class)
    void aClientBulkWriteWhoseReplyWasLostIsRetriedOnceAndAppliedOnce(Upstream upstream, TestInfo test) throws IOException {
        start(upstream, test);
        MongoClient client = clientAfterOneRule("dropReply: true");
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

    @ParameterizedTest
    @EnumSource(Upstream.class)
    void aNotWritablePrimaryReplyIsRetriedOnTheMember(Upstream upstream, TestInfo test) throws IOException {
        start(upstream, test);
        MongoClient client = clientAfterOneRule("errorCode: 10107");
        if (refusal == null) {
            assertEquals(2, client.bulkWrite(retryableBulk()).getInsertedCount());
            assertEquals(List.of(new Document("_id", 1).append("n", 1)), stored("c"));
        } else {
            assertSameRefusal(refusal, assertThrows(MongoCommandException.class, () -> client.bulkWrite(retryableBulk())));
        }
        rig.assertAttempts("bulkWrite", 2, 1);
        assertEquals(1, rig.faults("errorReply", "bulkWrite"));
    }

    /** A writeConcernError on the reply: the write happened, the app is told it may not be durable, and nothing is retried. */
    @ParameterizedTest
    @EnumSource(Upstream.class)
    void aWriteConcernErrorReachesTheAppWithTheWriteApplied(Upstream upstream, TestInfo test) throws IOException {
        start(upstream, test);
        MongoClient client = clientAfterOneRule("writeConcernError: {code: 64, errmsg: 'waiting for replication timed out'}");
        if (refusal == null) {
            ClientBulkWriteException failed = assertThrows(ClientBulkWriteException.class, () -> client.bulkWrite(retryableBulk()));
            assertEquals(List.of(64), failed.getWriteConcernErrors().stream().map(WriteConcernError::getCode).toList());
            assertEquals(2, failed.getPartialResult().orElseThrow().getInsertedCount(), "what ran, as the member answered it");
            assertEquals(List.of(new Document("_id", 1).append("n", 1)), stored("c"), "applied, once");
        } else {
            assertSameRefusal(refusal, assertThrows(MongoCommandException.class, () -> client.bulkWrite(retryableBulk())));
        }
        rig.assertAttempts("bulkWrite", 1, 0);
        assertEquals(1, rig.faults("writeConcernError", "bulkWrite"));
    }

    /** An updateMany makes the bulk write one that drivers never retry: its lost reply reaches the app as a network error. */
    @ParameterizedTest
    @EnumSource(Upstream.class)
    void aBulkWriteWithAMultiUpdateIsNotRetriedAndItsLostReplyReachesTheApp(Upstream upstream, TestInfo test) throws IOException {
        start(upstream, test);
        rig.serverSide("c").insertMany(List.of(new Document("_id", 1), new Document("_id", 2)));
        MongoClient client = clientAfterOneRule("dropReply: true");
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
