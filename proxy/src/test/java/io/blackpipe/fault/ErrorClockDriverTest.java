package io.blackpipe.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.Closing;
import io.blackpipe.testing.CommandLog;
import io.blackpipe.testing.ScriptedMongod;
import java.time.Duration;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonTimestamp;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A replica-set member's mongod puts its $clusterTime and operationTime on every reply, a failCommand error's too, after
 * the body; a standalone puts neither. The proxy's errors carried neither, so an app reading the error (or a driver
 * gossiping the cluster time) saw a reply no member sends. Now they carry the member's clock as its hello last said it.
 * Runs against a {@link ScriptedMongod}, whose replies carry the clock as mongod's do (jongodb's hello may not).
 */
class ErrorClockDriverTest {
    private ScriptedMongod upstream;
    private ProxyServer proxy;
    private MongoClient client;

    private MongoCommandException failedFind(ScriptedMongod.Builder member, String connectionOptions) throws Exception {
        upstream = member.start();
        proxy = ProxyServer.start(ProxyConfig.embedded(upstream.uri(connectionOptions)));
        client = MongoClients.create(new CommandLog().driverOn(CommandLog.withOptions(proxy.connectionString(),
                "retryReads=false&socketTimeoutMS=5000&heartbeatFrequencyMS=500")).build());
        MongoCollection<Document> c = client.getDatabase("clock").getCollection("c");
        upstream.insertDocuments("clock", "c", List.of(new BsonDocument("_id", new BsonInt32(1))));
        proxy.rules().put(proxy.ruleParser().parse("clock", BsonDocument.parse(
                "{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['find'], errorCode: 11600}}")));
        MongoCommandException error = assertThrows(MongoCommandException.class, () -> c.find().first());
        assertEquals(11600, error.getErrorCode());
        assertEquals(1, c.countDocuments(), "the member still holds its document, and answers the next find");
        return error;
    }

    @AfterEach
    void stop() throws Exception {
        Closing.inTurn(client, proxy, upstream);
    }

    @Test
    void aReplicaSetMembersErrorEndsWithItsClusterTimeAndOperationTime() throws Exception {
        BsonDocument reply = failedFind(ScriptedMongod.builder(), "replicaSet=" + ScriptedMongod.SET_NAME).getResponse();
        List<String> fields = List.copyOf(reply.keySet());
        assertEquals(List.of("$clusterTime", "operationTime"), fields.subList(fields.size() - 2, fields.size()),
                "last, as mongod appends them: " + reply.toJson());
        BsonTimestamp clusterTime = reply.getDocument("$clusterTime").getTimestamp("clusterTime");
        BsonTimestamp operationTime = reply.getTimestamp("operationTime");
        assertTrue(reply.getDocument("$clusterTime").isDocument("signature"), "signed as the member signed it: " + reply.toJson());
        assertTrue(operationTime.compareTo(clusterTime) <= 0, "an operationTime never past the cluster time: " + reply.toJson());
        assertTrue(clusterTime.compareTo(upstream.clusterTime()) <= 0, "a time the member had: " + reply.toJson());
        assertEquals(upstream.clusterTime().getTime(), clusterTime.getTime(), "this member's clock: " + reply.toJson());

        // the member's clock moves with its writes; its next hellos (a heartbeat's) carry it, and so do errors after them
        MongoCollection<Document> c = client.getDatabase("clock").getCollection("c");
        for (int id = 2; id <= 4; id++) {
            c.insertOne(new Document("_id", id));
        }
        BsonTimestamp moved = upstream.clusterTime();
        assertTrue(moved.compareTo(clusterTime) > 0, "the writes moved the member's clock");
        proxy.rules().put(proxy.ruleParser().parse("clock", BsonDocument.parse(
                "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 11600}}")));
        Await.until(Duration.ofSeconds(10), "an error with the member's latest clock", () -> moved.equals(
                assertThrows(MongoCommandException.class, () -> c.find().first()).getResponse().getTimestamp("operationTime")));
    }

    @Test
    void aStandalonesErrorHasNoClock() throws Exception {
        BsonDocument reply = failedFind(ScriptedMongod.builder().standalone(), "directConnection=true").getResponse();
        assertFalse(reply.containsKey("$clusterTime"), reply.toJson());
        assertFalse(reply.containsKey("operationTime"), reply.toJson());
    }
}
