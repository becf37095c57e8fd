package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.UpdateOptions;
import io.blackpipe.observe.HistoryEntry;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.CommandLog;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.ScriptedMongod;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * A command at the member as a blackhole begins: its reply is held in the blackhole, and the client gives up on it.
 * The blackhole broke it as much as the command sent into it, and is counted as its fault: a CI user's eight updates
 * that failed under a blackhole counted seven (or four) blackhole faults, the rest network errors of no fault.
 */
class BlackholeHeldReplyFaultTest {

    /** A driver's upsert of a counter, under way once the member has it (its reply {@code replyMillis} late), and then a blackhole. */
    private static CompletableFuture<Void> incrementIntoABlackhole(ScriptedMongod member, ProxyServer proxy, MongoClient client,
                                                                   long replyMillis) throws InterruptedException {
        MongoCollection<Document> counters = client.getDatabase("shop").getCollection("counters");
        counters.find().first(); // a pooled connection: the update reaches the member at once
        member.delayReplies("update", replyMillis);
        CompletableFuture<Void> increment = CompletableFuture.runAsync(() -> counters.updateOne(new Document("_id", "day"),
                new Document("$inc", new Document("n", 1)), new UpdateOptions().upsert(true)));
        Await.until(Duration.ofSeconds(5), "the update at the member", () -> member.commandsReceived("update").size() == 1);
        proxy.blackhole("primary", 2500);
        return increment;
    }

    /** The updates' history, its first attempt the blackhole's network error, and each attempt that met it counted once. */
    private static List<HistoryEntry> firstMetTheBlackhole(ProxyServer proxy) {
        List<HistoryEntry> updates = proxy.history().recent().stream().filter(e -> e.command().equals("update")).toList();
        assertEquals("blackhole", updates.get(0).fault(), "the first attempt: " + updates);
        assertEquals("network_error", updates.get(0).outcome(), updates::toString);
        // a retry meets the blackhole too where it was sent before the blackhole ended (the driver's server selection decides)
        long metIt = updates.stream().filter(e -> "blackhole".equals(e.fault())).count();
        assertEquals(metIt, Meters.faults(proxy.registry(), "blackhole", "update"), "each attempt that met it, once: " + updates);
        return updates;
    }

    private static MongoClient client(ProxyServer proxy) {
        return MongoClients.create(CommandLog.withOptions(proxy.connectionString(), "retryWrites=true&socketTimeoutMS=1500"));
    }

    @Test
    void aReplyHeldInABlackholeIsTheBlackholesFault() throws Exception {
        try (ScriptedMongod member = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(member); MongoClient client = client(proxy)) {
            // its reply leaves at 800 ms, into the blackhole; the first attempt times out at 1.5 s, and is retried
            incrementIntoABlackhole(member, proxy, client, 800).get(20, TimeUnit.SECONDS);
            assertEquals(List.of(BsonDocument.parse("{_id: 'day', n: 1}")), member.documents("shop", "counters"), "applied once");
            assertEquals(2, firstMetTheBlackhole(proxy).size());
        }
    }

    /** The same where the member is slower than the client's patience: the reply had not come when the client gave up. */
    @Test
    void aCommandTheClientGaveUpOnInABlackholeIsTheBlackholesFault() throws Exception {
        try (ScriptedMongod member = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(member); MongoClient client = client(proxy)) {
            CompletableFuture<Void> increment = incrementIntoABlackhole(member, proxy, client, 2_500); // its reply after the client left
            // its retry, delayed as long, times out too: the driver gives up
            assertThrows(ExecutionException.class, () -> increment.get(20, TimeUnit.SECONDS));
            firstMetTheBlackhole(proxy);
            assertEquals(List.of(BsonDocument.parse("{_id: 'day', n: 1}")), member.documents("shop", "counters"),
                    "the write happened, though the client never heard: once");
        }
    }
}
