package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.result.UpdateResult;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.CommandLog;
import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.WireSocket;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * A retried write whose first run is still at a member that would run it again (jongodb; here a
 * scripted member built so, its update replies held a while after the update ran): the retry waits
 * for that run and is answered from it, as on mongod, whose session, checked out to the run, holds
 * the retry. The first attempt's connection was cut by a reset, or given up by the client, while the
 * member ran it; the member's connection stays open until the run answered.
 */
class FirstRunAtTheMemberTest {
    private static final String SAID_RETRIES = "runs a retried write again";
    private static final Document DAY = new Document("_id", "day");
    private static final Document INCREMENT = new Document("$inc", new Document("n", 1));

    private static ScriptedMongod reapplyingMember() throws Exception {
        return ScriptedMongod.builder().withoutEndSessions().reappliesRetriedWrites().start();
    }

    private static void awaitNoted(LogCapture log, ScriptedMongod member) throws InterruptedException {
        log.await(m -> m.startsWith("member " + member.address() + " " + SAID_RETRIES), Duration.ofSeconds(5), "noting the member");
    }

    /** Increments the day's counter (upserted) on a connection already pooled, so that the update reaches the member at once. */
    private static CompletableFuture<UpdateResult> increment(MongoClient client) {
        MongoCollection<Document> counters = client.getDatabase("shop").getCollection("counters");
        counters.find().first();
        return CompletableFuture.supplyAsync(() -> counters.updateOne(DAY, INCREMENT, new UpdateOptions().upsert(true)));
    }

    private static void awaitTheRun(ScriptedMongod member, int updatesBefore) throws InterruptedException {
        Await.until(Duration.ofSeconds(5), "the update at the member", () -> member.commandsReceived("update").size() == updatesBefore + 1);
    }

    @Test
    void aRetryAfterAResetWaitsForTheRunAtTheMemberAndIsAnsweredFromIt() throws Exception {
        try (ScriptedMongod member = reapplyingMember();
             LogCapture log = LogCapture.start();
             ProxyServer proxy = ScriptedProxy.start(member);
             MongoClient client = MongoClients.create(CommandLog.withOptions(proxy.connectionString(), "retryWrites=true"))) {
            awaitNoted(log, member);
            int updatesBefore = member.commandsReceived("update").size(); // the start's probe
            member.delayReplies("update", 1500);
            CompletableFuture<UpdateResult> increment = increment(client);
            awaitTheRun(member, updatesBefore);
            assertTrue(proxy.select("primary").get(0).resetConnections() >= 1, "the update's connection reset");

            UpdateResult result = increment.get(20, TimeUnit.SECONDS);
            assertEquals("day", result.getUpsertedId().asString().getValue(), "the first run's reply, upserted id and all");
            assertEquals(List.of(BsonDocument.parse("{_id: 'day', n: 1}")), member.documents("shop", "counters"), "applied once");
            assertEquals(updatesBefore + 1, member.commandsReceived("update").size(), "the retry never reached the member");
            assertEquals(2, Meters.attempts(proxy.registry(), "update"));
            assertEquals(1, Meters.retries(proxy.registry(), "update"));
            assertEquals(1, Meters.faults(proxy.registry(), "connectionsReset", "update"), "the first attempt, cut by the reset");
            assertEquals(1, Meters.outcomes(proxy.registry(), "update", "ok"), "the retry, answered from the run");
        }
    }

    /** The client gave up on the first attempt (socketTimeoutMS) while the member still ran it: the retry waits, and is not run again. */
    @Test
    void aRetryAfterTheClientGaveUpOnASlowMemberWaitsForTheRun() throws Exception {
        try (ScriptedMongod member = reapplyingMember();
             LogCapture log = LogCapture.start();
             ProxyServer proxy = ScriptedProxy.start(member);
             MongoClient client = MongoClients.create(CommandLog.withOptions(proxy.connectionString(),
                     "retryWrites=true&socketTimeoutMS=700"))) {
            awaitNoted(log, member);
            int updatesBefore = member.commandsReceived("update").size();
            member.delayReplies("update", 1000); // the retry, sent at about 700 ms, waits about 300 ms of its own 700
            UpdateResult result = increment(client).get(20, TimeUnit.SECONDS);

            assertEquals("day", result.getUpsertedId().asString().getValue());
            assertEquals(List.of(BsonDocument.parse("{_id: 'day', n: 1}")), member.documents("shop", "counters"), "applied once");
            assertEquals(updatesBefore + 1, member.commandsReceived("update").size(), "the retry never reached the member");
            assertEquals(1, Meters.retries(proxy.registry(), "update"));
            assertEquals(1, Meters.outcomes(proxy.registry(), "update", "network_error"), "the first attempt, given up");
            assertEquals(1, Meters.outcomes(proxy.registry(), "update", "ok"));
        }
    }

    /**
     * The client left while the member ran its write: the member's connection stays until the reply comes, and then
     * closes; the same write sent again meanwhile, on another connection, waits for that reply and gets it.
     */
    @Test
    void theMembersConnectionOutlivesItsClientUntilTheRunAnswered() throws Exception {
        try (ScriptedMongod member = reapplyingMember();
             LogCapture log = LogCapture.start();
             ProxyServer proxy = ScriptedProxy.start(member)) {
            awaitNoted(log, member);
            int port = proxy.members().get(0).advertised().port();
            int updatesBefore = member.commandsReceived("update").size();
            // the start's probes have closed, but the member may not have seen it yet: one counted here would close later
            Await.until(Duration.ofSeconds(5), "the start's probe connections closed at the member", () -> member.openConnections() == 0);
            int open = member.openConnections();
            member.delayReplies("update", 1500);
            BsonDocument update = BsonDocument.parse("{update: 'counters', updates: [{q: {_id: 'day'}, u: {$inc: {n: 1}},"
                    + " upsert: true}], ordered: true, txnNumber: {$numberLong: '1'}, $db: 'shop'}")
                    .append("lsid", new BsonDocument("id", new BsonBinary(UUID.randomUUID())));
            try (WireSocket first = new WireSocket(port, 1, 5_000)) {
                first.sendMsg(0, update);
                awaitTheRun(member, updatesBefore);
            } // the client leaves, its write at the member
            Thread.sleep(300);
            assertEquals(open + 1, member.openConnections(), "the member's connection stays, without its client");
            try (WireSocket again = new WireSocket(port, 100, 5_000)) {
                int id = again.sendMsg(0, update);
                BsonDocument reply = again.readOk(id); // waits for the run
                assertEquals(1, reply.getInt32("n").getValue(), reply::toJson);
                assertEquals("day", reply.getArray("upserted").get(0).asDocument().getString("_id").getValue());
                assertEquals(updatesBefore + 1, member.commandsReceived("update").size(), "answered from the run");
                Await.until(Duration.ofSeconds(5), "the first's member connection closed", () -> member.openConnections() == open + 1);
            }
            assertEquals(List.of(BsonDocument.parse("{_id: 'day', n: 1}")), member.documents("shop", "counters"));
        }
    }
}
