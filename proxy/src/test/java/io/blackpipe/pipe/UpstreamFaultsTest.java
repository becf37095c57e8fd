package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoException;
import com.mongodb.MongoSocketReadTimeoutException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.HeldPort;
import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.RawUpstream;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.topology.MemberAddress;
import io.blackpipe.wire.WireFixtures;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * What the upstream does to the proxy: killed and restarted mid-load, accepting and never
 * answering, answering slowly; and half-open client connections. In every case the one proxy keeps
 * serving (no restart), logs no unexpected error, and its open connections return to zero.
 */
class UpstreamFaultsTest {

    @Test
    void upstreamKilledAndRestartedMidLoadIsServedAgainByTheSameProxy() throws Exception {
        ScriptedMongod first = ScriptedMongod.start();
        int port = first.port();
        ScriptedMongod second = null;
        HeldPort down = null;
        try (LogCapture log = LogCapture.start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(first.uri()));
             MongoClient driver = client(proxy, 1000, 2000)) {
            MongoCollection<Document> collection = driver.getDatabase("restart").getCollection("c");
            collection.insertOne(new Document("_id", "warm"));
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong successes = new AtomicLong();
            AtomicLong failures = new AtomicLong();
            AtomicLong networkErrors = new AtomicLong();
            AtomicReference<Throwable> wrong = new AtomicReference<>();
            ExecutorService pool = Executors.newFixedThreadPool(8);
            List<Future<?>> workers = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                int thread = t;
                workers.add(pool.submit(() -> {
                    long n = 0;
                    while (!stop.get()) {
                        try {
                            collection.insertOne(new Document("_id", thread + "-" + n++));
                            successes.incrementAndGet();
                        } catch (MongoException e) {
                            failures.incrementAndGet();
                            if (e instanceof com.mongodb.MongoSocketException || e instanceof com.mongodb.MongoTimeoutException
                                    || e instanceof com.mongodb.MongoConnectionPoolClearedException) {
                                networkErrors.incrementAndGet();
                            }
                            sleep(20);
                        } catch (Throwable e) {
                            wrong.compareAndSet(null, e);
                        }
                    }
                }));
            }
            try {
                long before = successes.get();
                Await.until(Duration.ofSeconds(10), "inserts through the proxy", () -> successes.get() > before + 50);
                first.close(); // the upstream dies: every connection to it is gone
                down = HeldPort.again(port); // refused meanwhile, as a dead server's port, and given to no other process
                Await.until(Duration.ofSeconds(20), "the clients to see network errors while the upstream is down",
                        () -> networkErrors.get() > 0);
                Thread.sleep(500);
                down.close();
                second = ScriptedMongod.builder().port(port).start(); // back on the same port
                long resumedFrom = successes.get();
                Await.until(Duration.ofSeconds(30), () -> "inserts to succeed again after the restart (failures so far "
                        + failures.get() + ")", () -> successes.get() > resumedFrom + 50);
                ScriptedMongod restarted = second;
                assertTrue(!restarted.commandsReceived("insert").isEmpty(), "the restarted upstream must receive the inserts");
            } finally {
                stop.set(true);
                pool.shutdown();
                assertTrue(pool.awaitTermination(30, TimeUnit.SECONDS), "workers did not stop");
            }
            if (wrong.get() != null) {
                throw new AssertionError("a worker failed with something other than a driver error", wrong.get());
            }
            assertNoUnexpectedErrors(log);
        } finally {
            first.close();
            if (down != null) {
                down.close();
            }
            if (second != null) {
                second.close();
            }
        }
    }

    @Test
    void upstreamThatNeverAnswersTimesTheDriverOutAndTheProxyStaysHealthy() throws Exception {
        // Answers hellos (discovery, monitoring, handshakes) and swallows every other command.
        try (LogCapture log = LogCapture.start();
             RawUpstream upstream = new RawUpstream((socket, index) -> answer(socket, 0, false));
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded("mongodb://" + upstream.address() + "/?directConnection=true"))) {
            MemberAddress member = proxy.members().get(0).upstream();
            try (MongoClient driver = client(proxy, 500, 3000)) {
                for (int i = 0; i < 3; i++) {
                    long start = System.nanoTime();
                    assertThrows(MongoSocketReadTimeoutException.class,
                            () -> driver.getDatabase("admin").runCommand(new Document("ping", 1)));
                    long ms = (System.nanoTime() - start) / 1_000_000;
                    assertTrue(ms >= 400, "the driver's socketTimeoutMS should have run out, took " + ms + " ms");
                }
                // Healthy: another connection still gets its handshake answered through the proxy.
                try (RawClient raw = RawClient.connect(proxy.members().get(0).advertised())) {
                    byte[] reply = raw.roundTrip(WireFixtures.opMsg(77, 0, 0).body("{hello: 1, $db: 'admin'}").build());
                    assertEquals(77, WireFixtures.readLe32(reply, 8), "the hello reply answers the hello");
                }
            }
            Await.until(Duration.ofSeconds(10), () -> "the proxy to close its connections (open: " + proxy.openConnections(member) + ")",
                    () -> proxy.openConnections(member) == 0);
            assertNoUnexpectedErrors(log);
        }
    }

    @Test
    void slowUpstreamWorksJustSlowly() throws Exception {
        int delayMs = 300;
        try (LogCapture log = LogCapture.start();
             RawUpstream upstream = new RawUpstream((socket, index) -> answer(socket, delayMs, true));
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded("mongodb://" + upstream.address() + "/?directConnection=true"));
             MongoClient driver = client(proxy, 5000, 5000)) {
            driver.getDatabase("admin").runCommand(new Document("ping", 1)); // connections and handshakes done
            ExecutorService pool = Executors.newFixedThreadPool(4);
            try {
                List<Future<Long>> calls = new ArrayList<>();
                for (int i = 0; i < 8; i++) {
                    calls.add(pool.submit(() -> {
                        long start = System.nanoTime();
                        Document reply = driver.getDatabase("admin").runCommand(new Document("ping", 1));
                        assertEquals(1.0, reply.get("ok", Number.class).doubleValue());
                        return (System.nanoTime() - start) / 1_000_000;
                    }));
                }
                for (Future<Long> call : calls) {
                    long ms = call.get(30, TimeUnit.SECONDS);
                    assertTrue(ms >= delayMs - 20, "a ping through the slow upstream took only " + ms + " ms");
                }
            } finally {
                pool.shutdownNow();
            }
            assertNoUnexpectedErrors(log);
        }
    }

    @Test
    void halfOpenClientsDoNotAffectOthersAndAreCleanedUpWhenClosed() throws Exception {
        try (LogCapture log = LogCapture.start();
             ScriptedMongod upstream = ScriptedMongod.start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(upstream.uri()));
             MongoClient driver = client(proxy, 5000, 5000)) {
            MemberAddress member = proxy.members().get(0).upstream();
            MongoCollection<Document> collection = driver.getDatabase("half").getCollection("c");
            collection.insertOne(new Document("_id", -1));
            int baseline = proxy.openConnections(member);
            byte[] frame = WireFixtures.opMsg(5, 0, 0).body("{insert: 'c', documents: [{_id: 1}], $db: 'half'}").build();
            List<RawClient> halfOpen = new ArrayList<>();
            try {
                for (int i = 0; i < 20; i++) {
                    RawClient raw = RawClient.connect(proxy.members().get(0).advertised());
                    raw.send(WireFixtures.range(frame, 0, i % 2 == 0 ? 10 : frame.length / 2)); // half a frame, then silence
                    halfOpen.add(raw);
                }
                Await.until(Duration.ofSeconds(10), () -> "the half-open clients to be proxied (open: " + proxy.openConnections(member) + ")",
                        () -> proxy.openConnections(member) == baseline + 20);
                for (int i = 0; i < 50; i++) { // everyone else is unaffected
                    collection.insertOne(new Document("_id", i).append("v", "v" + i));
                    assertEquals("v" + i, collection.find(new Document("_id", i)).first().getString("v"));
                }
            } finally {
                for (RawClient raw : halfOpen) {
                    raw.close();
                }
            }
            Await.until(Duration.ofSeconds(10), () -> "the half-open connections to be cleaned up (open: "
                    + proxy.openConnections(member) + ", baseline " + baseline + ")", () -> proxy.openConnections(member) == baseline);
            String first = halfOpen.get(0).logName();
            log.awaitContaining(Duration.ofSeconds(5), first + " ", "in the middle of a message");
            assertEquals(51, upstream.documents("half", "c").size(), "none of the half frames reached the upstream");
            assertNoUnexpectedErrors(log);
        }
    }

    // ---------------------------------------------------------------- helpers

    /**
     * Answers hellos at once; answers other commands with {ok: 1} after {@code delayMs}, or never
     * when {@code answerOthers} is false.
     */
    private static void answer(Socket socket, int delayMs, boolean answerOthers) throws Exception {
        InputStream in = socket.getInputStream();
        OutputStream out = socket.getOutputStream();
        byte[] request;
        int replyId = 1;
        while ((request = RawUpstream.readFrame(in)) != null) {
            boolean hello = isHello(request);
            if (!hello && !answerOthers) {
                continue;
            }
            if (!hello) {
                Thread.sleep(delayMs);
            }
            BsonDocument body = hello ? RawUpstream.standaloneHello() : new BsonDocument("ok", new BsonDouble(1)).append("n", new BsonInt32(0));
            byte[] reply = WireFixtures.readLe32(request, 12) == WireFixtures.OP_QUERY
                    ? WireFixtures.opReply(replyId++, ScriptedMongodWire.requestId(request), 8, 0, 0, 1, WireFixtures.bson(body))
                    : ScriptedMongodWire.buildOpMsg(replyId++, ScriptedMongodWire.requestId(request), 0, body, null);
            out.write(reply);
            out.flush();
        }
    }

    private static boolean isHello(byte[] request) {
        String text = new String(request, StandardCharsets.ISO_8859_1);
        return text.contains("hello\u0000") || text.contains("isMaster\u0000") || text.contains("ismaster\u0000");
    }

    private static MongoClient client(ProxyServer proxy, int socketTimeoutMs, int serverSelectionMs) {
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(proxy.connectionString()))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(serverSelectionMs, TimeUnit.MILLISECONDS))
                .applyToSocketSettings(b -> b.readTimeout(socketTimeoutMs, TimeUnit.MILLISECONDS).connectTimeout(2, TimeUnit.SECONDS))
                .applyToServerSettings(b -> b.heartbeatFrequency(500, TimeUnit.MILLISECONDS))
                .build());
    }

    private static void assertNoUnexpectedErrors(LogCapture log) {
        List<String> unexpected = log.messages().stream().filter(m -> m.contains("unexpected error")).toList();
        assertTrue(unexpected.isEmpty(), "unhandled errors in the proxy: " + unexpected);
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
