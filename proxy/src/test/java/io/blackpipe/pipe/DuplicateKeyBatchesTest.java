package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoSocketReadTimeoutException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.CommandLog;
import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.ScriptedMongod;
import java.time.Duration;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * A batch insert that meets a duplicate key at a member that applies none of such a batch (jongodb; here a scripted
 * member built so) is inserted again as mongod would have applied it (see DuplicateKeyBatches): also when its client
 * left before the member answered, as mongod applies a batch whose client went away; and when inserting it again
 * fails, the member's answer passes as it came and the connection goes on.
 */
class DuplicateKeyBatchesTest {
    private static final String SAID_DUPLICATES = "answers a write's duplicate key as the command's error";
    private static final List<Document> BATCH = List.of(new Document("_id", 2), new Document("_id", 1), new Document("_id", 3));

    private static ScriptedMongod refusingMember() throws Exception {
        return ScriptedMongod.builder().withoutEndSessions().duplicateKeyAsCommandError().start();
    }

    private static MongoCollection<Document> orders(MongoClient client) {
        return client.getDatabase("shop").getCollection("orders");
    }

    @Test
    void aBatchWhoseClientLeftBeforeItsDuplicateKeyCameIsInsertedAsMongodWouldHave() throws Exception {
        try (ScriptedMongod member = refusingMember();
             LogCapture log = LogCapture.start();
             ProxyServer proxy = ScriptedProxy.start(member);
             MongoClient client = MongoClients.create(CommandLog.withOptions(proxy.connectionString(),
                     "retryWrites=false&socketTimeoutMS=300"))) {
            log.await(m -> m.startsWith("member " + member.address() + " " + SAID_DUPLICATES), Duration.ofSeconds(5), "noting the member");
            orders(client).insertOne(new Document("_id", 1));
            int insertsBefore = member.commandsReceived("insert").size();
            int openBefore = member.openConnections();
            member.delayReplies("insert", 1000);
            assertThrows(MongoSocketReadTimeoutException.class, () -> orders(client).insertMany(BATCH), "the client gives up, and leaves");
            member.delayReplies("insert", 0); // the batch's own reply is still on its way; its parts are answered at once

            log.await(m -> m.contains("applied none of a batch insert of 3 documents into shop.orders that met a duplicate key:"
                    + " inserted them again as mongod would have (n: 1, 1 write errors)"), Duration.ofSeconds(5), "the batch inserted again");
            assertEquals(List.of(BsonDocument.parse("{_id: 1}"), BsonDocument.parse("{_id: 2}")), member.documents("shop", "orders"),
                    "the one before the duplicate, as mongod applies a batch whose client went away");
            assertEquals(insertsBefore + 4, member.commandsReceived("insert").size(),
                    () -> "the batch, then its parts [2], [1, 3] and [1]: " + member.commandsReceived("insert"));
            Await.until(Duration.ofSeconds(5), "the member's connection closed once the batch was answered",
                    () -> member.openConnections() == openBefore - 1);
            assertEquals(1, Meters.outcomes(proxy.registry(), "insert", "network_error"), "the attempt the client gave up on");
        }
    }

    @Test
    void whenInsertingTheBatchAgainFailsTheMembersAnswerPassesAsItCame() throws Exception {
        try (ScriptedMongod member = refusingMember();
             LogCapture log = LogCapture.start();
             ProxyServer proxy = ScriptedProxy.start(member);
             MongoClient client = MongoClients.create(CommandLog.withOptions(proxy.connectionString(),
                     "retryWrites=false&socketTimeoutMS=5000"))) {
            log.await(m -> m.startsWith("member " + member.address() + " " + SAID_DUPLICATES), Duration.ofSeconds(5), "noting the member");
            orders(client).insertOne(new Document("_id", 1));
            member.refuseNewConnections(true); // the proxy's own connection, to insert the batch again, is closed at once

            MongoCommandException refused = assertThrows(MongoCommandException.class, () -> orders(client).insertMany(BATCH));
            assertEquals(11000, refused.getErrorCode(), refused::getMessage);
            assertTrue(log.messages().stream().anyMatch(m -> m.contains("applied none of a batch insert of 3 documents into shop.orders"
                    + " that met a duplicate key, and inserting them again failed (")), () -> String.join("\n", log.messages()));
            assertEquals(List.of(BsonDocument.parse("{_id: 1}")), member.documents("shop", "orders"), "nothing more: the member's own answer");

            member.refuseNewConnections(false);
            // on the same connection, without a retry to hide a wait: the member's replies are read again
            orders(client).insertOne(new Document("_id", 4));
            assertEquals(List.of(BsonDocument.parse("{_id: 1}"), BsonDocument.parse("{_id: 4}")), member.documents("shop", "orders"));
            assertEquals(1, Meters.outcomes(proxy.registry(), "insert", "error"), "the batch, answered with the member's error");
        }
    }
}
