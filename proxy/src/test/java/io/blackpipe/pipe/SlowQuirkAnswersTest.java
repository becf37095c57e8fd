package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.model.UpdateOptions;
import io.blackpipe.testing.CommandLog;
import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.ScriptedMongod;
import java.time.Duration;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * The questions a start asks a member about how it differs from mongod wait a second each. jongodb busy with another
 * client's large insert took longer, and the start took it for a mongod without a word: a retried update whose reply a
 * rule lost was applied twice. A member slow to answer is asked again, waiting the connect timeout (5 s here); one
 * that answers neither time is said.
 */
class SlowQuirkAnswersTest {
    private static final String SAID_RETRIES = "runs a retried write again";
    private static final String UNANSWERED = "did not answer blackpipe's question about how it differs from mongod, asked twice";

    @Test
    void aMemberSlowToAnswerIsAskedAgainAndItsRetriesAreAnsweredFromTheFirstRun() throws Exception {
        try (ScriptedMongod member = ScriptedMongod.builder().withoutEndSessions().reappliesRetriedWrites().start();
             LogCapture log = LogCapture.start()) {
            member.delayReplies("endSessions", 1_500); // past the first second, within the connect timeout
            try (ProxyServer proxy = ScriptedProxy.start(member)) {
                log.await(m -> m.startsWith("member " + member.address() + " " + SAID_RETRIES), Duration.ofSeconds(5), "noting the member");
                assertTrue(log.messages().stream().noneMatch(m -> m.contains(UNANSWERED)), () -> String.join("\n", log.messages()));
                proxy.rules().put(proxy.ruleParser().parse("lost", BsonDocument.parse("{configureFailPoint: 'failCommand',"
                        + " mode: {times: 1}, data: {failCommands: ['update'], dropReply: true}}")));
                try (MongoClient client = MongoClients.create(CommandLog.withOptions(proxy.connectionString(), "retryWrites=true"))) {
                    client.getDatabase("shop").getCollection("counters").updateOne(new Document("_id", "day"),
                            new Document("$inc", new Document("n", 1)), new UpdateOptions().upsert(true));
                }
                assertEquals(List.of(BsonDocument.parse("{_id: 'day', n: 1}")), member.documents("shop", "counters"), "applied once");
            }
        }
    }

    @Test
    void aMemberThatAnswersNeitherTimeIsSaidAndProxiedAllTheSame() throws Exception {
        try (ScriptedMongod member = ScriptedMongod.builder().withoutEndSessions().reappliesRetriedWrites().start();
             LogCapture log = LogCapture.start()) {
            member.delayReplies("endSessions", 6_000); // past the connect timeout too
            try (ProxyServer proxy = ScriptedProxy.start(member);
                 MongoClient client = MongoClients.create(CommandLog.withOptions(proxy.connectionString(), "retryWrites=true"))) {
                log.await(m -> m.startsWith("member " + member.address() + " " + UNANSWERED + ": endSessions (no reply within 5000 ms);"
                        + " it is taken to differ in no way it did not say"), Duration.ofSeconds(5), "saying the member did not answer");
                assertEquals(1, log.messages().stream().filter(m -> m.contains(UNANSWERED)).count(), "said once");
                client.getDatabase("shop").getCollection("counters").insertOne(new Document("_id", "day"));
                assertEquals(List.of(BsonDocument.parse("{_id: 'day'}")), member.documents("shop", "counters"), "proxied");
            }
        }
    }
}
