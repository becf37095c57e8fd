package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.model.UpdateOptions;
import io.blackpipe.testing.CommandLog;
import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.RawUpstream;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.ScriptedMongodWire;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
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
    private static final String UNANSWERED = "did not answer blackpipe's question about how it differs from mongod";

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

    /**
     * A member that answered hello and let a question wait, and whose second connection fails: the start goes on with
     * what the first asking found (the failed second asking failed the start: no upstream seed answered hello).
     */
    @Test
    void aMemberThatCannotBeAskedAgainIsProxiedAsFarAsItAnswered() throws Exception {
        try (LogCapture log = LogCapture.start();
             RawUpstream member = new RawUpstream((socket, index) -> {
                 if (index == 0) {
                     answerAllButEndSessions(socket);
                 } else {
                     socket.close();
                 }
             });
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded("mongodb://" + member.address() + "/?directConnection=true"))) {
            log.await(m -> m.startsWith("member " + member.address() + " " + UNANSWERED + ": endSessions (no reply within 1000 ms),"
                    + " then, asked again, no answer"), Duration.ofSeconds(5), "saying the member could not be asked again");
            assertEquals(1, proxy.members().size());
        }
    }

    /** Answers every request with a standalone's hello but endSessions, which it reads and leaves unanswered. */
    private static void answerAllButEndSessions(Socket socket) throws IOException {
        InputStream in = socket.getInputStream();
        OutputStream out = socket.getOutputStream();
        byte[] request;
        int replyId = 1;
        while ((request = RawUpstream.readFrame(in)) != null) {
            BsonDocument body = ScriptedMongodWire.decodeDocument(request, 21, ScriptedMongodWire.intLE(request, 21));
            if (!body.getFirstKey().equals("endSessions")) {
                out.write(ScriptedMongodWire.buildOpMsg(replyId++, ScriptedMongodWire.requestId(request), 0,
                        RawUpstream.standaloneHello(), null));
                out.flush();
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
                log.await(m -> m.startsWith("member " + member.address() + " " + UNANSWERED + ": endSessions (no reply within 1000 ms),"
                        + " then, asked again, endSessions (no reply within 5000 ms); it is taken to differ only as far as it answered"), Duration.ofSeconds(5),
                        "saying the member did not answer");
                assertEquals(1, log.messages().stream().filter(m -> m.contains(UNANSWERED)).count(), "said once");
                client.getDatabase("shop").getCollection("counters").insertOne(new Document("_id", "day"));
                assertEquals(List.of(BsonDocument.parse("{_id: 'day'}")), member.documents("shop", "counters"), "proxied");
            }
        }
    }
}
