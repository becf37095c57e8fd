package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.CommandLog;
import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.RawUpstream;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.testing.WireSocket;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * A request with moreToCome (a w:0 write) gets no reply from a server; jongodb answers every such
 * request all the same. Passed on, that reply would answer the client's next command
 * (the driver fails it: its responseTo is another request's), so the proxy drops it and says so once.
 */
class UnaskedReplyTest {
    private static final int MORE_TO_COME = 1 << 1;

    private static BsonDocument insert(int id) {
        return new BsonDocument("insert", new BsonString("c"))
                .append("documents", new BsonArray(List.of(new BsonDocument("_id", new BsonInt32(id)))))
                .append("writeConcern", new BsonDocument("w", new BsonInt32(0)))
                .append("$db", new BsonString("db"));
    }

    private static BsonDocument ping() {
        return new BsonDocument("ping", new BsonInt32(1)).append("$db", new BsonString("admin"));
    }

    @Test
    void aReplyToAW0WriteIsDroppedAndTheNextCommandGetsItsOwn() throws Exception {
        try (RawUpstream member = new RawUpstream((socket, index) -> RawUpstream.answerHellos(socket)); // answers every request
             LogCapture log = LogCapture.start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded("mongodb://" + member.address() + "/?directConnection=true"));
             WireSocket client = new WireSocket(proxy.members().get(0).advertised().port(), 100, 5_000)) {
            for (int round = 0; round < 3; round++) {
                client.sendMsg(MORE_TO_COME, insert(round));
                int ping = client.sendMsg(0, ping());
                client.readOk(ping); // not the member's answer to the insert
            }
            client.expectSilence(300);
            log.await(m -> m.startsWith("member " + member.address() + " answered a request that asked for no reply (moreToCome: a w:0"
                    + " write), which a server never does: its reply (ok: 1) and any more on this connection are dropped"),
                    Duration.ofSeconds(5), "saying the reply was dropped");
            assertEquals(1, log.messages().stream().filter(m -> m.contains("asked for no reply")).count(), "said once per connection");
        }
    }

    /**
     * A member that answers every request, holding its answers to w:0 writes until a request that awaits one comes:
     * so all 40 are on their way at once, as from a member slower than its client.
     */
    private static void answerInBursts(Socket socket) throws IOException {
        InputStream in = socket.getInputStream();
        OutputStream out = socket.getOutputStream();
        ByteArrayOutputStream held = new ByteArrayOutputStream();
        byte[] request;
        int replyId = 1;
        while ((request = RawUpstream.readFrame(in)) != null) {
            held.write(ScriptedMongodWire.buildOpMsg(replyId++, ScriptedMongodWire.requestId(request), 0,
                    RawUpstream.standaloneHello(), null));
            int flags = ByteBuffer.wrap(request, 16, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
            if ((flags & MORE_TO_COME) == 0) {
                held.writeTo(out);
                out.flush();
                held.reset();
            }
        }
    }

    /**
     * A member that answers w:0 writes, met with a burst of them before its first answer comes back: each of its
     * answers is dropped, and each ping gets its own reply (the last 8 were remembered, and the ninth's answer went to
     * the ping as its reply).
     */
    @Test
    void aBurstOfW0WritesHasEveryAnswerDropped() throws Exception {
        try (RawUpstream member = new RawUpstream((socket, index) -> answerInBursts(socket));
             LogCapture log = LogCapture.start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded("mongodb://" + member.address() + "/?directConnection=true"));
             WireSocket client = new WireSocket(proxy.members().get(0).advertised().port(), 100, 5_000)) {
            int id = 0;
            for (int round = 0; round < 3; round++) {
                for (int write = 0; write < 40; write++) {
                    client.sendMsg(MORE_TO_COME, insert(id++));
                }
                int ping = client.sendMsg(0, ping());
                client.readOk(ping); // its own reply, none of the inserts'
            }
            client.expectSilence(300);
            assertEquals(1, log.messages().stream().filter(m -> m.contains("asked for no reply")).count(), "said once per connection");
        }
    }

    /** Three rounds of 30 w:0 inserts (_id 0 on), each followed by a find of each key, which must get its own document; returns 90. */
    private static int burstsOfW0WritesEachFollowedByFinds(MongoCollection<Document> c, List<String> keys) {
        int written = 0;
        for (int round = 0; round < 3; round++) {
            for (int write = 0; write < 30; write++) {
                c.withWriteConcern(WriteConcern.UNACKNOWLEDGED).insertOne(new Document("_id", written++));
            }
            for (String key : keys) {
                assertEquals(List.of(new Document("_id", key)), c.find(new Document("_id", key)).into(new ArrayList<>()),
                        "round " + round + ": the find of " + key + " got its own reply");
            }
        }
        return written;
    }

    /**
     * The same with the real driver, on every lane: a scripted member that refuses w:0 and answers every request, as
     * jongodb does, slow enough (20 ms an insert) that a burst of 30 is on its way at once.
     */
    @Test
    void aFindAfterABurstOfW0WritesToAMemberThatAnswersThemGetsItsOwnDocument() throws Exception {
        try (ScriptedMongod member = ScriptedMongod.builder().refusesUnacknowledged().start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(member.uri("replicaSet=" + ScriptedMongod.SET_NAME)));
             MongoClient client = MongoClients.create(CommandLog.withOptions(proxy.connectionString(), "maxPoolSize=1"))) {
            MongoCollection<Document> c = client.getDatabase("app").getCollection("c");
            c.insertMany(List.of(new Document("_id", "A"), new Document("_id", "B")));
            member.delayReplies("insert", 20);
            burstsOfW0WritesEachFollowedByFinds(c, List.of("A", "B"));
            assertEquals(92, member.documents("app", "c").size(), "every w:0 insert landed");
        }
    }

    /**
     * The same with the real driver, on one pooled connection: a burst of w:0 inserts, then a find. On jongodb the member
     * answers every w:0 write (taken as w:1), and through `local` 10 w:0 writes before a find gave it another find's
     * document; on mongod they land unanswered.
     */
    @Test
    void aFindAfterABurstOfW0WritesGetsItsOwnDocument() throws Exception {
        String db = UpstreamLane.freshDatabaseName("unasked");
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()));
             MongoClient client = MongoClients.create(CommandLog.withOptions(proxy.connectionString(), "maxPoolSize=1&socketTimeoutMS=10000"));
             MongoClient direct = UpstreamLane.directClient()) {
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            c.insertMany(List.of(new Document("_id", "A"), new Document("_id", "B"), new Document("_id", "C")));
            int all = burstsOfW0WritesEachFollowedByFinds(c, List.of("A", "B", "C")) + 3;
            Await.until(Duration.ofSeconds(20), "the server to hold every w:0 insert",
                    () -> direct.getDatabase(db).getCollection("c").countDocuments() == all);
        }
    }

    /**
     * On jongodb (here) the w:0 insert goes as w:1 (MemberQuirksTest) and is answered all the same, the
     * answer dropped; on mongod it lands, unanswered.
     */
    @Test
    void aDriverFindsTheConnectionFitForItsNextCommandAfterAW0Write() throws Exception {
        String db = UpstreamLane.freshDatabaseName("unasked");
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()));
             MongoClient client = MongoClients.create(CommandLog.withOptions(proxy.connectionString(), "maxPoolSize=1&socketTimeoutMS=10000"));
             MongoClient direct = UpstreamLane.directClient()) {
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            c.insertOne(new Document("_id", 1));
            c.withWriteConcern(WriteConcern.UNACKNOWLEDGED).insertOne(new Document("_id", 2));
            // the one pooled connection carries the next command: its reply, not the w:0 write's, answers it
            assertEquals(List.of(new Document("_id", 1)), c.find(new Document("_id", 1)).into(new ArrayList<>()));
            Await.until(Duration.ofSeconds(10), "the server to hold both documents",
                    () -> direct.getDatabase(db).getCollection("c").countDocuments() == 2);
            assertTrue(c.countDocuments() >= 1, "the connection still serves commands");
        }
    }
}
