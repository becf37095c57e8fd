package io.blackpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.blackpipe.testing.UpstreamLane;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** FailRule's cannedReply(...): the Java API's way to the rule field, checked as the proxy checks it. */
class FailRuleCannedReplyTest {

    @Test
    void theReplyReachesTheDriverAndTheMemberNeverSeesTheCommand() {
        String db = UpstreamLane.freshDatabaseName("canned");
        try (BlackPipe blackPipe = BlackPipe.start(UpstreamLane.uri());
             MongoClient client = MongoClients.create(blackPipe.connectionString());
             MongoClient direct = UpstreamLane.directClient()) {
            BsonDocument reply = BsonDocument.parse("{ok: 1, n: 0, writeErrors: [{index: 0, code: 11000, errmsg: 'E11000 duplicate key'}]}");
            String id = blackPipe.fail("insert").times(1).cannedReply(reply);
            reply.put("ok", new org.bson.BsonInt32(0)); // the rule took a copy

            MongoCollection<Document> orders = client.getDatabase(db).getCollection("orders");
            MongoWriteException e = assertThrows(MongoWriteException.class, () -> orders.insertOne(new Document("_id", 1)));
            assertEquals(11000, e.getError().getCode());
            assertEquals(1, blackPipe.fired(id));
            assertEquals(1, blackPipe.faultsInjected("cannedReply"));
            assertEquals(0, direct.getDatabase(db).getCollection("orders").countDocuments());
            assertTrue(blackPipe.rules().get(0).contains("\"cannedReply\""), blackPipe.rules().get(0));
        }
    }

    @Test
    void aReplyTheProxyCannotSendIsRefusedAndNoRuleIsAdded() {
        try (BlackPipe blackPipe = BlackPipe.start(UpstreamLane.uri())) {
            IllegalArgumentException noOk = assertThrows(IllegalArgumentException.class,
                    () -> blackPipe.fail("find").cannedReply(BsonDocument.parse("{n: 1}")));
            assertEquals("cannedReply(): the reply needs a numeric ok (1, or 0 with code, codeName and errmsg), got {\"n\": 1}", noOk.getMessage());
            IllegalArgumentException none = assertThrows(IllegalArgumentException.class, () -> blackPipe.fail("find").cannedReply(null));
            assertEquals("cannedReply(): the reply: required, got null", none.getMessage());
            IllegalArgumentException onHello = assertThrows(IllegalArgumentException.class,
                    () -> blackPipe.fail("hello").cannedReply(BsonDocument.parse("{ok: 1}")));
            assertTrue(onHello.getMessage().contains("hello and isMaster"), onHello.getMessage());
            assertEquals(0, blackPipe.rules().size());
        }
    }
}
