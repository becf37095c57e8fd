package io.blackpipe.fault;

import static com.mongodb.client.model.Filters.eq;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoSocketException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.CommandLog;
import io.blackpipe.testing.UpstreamLane;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** First proof of the fault path: rules break real driver traffic, and the counters agree with the driver. */
class FaultSmokeTest {
    private ProxyServer proxy;
    private MongoClient direct;
    private final CommandLog log = new CommandLog();

    @BeforeEach
    void start() {
        proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()));
        direct = UpstreamLane.directClient();
    }

    @AfterEach
    void stop() {
        direct.close();
        proxy.close();
    }

    private MongoClient client(String options) {
        return MongoClients.create(log.driverOn(CommandLog.withOptions(proxy.connectionString(), "socketTimeoutMS=20000&" + options))
                .build());
    }

    private long driverStarted(String command) {
        return log.startedCount(command);
    }

    private void rule(String json) {
        proxy.rules().put(proxy.ruleParser().parse("r" + proxy.rules().rules().size(), BsonDocument.parse(json)));
    }

    @Test
    void aResetBeforeTheServerSeesAnInsertIsRetriedOnceByTheDriver() {
        String db = UpstreamLane.freshDatabaseName("reset");
        rule("{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['insert'], resetConnection: true}}");
        try (MongoClient client = client("retryWrites=true")) {
            client.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1));
        }
        assertEquals(2, driverStarted("insert"));
        assertEquals(2, Meters.attempts(proxy.registry(), "insert"));
        assertEquals(1, Meters.retries(proxy.registry(), "insert"));
        assertEquals(1, Meters.outcomes(proxy.registry(), "insert", "network_error"));
        assertEquals(1, Meters.outcomes(proxy.registry(), "insert", "ok"));
        assertEquals(1, Meters.faults(proxy.registry(), "resetConnection", "insert"));
        assertEquals(1, direct.getDatabase(db).getCollection("c").countDocuments());
    }

    @Test
    void aDroppedReplyLeavesTheWriteAppliedWhileTheDriverSeesANetworkError() {
        String db = UpstreamLane.freshDatabaseName("drop");
        direct.getDatabase(db).getCollection("counters").insertOne(new Document("_id", "day").append("counter", 0));
        rule("{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['update'], dropReply: true}}");
        try (MongoClient client = client("retryWrites=false")) {
            MongoCollection<Document> counters = client.getDatabase(db).getCollection("counters");
            assertThrows(MongoSocketException.class,
                    () -> counters.updateOne(eq("_id", "day"), Updates.inc("counter", 1), new UpdateOptions().upsert(true)));
        }
        assertEquals(1, driverStarted("update"));
        assertEquals(1, Meters.attempts(proxy.registry(), "update"));
        assertEquals(1, Meters.outcomes(proxy.registry(), "update", "network_error"));
        assertEquals(1, direct.getDatabase(db).getCollection("counters").find(eq("_id", "day")).first().getInteger("counter"));
    }

    @Test
    void notWritablePrimaryWithTheServersLabelIsRetriedAndANonRetryableErrorIsNot() {
        String db = UpstreamLane.freshDatabaseName("errors");
        rule("{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['insert'], error: 'NotWritablePrimary'}}");
        try (MongoClient client = client("retryWrites=true")) {
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            c.insertOne(new Document("_id", 1));
            rule("{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['insert'], errorCode: 13}}");
            MongoCommandException denied = assertThrows(MongoCommandException.class, () -> c.insertOne(new Document("_id", 2)));
            assertEquals(13, denied.getErrorCode());
        }
        assertEquals(3, driverStarted("insert"));
        assertEquals(3, Meters.attempts(proxy.registry(), "insert"));
        assertEquals(1, Meters.retries(proxy.registry(), "insert"));
        assertEquals(2, Meters.outcomes(proxy.registry(), "insert", "error"));
        assertEquals(1, direct.getDatabase(db).getCollection("c").countDocuments());
    }

    @Test
    void configureFailPointThroughTheProxyBecomesARuleAndOffRemovesIt() {
        String db = UpstreamLane.freshDatabaseName("wirefp");
        try (MongoClient client = client("retryWrites=false")) {
            Document ok = client.getDatabase("admin").runCommand(Document.parse(
                    "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2}}"));
            assertEquals(1.0, ok.get("ok", Number.class).doubleValue());
            assertEquals(1, proxy.rules().rules().size());
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            assertEquals(2, assertThrows(MongoCommandException.class, () -> c.find().first()).getErrorCode());
            client.getDatabase("admin").runCommand(Document.parse("{configureFailPoint: 'failCommand', mode: 'off'}"));
            assertEquals(0, proxy.rules().rules().size());
            c.find().first();
            MongoCommandException bad = assertThrows(MongoCommandException.class, () -> client.getDatabase("admin").runCommand(
                    Document.parse("{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 'x'}}")));
            assertEquals(2, bad.getErrorCode());
            assertEquals(true, bad.getErrorMessage().contains("data.errorCode"));
            assertEquals(0, proxy.rules().rules().size(), "a bad rule must leave the rules as they were");
        }
    }
}
