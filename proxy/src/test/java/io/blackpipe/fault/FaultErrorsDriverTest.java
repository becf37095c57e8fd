package io.blackpipe.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoNamespace;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoSocketReadException;
import com.mongodb.MongoSocketReadTimeoutException;
import com.mongodb.MongoWriteConcernException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.connection.ServerDescription;
import com.mongodb.event.CommandFailedEvent;
import io.blackpipe.observe.HistoryEntry;
import io.blackpipe.testing.UpstreamLane;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.Document;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Synthesized errors, rule matching, modes and the over-the-wire configureFailPoint, each proven
 * with the real Java driver through the proxy.
 */
class FaultErrorsDriverTest extends DriverRigTest {
    private static long counter(BsonDocument topologyVersion) {
        return topologyVersion.getNumber("counter").longValue();
    }

    private static int insertCode(MongoCollection<Document> c, int id) {
        return assertThrows(MongoCommandException.class, () -> c.insertOne(new Document("_id", id))).getErrorCode();
    }

    // ---- state-change errors: labelled like the server does, retried once, and the driver carries on ----

    @ParameterizedTest(name = "errorCode {0}")
    @ValueSource(ints = {91, 189, 11600, 11602, 10107, 13435, 13436})
    void aStateChangeErrorIsRetriedOnceAndTheDriverKeepsUsingTheMember(int code) {
        long memberCounter = counter(UpstreamLane.directHello().getDocument("topologyVersion"));
        rig.rule("{times: 1}", "insert", "errorCode: " + code);
        MongoClient client = rig.client("retryWrites=true");
        MongoCollection<Document> c = rig.collection(client);
        c.insertOne(new Document("_id", 0));
        rig.assertAttempts("insert", 2, 1);
        assertEquals(1, rig.faults("errorReply", "insert"));

        List<CommandFailedEvent> failures = rig.driverFailed("insert");
        assertEquals(1, failures.size());
        MongoCommandException seen = assertInstanceOf(MongoCommandException.class, failures.get(0).getThrowable());
        assertEquals(code, seen.getErrorCode());
        assertEquals(ErrorCodes.name(code), seen.getErrorCodeName());
        assertTrue(seen.hasErrorLabel("RetryableWriteError"), seen.getResponse().toJson());
        assertTrue(seen.hasErrorLabel("NoWritesPerformed"), "wire 17+: " + seen.getResponse().toJson());
        BsonDocument errorVersion = seen.getResponse().getDocument("topologyVersion");
        assertTrue(counter(errorVersion) > memberCounter, "newer than the member's own: " + errorVersion.toJson());

        for (int i = 1; i <= 5; i++) {
            c.insertOne(new Document("_id", i));
        }
        rig.assertAttempts("insert", 7, 1);
        assertEquals(6, rig.serverCount());

        // The member's hello replies are no longer older than the error (SDAM compares counters of
        // the same processId; another processId counts as newer), so the driver took them.
        BsonDocument hello = client.getDatabase("admin").runCommand(new BsonDocument("hello", new BsonInt32(1)), BsonDocument.class);
        BsonDocument helloVersion = hello.getDocument("topologyVersion");
        assertTrue(notOlder(helloVersion.getObjectId("processId").getValue(), counter(helloVersion), errorVersion),
                "error " + errorVersion.toJson() + ", hello " + helloVersion.toJson());
        ServerDescription member = client.getClusterDescription().getServerDescriptions().get(0);
        assertTrue(member.isPrimary(), member.toString());
        assertNotNull(member.getTopologyVersion(), member.toString());
        assertTrue(notOlder(member.getTopologyVersion().getProcessId(), member.getTopologyVersion().getCounter(), errorVersion),
                "error " + errorVersion.toJson() + ", driver " + member);
    }

    /** SDAM: a topologyVersion is older than another only with the same processId and a lower counter. */
    private static boolean notOlder(ObjectId processId, long counter, BsonDocument than) {
        return !processId.equals(than.getObjectId("processId").getValue()) || counter >= counter(than);
    }

    @Test
    void unauthorizedIsNotRetried() {
        rig.rule("{times: 1}", "insert", "errorCode: 13");
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=true"));
        MongoCommandException e = assertThrows(MongoCommandException.class, () -> c.insertOne(new Document("_id", 1)));
        assertEquals(13, e.getErrorCode());
        assertEquals("Unauthorized", e.getErrorCodeName());
        assertTrue(e.getErrorLabels().isEmpty(), e.getResponse().toJson());
        assertFalse(e.getResponse().containsKey("topologyVersion"));
        rig.assertAttempts("insert", 1, 0);
        assertEquals(1, rig.outcomes("insert", "error"));
        assertEquals(0, rig.serverCount());
    }

    @Test
    void notWritablePrimaryWithoutLabelsIsNotRetriedByAModernDriver() {
        rig.rule("{times: 1}", "insert", "errorCode: 10107, errorLabels: []");
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=true"));
        MongoCommandException e = assertThrows(MongoCommandException.class, () -> c.insertOne(new Document("_id", 1)));
        assertEquals(10107, e.getErrorCode());
        assertTrue(e.getErrorLabels().isEmpty());
        rig.assertAttempts("insert", 1, 0);
        assertEquals(0, rig.serverCount());
        c.insertOne(new Document("_id", 2)); // the driver re-discovers the member and carries on
        assertEquals(1, rig.serverCount());
    }

    @Test
    void theErrorPresetNameWorksLikeItsCode() {
        rig.rule("{times: 1}", "insert", "error: 'NotWritablePrimary'");
        rig.collection(rig.client("retryWrites=true")).insertOne(new Document("_id", 1));
        rig.assertAttempts("insert", 2, 1);
        assertEquals(10107, ((MongoCommandException) rig.driverFailed("insert").get(0).getThrowable()).getErrorCode());
    }

    // ---- matching ----

    @Test
    void aRuleForAnotherAppDoesNotFire() {
        rig.rule("'alwaysOn'", "insert", "errorCode: 13, appName: 'someone-else'");
        MongoCollection<Document> c = rig.collection(rig.client("appName=mine&retryWrites=false"));
        c.insertOne(new Document("_id", 1));
        assertEquals(0, rig.allFaults());
        rig.rule("'alwaysOn'", "insert", "errorCode: 13, appName: 'mine'");
        assertEquals(13, insertCode(c, 2));
        rig.assertAttempts("insert", 2, 0);
        assertEquals(1, rig.faults("errorReply", "insert"));
        assertEquals(1, rig.serverCount());
    }

    @Test
    void aRuleForAnotherNamespaceDoesNotFire() {
        rig.rule("'alwaysOn'", "insert", "errorCode: 13, namespace: '" + rig.db + ".other'");
        rig.rule("'alwaysOn'", "insert", "errorCode: 13, namespace: 'otherdb'");
        rig.rule("'alwaysOn'", "insert", "errorCode: 13, namespace: 'otherdb.c'");
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=false"));
        c.insertOne(new Document("_id", 1));
        assertEquals(0, rig.allFaults());

        rig.rule("'alwaysOn'", "insert", "errorCode: 13, namespace: '" + rig.db + ".c'");
        assertEquals(13, insertCode(c, 2));
        rig.proxy.rules().clear();
        rig.rule("'alwaysOn'", "insert", "errorCode: 13, namespace: '" + rig.db + "'");
        assertEquals(13, insertCode(c, 3), "a database name matches all its collections");
        MongoCollection<Document> elsewhere = rig.client("retryWrites=false").getDatabase(rig.db).getCollection("elsewhere");
        assertEquals(13, insertCode(elsewhere, 4));
        assertEquals(3, rig.allFaults());
        assertEquals(1, rig.serverCount());
    }

    /**
     * mongod gives renameCollection (sent to admin) the namespace of the collection it renames, and its failpoint's
     * namespace matches that; so does a rule's here, and the history names it so.
     */
    @Test
    void aNamespaceRuleMatchesARenameByTheCollectionItRenames() {
        rig.serverSide("c").insertOne(new Document("_id", 1));
        rig.rule("'alwaysOn'", "renameCollection", "errorCode: 2, namespace: 'admin'");
        rig.rule("'alwaysOn'", "renameCollection", "errorCode: 13, namespace: '" + rig.db + ".c'");
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=false"));
        MongoCommandException refused = assertThrows(MongoCommandException.class,
                () -> c.renameCollection(new MongoNamespace(rig.db, "renamed")));
        assertEquals(13, refused.getErrorCode(), "the rule on the renamed collection's namespace, not admin's");
        assertEquals(List.of(new Document("_id", 1)), rig.serverSide("c").find().into(new ArrayList<>()), "not renamed");
        HistoryEntry rename = rig.proxy.history().recent().stream().filter(h -> h.command().equals("renameCollection"))
                .findFirst().orElseThrow();
        assertEquals(rig.db + ".c", rename.namespace());
    }

    /** mongod gives explain the namespace of the command it explains, and its failpoint's namespace matches that. */
    @Test
    void aNamespaceRuleMatchesAnExplainByTheCollectionItReads() {
        rig.rule("'alwaysOn'", "explain", "errorCode: 13, namespace: '" + rig.db + ".other'");
        rig.rule("'alwaysOn'", "explain", "errorCode: 2, namespace: '" + rig.db + ".c'");
        MongoCollection<Document> c = rig.collection(rig.client("retryReads=false"));
        MongoCommandException refused = assertThrows(MongoCommandException.class, () -> c.find().explain());
        assertEquals(2, refused.getErrorCode(), "the rule on the explained find's collection");
        assertEquals(1, rig.faults("errorReply", "explain"));
    }

    /**
     * ReadConcernMajorityNotAvailableYet is not in the retryable writes spec's list but is in the
     * server's RetriableError category, so a server labels it RetryableWriteError and the driver
     * retries the write.
     */
    @Test
    void aRetriableCodeBeyondTheSpecsListIsLabelledAsTheServerDoesAndRetried() {
        rig.rule("{times: 1}", "insert", "errorCode: 134");
        rig.collection(rig.client("retryWrites=true")).insertOne(new Document("_id", 1));
        rig.assertAttempts("insert", 2, 1);
        MongoCommandException seen = assertInstanceOf(MongoCommandException.class, rig.driverFailed("insert").get(0).getThrowable());
        assertTrue(seen.hasErrorLabel("RetryableWriteError"), seen.getResponse().toJson());
        assertEquals(1, rig.serverCount());
    }

    /** The server's failCommand matches a command by any of its names; the driver sends findAndModify. */
    @Test
    void aRuleNamingTheLowercaseAliasFailsTheDriversFindAndModify() {
        rig.serverSide("c").insertOne(new Document("_id", 1).append("n", 0));
        rig.rule("{times: 1}", "findandmodify", "errorCode: 13");
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=true"));
        MongoCommandException e = assertThrows(MongoCommandException.class,
                () -> c.findOneAndUpdate(new Document("_id", 1), new Document("$inc", new Document("n", 1))));
        assertEquals(13, e.getErrorCode());
        assertEquals(1, rig.faults("errorReply", "findAndModify"));
        assertEquals(0, rig.serverSide("c").find().first().getInteger("n"), "the failed command never reached the server");
    }

    /** getMore names its collection in a field, not first: the server's namespace filter reads it there. */
    @Test
    void aNamespaceRuleMatchesTheGetMoresOfItsCollectionOnly() {
        for (int i = 1; i <= 5; i++) {
            rig.serverSide("c").insertOne(new Document("_id", i));
            rig.serverSide("other").insertOne(new Document("_id", i));
        }
        rig.rule("'alwaysOn'", "getMore", "errorCode: 13, namespace: '" + rig.db + ".c'");
        MongoClient client = rig.client("retryReads=true");
        List<Document> other = client.getDatabase(rig.db).getCollection("other").find().batchSize(2).into(new ArrayList<>());
        assertEquals(5, other.size(), "another collection's getMores pass");
        assertEquals(0, rig.allFaults());
        MongoCommandException e = assertThrows(MongoCommandException.class,
                () -> rig.collection(client).find().batchSize(2).into(new ArrayList<>()));
        assertEquals(13, e.getErrorCode());
        assertEquals(1, rig.faults("errorReply", "getMore"), "getMore is not retried: one fault, one attempt");
    }

    @Test
    void attemptRetryFailsOnlyTheRetry() {
        rig.rule("{times: 1}", "insert", "resetConnection: true");
        rig.rule("'alwaysOn'", "insert", "errorCode: 13, attempt: 'retry'");
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=true"));
        assertEquals(13, insertCode(c, 1), "the first attempt was reset, its retry got the error");
        rig.assertAttempts("insert", 2, 1);
        assertEquals(1, rig.faults("resetConnection", "insert"));
        assertEquals(1, rig.faults("errorReply", "insert"));
        c.insertOne(new Document("_id", 2)); // a first attempt: the retry-only rule lets it pass
        rig.assertAttempts("insert", 3, 1);
        assertEquals(1, rig.serverCount());
    }

    @Test
    void attemptFirstFailsOnlyFirstAttempts() {
        rig.rule("'alwaysOn'", "insert", "closeConnection: true, attempt: 'first'");
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=true"));
        for (int i = 1; i <= 3; i++) {
            c.insertOne(new Document("_id", i));
        }
        rig.assertAttempts("insert", 6, 3);
        assertEquals(3, rig.faults("closeConnection", "insert"));
        assertEquals(3, rig.outcomes("insert", "network_error"));
        assertEquals(3, rig.outcomes("insert", "ok"));
        assertEquals(3, rig.serverCount());
    }

    // ---- modes ----

    @Test
    void skipOneLetsTheFirstMatchPassThenFiresEveryTime() {
        rig.rule("{skip: 1}", "insert", "errorCode: 13");
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=true"));
        c.insertOne(new Document("_id", 1));
        assertEquals(13, insertCode(c, 2));
        assertEquals(13, insertCode(c, 3));
        rig.assertAttempts("insert", 3, 0);
        assertEquals(2, rig.faults("errorReply", "insert"));
        assertEquals(1, rig.serverCount());
    }

    @Test
    void activationProbabilityZeroNeverFires() {
        rig.rule("{activationProbability: 0}", "insert", "errorCode: 13");
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=true"));
        for (int i = 0; i < 20; i++) {
            c.insertOne(new Document("_id", i));
        }
        rig.assertAttempts("insert", 20, 0);
        assertEquals(0, rig.allFaults());
        assertEquals(20, rig.serverCount());
    }

    @Test
    void activationProbabilityOneAlwaysFires() {
        rig.rule("{activationProbability: 1}", "insert", "errorCode: 13");
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=true"));
        for (int i = 0; i < 10; i++) {
            assertEquals(13, insertCode(c, i));
        }
        rig.assertAttempts("insert", 10, 0);
        assertEquals(10, rig.faults("errorReply", "insert"));
        assertEquals(0, rig.serverCount());
    }

    // ---- configureFailPoint over the wire, with each action ----

    /** What a failpoint sent through the proxy does to the next insert (retryWrites=false). */
    static Stream<Arguments> wireFailPoints() {
        return Stream.of(
                Arguments.of("closeConnection", "closeConnection: true", MongoSocketException.class, 0, "closeConnection"),
                Arguments.of("resetConnection", "resetConnection: true", MongoSocketException.class, 0, "resetConnection"),
                Arguments.of("hang", "hang: true", MongoSocketReadTimeoutException.class, 0, "hang"),
                Arguments.of("dropReply", "dropReply: true", MongoSocketException.class, 1, "dropReply"),
                Arguments.of("truncateReplyBytes", "truncateReplyBytes: 30", MongoSocketReadException.class, 1, "truncateReply"),
                Arguments.of("delayReplyMS", "delayReplyMS: 300", null, 1, "delayReply"),
                Arguments.of("blockConnection", "blockConnection: true, blockTimeMS: 300", null, 1, "blockConnection"),
                Arguments.of("blockConnection+errorCode", "blockConnection: true, blockTimeMS: 300, errorCode: 13",
                        MongoCommandException.class, 0, "errorReply"),
                Arguments.of("errorCode", "errorCode: 13", MongoCommandException.class, 0, "errorReply"),
                Arguments.of("error", "error: 'NotWritablePrimary'", MongoCommandException.class, 0, "errorReply"),
                Arguments.of("writeConcernError", "writeConcernError: {code: 64}", MongoWriteConcernException.class, 1,
                        "writeConcernError"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("wireFailPoints")
    void configureFailPointThroughTheProxyAppliesEachAction(String label, String data, Class<? extends Exception> raised,
                                                            int storedAfter, String fault) {
        // A short socket timeout only where the hang must end in one; elsewhere a busy machine must not time out.
        MongoClient client = rig.client("retryWrites=false&socketTimeoutMS=" + (label.equals("hang") ? 2000 : 20000));
        Document reply = client.getDatabase("admin").runCommand(Document.parse(
                "{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['insert'], " + data + "}}"));
        assertEquals(1.0, reply.get("ok", Number.class).doubleValue());
        assertEquals(1, rig.proxy.rules().rules().size());
        assertEquals(0, rig.attempts("configureFailPoint"), "taken by the proxy, not forwarded");

        MongoCollection<Document> c = rig.collection(client);
        long start = System.nanoTime();
        if (raised == null) {
            c.insertOne(new Document("_id", 1));
        } else {
            assertInstanceOf(raised, assertThrows(Exception.class, () -> c.insertOne(new Document("_id", 1))));
        }
        long took = (System.nanoTime() - start) / 1_000_000;
        if (data.contains("300")) {
            assertTrue(took >= 300, "took " + took + " ms");
        }
        rig.assertAttempts("insert", 1, 0);
        assertEquals(1, rig.faults(fault, "insert"));
        assertEquals(storedAfter, rig.serverCount());

        c.insertOne(new Document("_id", 2)); // {times: 1} is spent
        assertEquals(storedAfter + 1, rig.serverCount());
        client.getDatabase("admin").runCommand(Document.parse("{configureFailPoint: 'failCommand', mode: 'off'}"));
        assertTrue(rig.proxy.rules().rules().isEmpty());
    }

    @Test
    void aNewWireFailPointReplacesTheOldOneAndOffRemovesIt() {
        MongoClient client = rig.client("retryWrites=false");
        client.getDatabase("admin").runCommand(Document.parse(
                "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['insert'], errorCode: 13}}"));
        client.getDatabase("admin").runCommand(Document.parse(
                "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['insert'], errorCode: 2}}"));
        assertEquals(1, rig.proxy.rules().rules().size(), "the server keeps one failCommand failpoint");
        MongoCollection<Document> c = rig.collection(client);
        assertEquals(2, insertCode(c, 1));
        client.getDatabase("admin").runCommand(Document.parse(
                "{configureFailPoint: 'failCommand', mode: 'off', data: {failCommands: ['insert'], errorCode: 2}}"));
        c.insertOne(new Document("_id", 1));
        assertEquals(1, rig.serverCount());
    }
}
