package io.blackpipe.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.testing.Closing;
import io.blackpipe.testing.CommandLog;
import io.blackpipe.testing.ScriptedMongod;
import java.io.IOException;
import java.util.List;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Overload codes injected through the proxy, as the real driver (5.14, which implements the client
 * backpressure spec) meets them: a member that says it is 8.2 (maxWireVersion 27) labels them
 * SystemOverloadedError as mongod's error_labels.cpp does, an 8.1 one does not; the label makes the
 * driver retry a retryable write up to twice (the spec's MAX_RETRIES) instead of once, and on its
 * own makes no other command retried. RetryableError is never computed (mongod adds it only to
 * its rate limiter's own rejections): a rule that wants one names it, and then the driver retries
 * even a deleteMany. Runs against a {@link ScriptedMongod} that reports the wire version asked for.
 */
class SystemOverloadedDriverTest {
    private static final int WIRE_8_1 = 26;
    private static final int WIRE_8_2 = 27;

    private ScriptedMongod upstream;
    private ProxyServer proxy;
    private MongoClient client;
    private final CommandLog log = new CommandLog();

    private MongoCollection<Document> through(int maxWireVersion) throws IOException {
        upstream = ScriptedMongod.builder().maxWireVersion(maxWireVersion).start();
        proxy = ProxyServer.start(ProxyConfig.embedded(upstream.uri("replicaSet=" + ScriptedMongod.SET_NAME)));
        client = MongoClients.create(log.driverOn(CommandLog.withOptions(proxy.connectionString(),
                "socketTimeoutMS=5000&connectTimeoutMS=5000")).build());
        return client.getDatabase("overload").getCollection("c");
    }

    @AfterEach
    void stop() throws Exception {
        Closing.inTurn(client, proxy, upstream);
    }

    private void rule(String mode, String command, String data) {
        String json = "{configureFailPoint: 'failCommand', mode: " + mode + ", data: {failCommands: ['" + command + "'], " + data + "}}";
        proxy.rules().put(proxy.ruleParser().parse("overload", BsonDocument.parse(json)));
    }

    private List<BsonDocument> held() {
        return upstream.documents("overload", "c");
    }

    @Test
    void anOverloadCodeCarriesSystemOverloadedErrorButNoRetryableErrorAndAReadIsNotRetriedOnIt() throws IOException {
        MongoCollection<Document> c = through(WIRE_8_2);
        upstream.insertDocuments("overload", "c", List.of(new BsonDocument("_id", new BsonInt32(1))));
        rule("'alwaysOn'", "find", "errorCode: 365");
        MongoCommandException e = assertThrows(MongoCommandException.class, () -> c.find().first());
        assertEquals(365, e.getErrorCode());
        assertEquals("TemporarilyUnavailable", e.getErrorCodeName());
        assertTrue(e.hasErrorLabel(MongoException.SYSTEM_OVERLOADED_ERROR_LABEL), "labels: " + e.getErrorLabels());
        assertFalse(e.hasErrorLabel(MongoException.RETRYABLE_ERROR_LABEL), "labels: " + e.getErrorLabels());
        assertEquals(1, log.startedCount("find"), "the label alone is no reason to retry, and 365 is no retryable read code");
        assertEquals(1, proxy.rules().fired("overload"));
    }

    @Test
    void aRetryableWriteRejectedWith462IsRetriedTwiceOnAnEightDotTwoMember() throws IOException {
        MongoCollection<Document> c = through(WIRE_8_2);
        rule("{times: 2}", "insert", "errorCode: 462");
        c.insertOne(new Document("_id", 1)); // the third attempt gets through
        assertEquals(3, log.startedCount("insert"), "an overload error raises the retries of a retryable write to two");
        assertEquals(List.of(new BsonDocument("_id", new BsonInt32(1))), held());
        MongoException first = (MongoException) log.failed.get(0).getThrowable();
        assertEquals(Set.of("RetryableWriteError", "NoWritesPerformed", "SystemOverloadedError"), first.getErrorLabels(),
                "the labels a mongod 8.2 computes for a retryable write's 462");
    }

    @Test
    void onAnEightDotOneMemberTheSameWriteHasNoOverloadLabelAndIsRetriedOnce() throws IOException {
        MongoCollection<Document> c = through(WIRE_8_1);
        rule("{times: 2}", "insert", "errorCode: 462");
        MongoException e = assertThrows(MongoException.class, () -> c.insertOne(new Document("_id", 1)));
        assertEquals(462, e.getCode());
        assertFalse(e.hasErrorLabel(MongoException.SYSTEM_OVERLOADED_ERROR_LABEL), "labels: " + e.getErrorLabels());
        assertEquals(2, log.startedCount("insert"), "a plain retryable write error: one retry");
        assertEquals(List.of(), held());
    }

    @Test
    void aDeleteManyRejectedWith462IsNotRetriedUnlessTheRuleAddsRetryableError() throws IOException {
        MongoCollection<Document> c = through(WIRE_8_2);
        upstream.insertDocuments("overload", "c", List.of(new BsonDocument("_id", new BsonInt32(1)),
                new BsonDocument("_id", new BsonInt32(2))));
        rule("{times: 1}", "delete", "errorCode: 462");
        MongoException e = assertThrows(MongoException.class, () -> c.deleteMany(Filters.empty()));
        assertEquals(Set.of("SystemOverloadedError"), e.getErrorLabels(), "a multi-delete is no retryable write");
        assertEquals(1, log.startedCount("delete"));
        assertEquals(2, held().size(), "the server still holds both documents");

        rule("{times: 1}", "delete", "errorCode: 462, errorLabels: ['SystemOverloadedError', 'RetryableError']");
        assertEquals(2, c.deleteMany(Filters.empty()).getDeletedCount(), "retried as an overload error the rule called retryable");
        assertEquals(3, log.startedCount("delete"));
        assertEquals(List.of(), held());
    }
}
