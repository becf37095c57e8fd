package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import io.blackpipe.BlackPipe;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.topology.Member;
import io.netty.channel.EventLoop;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * An app's configureFailPoint is parsed into a rule on its connection's event loop. Reading a scenario holds the rule
 * parser for as long as the read takes (a few hundred ms for a 1 MiB file), so its rules take their seeded draws
 * together; a configureFailPoint meeting that read waited for it on the event loop, and so did every connection on
 * that loop. Now its answer waits, as its connection's next requests do, and the loop goes on.
 */
class FailPointBehindAScenarioReadTest {

    @Test
    void aConfigureFailPointMeetingAScenarioReadWaitsWithoutHoldingItsEventLoop() throws Exception {
        String db = UpstreamLane.freshDatabaseName("failpoint_behind_read");
        CountDownLatch configureSent = new CountDownLatch(1);
        CommandListener sent = new CommandListener() {
            @Override
            public void commandStarted(CommandStartedEvent event) {
                if (event.getCommandName().equals("configureFailPoint")) {
                    configureSent.countDown();
                }
            }
        };
        ExecutorService threads = Executors.newCachedThreadPool();
        try (BlackPipe blackpipe = BlackPipe.start(UpstreamLane.uri());
             MongoClient app = client(blackpipe, sent);
             MongoClient other = client(blackpipe, null)) {
            ProxyServer proxy = blackpipe.server();
            MongoDatabase admin = app.getDatabase("admin");
            MongoCollection<Document> orders = app.getDatabase(db).getCollection("orders");
            admin.runCommand(new Document("ping", 1));
            other.getDatabase("admin").runCommand(new Document("ping", 1));

            CompletableFuture<Document> configured;
            try (HeldParser read = HeldParser.hold(proxy, threads)) {
                configured = CompletableFuture.supplyAsync(() -> admin.runCommand(Document.parse(
                        "{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['insert'], errorCode: 2}}")), threads);
                assertTrue(configureSent.await(10, TimeUnit.SECONDS), "the driver sent the configureFailPoint");
                Thread.sleep(300); // across loopback to the proxy, and to its event loop

                for (EventLoop loop : eventLoops(proxy)) {
                    assertTrue(loop.submit(() -> { }).await(2, TimeUnit.SECONDS),
                            "every event loop goes on while the parser reads, the configureFailPoint's own too");
                }
                assertEquals(1.0, other.getDatabase(db).runCommand(new Document("ping", 1)).get("ok", Number.class).doubleValue(),
                        "another app's command is answered");
                assertFalse(configured.isDone(), "the configureFailPoint's answer waits for the read: its rule's draws come after");
            }
            assertEquals(Document.parse("{count: 0, ok: 1.0}"), configured.get(10, TimeUnit.SECONDS));

            MongoCommandException failed = assertThrows(MongoCommandException.class, () -> orders.insertOne(new Document("_id", 1)));
            assertEquals(2, failed.getErrorCode(), "the failpoint is set once the read is over");
            orders.insertOne(new Document("_id", 1));
            assertEquals(1, proxy.members().stream().mapToLong(member -> proxy.rules().fired(
                    FailPointCommand.ruleId(member.advertised().toString()))).sum(), "the failpoint fired once, on the member it was set on");

            CompletableFuture<Throwable> refused;
            try (HeldParser read = HeldParser.hold(proxy, threads)) {
                refused = CompletableFuture.supplyAsync(() -> assertThrows(MongoCommandException.class, () -> admin.runCommand(
                        Document.parse("{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: 'insert'}}"))), threads);
                Thread.sleep(300);
                assertFalse(refused.isDone(), "a rule the parser refuses is refused once the read is over");
            }
            MongoCommandException badValue = (MongoCommandException) refused.get(10, TimeUnit.SECONDS);
            assertEquals(2, badValue.getErrorCode(), badValue.getMessage());
            assertTrue(badValue.getErrorMessage().contains("failCommands"), badValue.getErrorMessage());
            orders.insertOne(new Document("_id", 2)); // the refused rule set nothing, and its connection is still in use
        } finally {
            threads.shutdownNow();
        }
        try (MongoClient direct = UpstreamLane.directClient()) {
            assertEquals(2, direct.getDatabase(db).getCollection("orders").countDocuments(), "the server holds the two orders");
        }
    }

    private static MongoClient client(BlackPipe blackpipe, CommandListener listener) {
        MongoClientSettings.Builder settings = MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(blackpipe.connectionString()))
                .retryWrites(false);
        if (listener != null) {
            settings.addCommandListener(listener);
        }
        return MongoClients.create(settings.build());
    }

    private static Set<EventLoop> eventLoops(ProxyServer proxy) {
        Set<EventLoop> loops = new HashSet<>();
        for (Member member : proxy.members()) {
            loops.addAll(proxy.listener(member.upstream()).connections().eventLoops());
        }
        return loops;
    }

    /** The rule parser held by another thread, as reading a scenario holds it, until closed. */
    private static final class HeldParser implements AutoCloseable {
        private final CountDownLatch release = new CountDownLatch(1);
        private final CompletableFuture<Void> holding;

        private HeldParser(ProxyServer proxy, ExecutorService threads) throws InterruptedException {
            CountDownLatch held = new CountDownLatch(1);
            holding = CompletableFuture.runAsync(() -> proxy.ruleParser().parseTogether(() -> {
                held.countDown();
                try {
                    return release.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }), threads);
            assertTrue(held.await(10, TimeUnit.SECONDS), "the parser is held");
        }

        static HeldParser hold(ProxyServer proxy, ExecutorService threads) throws InterruptedException {
            return new HeldParser(proxy, threads);
        }

        @Override
        public void close() throws Exception {
            release.countDown();
            holding.get(10, TimeUnit.SECONDS);
        }
    }
}
