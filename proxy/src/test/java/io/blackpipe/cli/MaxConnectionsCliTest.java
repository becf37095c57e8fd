package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.connection.ServerMonitoringMode;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.topology.MemberAddress;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * `blackpipe proxy --max-connections N`, as a user starts it, N being what a driver needs here (one
 * monitoring connection per member, one for its commands: 2 on a one-member set): with N raw
 * connections open and served, one more is closed on accept, without a reply to its hello, and the N
 * keep being served; a driver holding its N connections keeps inserting while one more connection is
 * refused, and the server holds its documents.
 */
class MaxConnectionsCliTest {
    @TempDir
    Path temp;

    private static final BsonDocument HELLO = new BsonDocument("hello", new BsonInt32(1)).append("$db", new BsonString("admin"));

    static Socket connect(MemberAddress member) throws IOException {
        Socket socket = new Socket();
        socket.connect(new InetSocketAddress(member.host(), member.port()), 30_000);
        socket.setSoTimeout(60_000);
        return socket;
    }

    /** A hello sent on {@code socket}, and its reply's body; null when the proxy closed the connection instead of replying. */
    static BsonDocument hello(Socket socket, int requestId) throws IOException {
        try {
            socket.getOutputStream().write(ScriptedMongodWire.buildOpMsg(requestId, 0, 0, HELLO, null));
            socket.getOutputStream().flush();
            byte[] reply = ScriptedMongodWire.readMessage(socket.getInputStream(), 48_000_000);
            return reply == null ? null : ScriptedMongodWire.parseOpMsg(reply).body();
        } catch (SocketException e) { // reset, or a broken pipe: closed before or as it was written
            return null;
        }
    }

    private static void assertServed(Socket socket, int requestId) throws IOException {
        BsonDocument reply = hello(socket, requestId);
        assertEquals(1.0, reply == null ? -1.0 : reply.getNumber("ok").doubleValue(), () -> "hello through the proxy: " + reply);
    }

    /** The sum of blackpipe_connections_open over the members, from /metrics. */
    static double connectionsOpen(HttpClient http, String admin) {
        try {
            String metrics = http.send(HttpRequest.newBuilder(URI.create(admin + "/metrics")).timeout(Duration.ofSeconds(30)).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            return metrics.lines().filter(l -> l.startsWith("blackpipe_connections_open{"))
                    .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Test
    void aConnectionOverTheLimitIsClosedOnAcceptWhileThoseUnderItStayServedRawOrADrivers() throws Exception {
        String db = UpstreamLane.freshDatabaseName("maxConnectionsCli");
        HttpClient http = HttpClient.newHttpClient();
        BsonDocument lane = UpstreamLane.directHello();
        int members = lane.containsKey("hosts") ? lane.getArray("hosts").size() : 1; // a standalone lane lists none
        int limit = members + 1; // the driver's monitors and its one pooled connection
        try (CliChild child = new CliChild(temp, null, Map.of(), "proxy", "--upstream", UpstreamLane.uri(), "--host", "127.0.0.1",
                "--port", "0", "--admin-port", "0", "--max-connections", String.valueOf(limit))) {
            String admin = child.awaitLine("admin: ").substring("admin: ".length()).split("\\s+")[0].replace("/metrics", "");
            String uri = child.awaitLine("connection string: ").substring("connection string: ".length()).trim();
            MemberAddress member = MemberAddress.parse(new ConnectionString(uri).getHosts().get(0));

            List<Socket> raw = new ArrayList<>();
            try {
                for (int i = 0; i < limit; i++) {
                    raw.add(connect(member));
                    assertServed(raw.get(i), 1);
                }
                try (Socket oneMore = connect(member)) {
                    assertNull(hello(oneMore, 2), "the connection over the limit must be closed, its hello unanswered");
                }
                for (Socket served : raw) {
                    assertServed(served, 3);
                }
            } finally {
                for (Socket socket : raw) {
                    socket.close();
                }
            }
            Await.until(Duration.ofSeconds(60), "the proxy to count the raw connections closed", () -> connectionsOpen(http, admin) == 0);

            try (MongoClient driver = MongoClients.create(MongoClientSettings.builder()
                    .applyConnectionString(new ConnectionString(uri))
                    // one monitoring connection (no streaming RTT connection), and one for the commands
                    .applyToServerSettings(b -> b.serverMonitoringMode(ServerMonitoringMode.POLL))
                    .applyToConnectionPoolSettings(b -> b.maxSize(1))
                    .applyToClusterSettings(b -> b.serverSelectionTimeout(30, TimeUnit.SECONDS)).build())) {
                MongoCollection<Document> collection = driver.getDatabase(db).getCollection("c");
                collection.insertOne(new Document("_id", 1));
                Await.until(Duration.ofSeconds(60), "the driver's connections", () -> connectionsOpen(http, admin) == limit);
                try (Socket oneMore = connect(member)) {
                    assertNull(hello(oneMore, 4), "a connection beyond the driver's must be closed");
                }
                collection.insertOne(new Document("_id", 2));
                assertEquals(2, collection.countDocuments(), "the driver's connections keep being served");
            }
        }
        try (MongoClient direct = UpstreamLane.directClient()) {
            assertEquals(List.of(new Document("_id", 1), new Document("_id", 2)),
                    direct.getDatabase(db).getCollection("c").find().into(new ArrayList<>()));
        }
    }
}
