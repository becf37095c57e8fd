package io.blackpipe.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.blackpipe.observe.HistoryEntry;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.UpstreamLane;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Iterator;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** GET /api/v1/history?follow=true streams each application command as it completes. */
class HistoryStreamTest {
    /** GET /api/v1/history?follow=true, answered 200. */
    private static HttpResponse<Stream<String>> follow(AdminServer admin) throws Exception {
        HttpResponse<Stream<String>> stream = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + admin.port() + "/api/v1/history?follow=true"))
                        .timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofLines());
        assertEquals(200, stream.statusCode());
        return stream;
    }

    @Test
    void aFollowingClientReceivesEachCommandAsItHappens() throws Exception {
        String db = UpstreamLane.freshDatabaseName("follow");
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()));
             AdminServer admin = AdminServer.start(proxy, "127.0.0.1", 0)) {
            HttpResponse<Stream<String>> stream = follow(admin);
            assertEquals("application/x-ndjson", stream.headers().firstValue("content-type").orElse(""));
            Iterator<String> lines = stream.body().iterator();
            try (MongoClient client = MongoClients.create(proxy.connectionString() + "&socketTimeoutMS=20000")) {
                client.getDatabase(db).getCollection("c").insertOne(new Document("_id", "streamed"));
            }
            // The stream stays open: read lines until the insert shows up (or give up after a while).
            Document insert = CompletableFuture.supplyAsync(() -> {
                while (lines.hasNext()) {
                    Document line = Document.parse(lines.next());
                    if (line.getString("command").equals("insert")) {
                        return line;
                    }
                }
                return null;
            }).get(20, TimeUnit.SECONDS);
            assertEquals(db + ".c", insert.getString("ns"));
            assertEquals("ok", insert.getString("type"));
            assertTrue(!Instant.parse(insert.getString("invoke")).isAfter(Instant.parse(insert.getString("complete"))));
            stream.body().close();
        }
    }

    @Test
    void aFollowingClientFirstReceivesTheEntriesSoFarThenTheNewOnesInOrder() throws Exception {
        String db = UpstreamLane.freshDatabaseName("follow_backlog");
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()));
             AdminServer admin = AdminServer.start(proxy, "127.0.0.1", 0);
             MongoClient client = MongoClients.create(proxy.connectionString() + "&socketTimeoutMS=20000")) {
            client.getDatabase(db).getCollection("c").insertOne(new Document("_id", "before"));
            HttpResponse<Stream<String>> stream = follow(admin);
            Iterator<String> lines = stream.body().iterator();
            client.getDatabase(db).getCollection("c").deleteOne(new Document("_id", "before"));
            // the insert happened before the client followed, the delete after: both arrive, in that order
            java.util.List<String> commands = CompletableFuture.supplyAsync(() -> {
                java.util.List<String> seen = new java.util.ArrayList<>();
                while (lines.hasNext()) {
                    Document line = Document.parse(lines.next());
                    if ((db + ".c").equals(line.getString("ns"))) {
                        seen.add(line.getString("command"));
                        if (line.getString("command").equals("delete")) {
                            return seen;
                        }
                    }
                }
                return seen;
            }).get(20, TimeUnit.SECONDS);
            assertEquals(java.util.List.of("insert", "delete"), commands);
            stream.body().close();
        }
    }
    @Test
    void aBurstOfCommandsFromManyThreadsArrivesWhole() throws Exception {
        String db = UpstreamLane.freshDatabaseName("follow_burst");
        int threads = 4;
        int perThread = 50;
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()));
             AdminServer admin = AdminServer.start(proxy, "127.0.0.1", 0);
             MongoClient client = MongoClients.create(proxy.connectionString() + "&socketTimeoutMS=20000")) {
            HttpResponse<Stream<String>> stream = follow(admin);
            Iterator<String> lines = stream.body().iterator();
            CompletableFuture<java.util.List<Document>> received = CompletableFuture.supplyAsync(() -> {
                java.util.List<Document> seen = new java.util.ArrayList<>();
                while (seen.size() < threads * perThread && lines.hasNext()) {
                    Document line = Document.parse(lines.next());
                    if ((db + ".c").equals(line.getString("ns"))) {
                        seen.add(line);
                    }
                }
                return seen;
            });
            java.util.List<Thread> writers = new java.util.ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int writer = t;
                Thread thread = new Thread(() -> {
                    for (int i = 0; i < perThread; i++) {
                        client.getDatabase(db).getCollection("c").insertOne(new Document("_id", writer * 1000 + i));
                    }
                });
                writers.add(thread);
                thread.start();
            }
            for (Thread thread : writers) {
                thread.join();
            }
            java.util.List<Document> seen = received.get(20, TimeUnit.SECONDS);
            assertEquals(threads * perThread, seen.size(), "every insert streamed");
            assertTrue(seen.stream().allMatch(line -> line.getString("command").equals("insert")
                    && line.getString("type").equals("ok")), "only the inserts, each ok: " + seen);
            try (MongoClient direct = UpstreamLane.directClient()) {
                assertEquals(threads * perThread, direct.getDatabase(db).getCollection("c").countDocuments(),
                        "one line per insert the server holds");
            }
            stream.body().close();
        }
    }

    /** Inserts one document through {@code proxy}, connects {@code follower} (a small receive buffer) to the history's stream, and returns the insert's entry. */
    private static HistoryEntry followAfterOneInsert(ProxyServer proxy, AdminServer admin, Socket follower, String db) throws IOException {
        try (MongoClient client = MongoClients.create(proxy.connectionString())) {
            client.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1));
        }
        HistoryEntry real = proxy.history().recent().get(proxy.history().recent().size() - 1);
        follower.setReceiveBufferSize(64 * 1024);
        follower.connect(new InetSocketAddress("127.0.0.1", admin.port()), 5_000);
        follower.getOutputStream().write("GET /api/v1/history?follow=true HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        return real;
    }

    /**
     * A follower that stops reading (a paused `history --follow | less`) gets a last line saying it fell behind, and
     * its stream ends, once more than {@link HistoryStream#MAX_BEHIND_BYTES} wait for it. Before, everything recorded
     * meanwhile queued for it in the proxy's memory, for as long as the traffic ran.
     */
    @Test
    void aFollowerThatStopsReadingIsCutOffOnceItFallsTooFarBehind() throws Exception {
        String db = UpstreamLane.freshDatabaseName("follow_behind");
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()));
             AdminServer admin = AdminServer.start(proxy, "127.0.0.1", 0);
             Socket follower = new Socket()) {
            HistoryEntry real = followAfterOneInsert(proxy, admin, follower, db);
            follower.setSoTimeout(5_000);
            assertEquals("HTTP/1.1 200", new String(follower.getInputStream().readNBytes(12), StandardCharsets.US_ASCII),
                    "the stream began; from here on the follower reads nothing");
            long enough = 3 * HistoryStream.MAX_BEHIND_BYTES / real.toJson().length() + 20_000; // past the sockets' buffers too
            for (long i = 0; i < enough; i++) {
                proxy.history().record(real);
            }
            Await.until(Duration.ofSeconds(20), "the follower to be cut off", () -> admin.followersCutOff() == 1);
            for (int i = 0; i < 20_000; i++) { // recorded after the cut: nothing more is queued for it, not even another last line
                proxy.history().record(real);
            }
            follower.setSoTimeout(30_000);
            byte[] all = follower.getInputStream().readAllBytes(); // to the end of the stream: a timeout if it never ends
            String text = new String(all, StandardCharsets.UTF_8);
            assertTrue(text.contains("{\"error\": \"this follower fell more than 8 MiB behind, and its stream ends;"),
                    () -> "the last lines: " + text.substring(Math.max(0, text.length() - 500)));
            assertTrue(text.length() < enough * real.toJson().length(), "it did not get everything that was recorded");
            assertEquals(1, text.split("fell more than", -1).length - 1, "one last line, however much was recorded after it");
        }
    }

    /**
     * A follower cut off that never reads again loses its connection after the last line's grace, and what waits for
     * it goes with it. Before, the close waited for that last line to be taken: for good, from one that never reads.
     */
    @Test
    void aFollowerCutOffThatNeverReadsIsClosed() throws Exception {
        String db = UpstreamLane.freshDatabaseName("follow_never");
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()));
             AdminServer admin = AdminServer.start(proxy, "127.0.0.1", 0);
             Socket follower = new Socket()) {
            HistoryEntry real = followAfterOneInsert(proxy, admin, follower, db);
            follower.setSoTimeout(5_000);
            assertEquals("HTTP/1.1 200", new String(follower.getInputStream().readNBytes(12), StandardCharsets.US_ASCII),
                    "the stream began; from here on the follower reads nothing");
            long enough = 3 * HistoryStream.MAX_BEHIND_BYTES / real.toJson().length() + 20_000;
            for (long i = 0; i < enough; i++) {
                proxy.history().record(real);
            }
            Await.until(Duration.ofSeconds(20), "the follower to be cut off", () -> admin.followersCutOff() == 1);
            long cut = System.nanoTime();
            Await.until(Duration.ofSeconds(30), "the follower that never reads to be closed",
                    () -> admin.openConnections() == 0);
            long closedAfter = (System.nanoTime() - cut) / 1_000_000;
            assertTrue(closedAfter >= 8_000, "closed after its last line's grace of 10 s, not before: " + closedAfter + " ms");
        }
    }
}
