package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoServerException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.blackpipe.fault.DeploymentFaults;
import io.blackpipe.fault.Restart;
import io.blackpipe.observe.HistoryEntry;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.CommandLog;
import io.blackpipe.testing.ScriptedMongod;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * What a restart's exit does to a command the member is still running, through the Java driver: as mongod
 * interrupts the operations left when it shuts down, the command is answered InterruptedAtShutdown (with the
 * quiesce's topologyVersion), and then the connection closes. A scripted member, whose reply to a find is late,
 * keeps the command running there.
 */
class MemberRestartInterruptTest {
    @Test
    void aCommandRunningAtTheExitIsAnsweredInterruptedAtShutdown() throws Exception {
        try (ScriptedMongod member = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(member)) {
            String advertised = ScriptedProxy.advertised(proxy);
            try (MongoClient client = MongoClients.create(CommandLog.withOptions(proxy.connectionString(),
                    "retryReads=false&heartbeatFrequencyMS=500"))) {
                MongoCollection<Document> orders = client.getDatabase("shop").getCollection("orders");
                orders.insertOne(new Document("_id", 1));
                member.delayReplies("find", 5_000);
                CompletableFuture<Throwable> find = Await.failureOf(() -> orders.find().first());
                Await.until(Duration.ofSeconds(5), "the find to reach the member", () -> !member.commandsReceived("find").isEmpty());
                long sent = System.nanoTime();
                // one member, no one to step down to: it restarts all the same, as a signalled mongod does
                proxy.restart(advertised, new Restart(300, 1_000));
                MongoServerException e = assertInstanceOf(MongoServerException.class, find.get(10, TimeUnit.SECONDS));
                long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent);
                assertEquals(11600, e.getCode(), e::toString);
                assertTrue(assertInstanceOf(MongoCommandException.class, e).getResponse().isDocument("topologyVersion"),
                        "with the member's topologyVersion, as mongod's");
                assertTrue(millis >= 250 && millis < 4_000, "answered as the member exited, after its quiesce: " + millis + " ms");
            }
            HistoryEntry find = proxy.history().recent().stream().filter(h -> h.command().equals("find")).findFirst().orElseThrow();
            assertEquals("error", find.outcome());
            assertEquals(11600, find.errorCode());
            assertEquals(DeploymentFaults.RESTART, find.fault());
            // the quiesce ends once the member is down, just after the commands it ran were answered (e640dd0)
            MemberListener listener = proxy.listener(ScriptedProxy.member(proxy).upstream());
            Await.until(Duration.ofSeconds(5), "the quiesce to be over", () -> listener.quiesce() == null);
        }
    }
}
