package io.blackpipe.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.testing.UpstreamLane;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
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
}
