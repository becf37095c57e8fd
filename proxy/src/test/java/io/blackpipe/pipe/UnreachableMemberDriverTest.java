package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.TcpTap;
import io.blackpipe.testing.UpstreamLane;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * What the log says of a member the proxy cannot reach, then can again, and of a member that resets a connection, with the
 * real driver through the proxy to the lane's node behind a TCP relay: the relay closed (its port refuses), then opened
 * again on the same port; or its connections reset (RST).
 */
class UnreachableMemberDriverTest {
    private static final Duration WAIT = Duration.ofSeconds(20);

    private static String node() {
        BsonDocument hello = UpstreamLane.directHello();
        return hello.isString("primary") ? hello.getString("primary").getValue() : hello.getString("me").getValue();
    }

    private static MongoClient quickToNotice(ProxyServer proxy) {
        return MongoClients.create(MongoClientSettings.builder().applyConnectionString(new ConnectionString(proxy.connectionString()))
                .applyToServerSettings(server -> server.heartbeatFrequency(500, TimeUnit.MILLISECONDS))
                .applyToClusterSettings(cluster -> cluster.serverSelectionTimeout(500, TimeUnit.MILLISECONDS))
                .applyToConnectionPoolSettings(pool -> pool.maxSize(1)).build());
    }

    /**
     * Each client connection to a member that refuses the proxy's dial was an INFO line of its own (26 in 12 s with one
     * driver), and nothing said when it answered again: now the first is a warning, the rest a line a second at most,
     * counting them, and the member's return is one line with the count and how long it was gone.
     */
    @Test
    void aMemberThatRefusesIsOneWarningThenALineASecondThenOneLineWhenItIsBack() throws Exception {
        String node = node();
        String host = node.substring(0, node.lastIndexOf(':'));
        int nodePort = Integer.parseInt(node.substring(node.lastIndexOf(':') + 1));
        String db = UpstreamLane.freshDatabaseName("unreachable");
        TcpTap relay = new TcpTap(host, nodePort);
        int port = relay.port();
        String dialled = "upstream 127.0.0.1:" + port + " ";
        try (LogCapture log = LogCapture.start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.directlyTo(UpstreamLane.uri(), "127.0.0.1:" + port)));
             MongoClient client = quickToNotice(proxy)) {
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            c.insertOne(new Document("_id", 1));

            long downAt = System.nanoTime(); // before the close, which waits for the relay's accepting thread: a dial may fail meanwhile
            relay.close(); // its connections close, and its port refuses: the driver's monitor dials again every 500 ms
            String first = log.awaitContaining(WAIT, dialled + "unreachable for client");
            assertTrue(log.messagesAt(Level.WARNING).contains(first), "the first refusal is a warning: " + first);
            assertTrue(first.matches(".* unreachable for client 127\\.0\\.0\\.1:\\d+: .*Connection refused.*"), first);
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
            while (System.nanoTime() < until) { // the app's tries, refused as its monitor's are
                try {
                    c.insertOne(new Document("_id", 99));
                } catch (MongoException expected) {
                    Thread.sleep(100);
                }
            }

            relay = new TcpTap(host, nodePort, port);
            Await.until(WAIT, "the driver's insert through the member back", () -> {
                try {
                    c.insertOne(new Document("_id", 2));
                    return true;
                } catch (MongoException notYet) {
                    return false;
                }
            });
            String member = proxy.members().get(0).upstream().toString();
            String back = log.awaitContaining(WAIT, "member " + member + " reachable again after");
            double downSeconds = (System.nanoTime() - downAt) / 1e9;
            Matcher said = Pattern.compile("member \\S+ reachable again after (\\d+) refused connections over (\\d+\\.\\d) s").matcher(back);
            assertTrue(said.matches(), back);
            long refused = Long.parseLong(said.group(1));
            List<String> lines = log.messages().stream().filter(m -> m.startsWith(dialled)).toList();
            assertTrue(refused > lines.size(), "every refusal counted, not every one said: " + refused + " refused, " + lines.size()
                    + " lines\n" + String.join("\n", lines));
            assertTrue(lines.size() <= 2 + downSeconds, "a warning, then a line a second at most: " + lines.size() + " lines in "
                    + downSeconds + " s\n" + String.join("\n", lines));
            assertTrue(lines.stream().skip(1).allMatch(m -> m.matches(Pattern.quote(dialled) + "still unreachable: \\d+ client"
                    + " connections? closed so since the last such line, \\d+ in \\d+\\.\\d s \\(the last for client .*\\)")),
                    String.join("\n", lines));
            assertTrue(Double.parseDouble(said.group(2)) <= downSeconds, back);
            assertEquals(1, log.messages().stream().filter(m -> m.contains("reachable again")).filter(m -> m.contains(member)).count(),
                    "said once, not for each connection dialled after: " + log.messages());
        } finally {
            relay.close();
        }
    }

    /** A member's reset (RST) was "closing upstream H:P: Connection reset": the line now names the client and the connection. */
    @Test
    void aResetByTheMemberNamesTheClientAndTheConnection() throws Exception {
        String node = node();
        int nodePort = Integer.parseInt(node.substring(node.lastIndexOf(':') + 1));
        String db = UpstreamLane.freshDatabaseName("memberreset");
        try (TcpTap relay = new TcpTap(node.substring(0, node.lastIndexOf(':')), nodePort);
             LogCapture log = LogCapture.start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.directlyTo(UpstreamLane.uri(), "127.0.0.1:" + relay.port())));
             MongoClient client = quickToNotice(proxy)) {
            client.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1));
            List<OpenConnection> open = OpenConnection.of(proxy);
            relay.resetConnections();
            String member = proxy.members().get(0).upstream().toString();
            String line = log.awaitContaining(WAIT, "closing upstream " + member + " for client");
            Matcher said = Pattern.compile("closing upstream " + Pattern.quote(member) + " for client (127\\.0\\.0\\.1:\\d+)"
                    + " \\(connection (\\d+)\\): Connection reset.*").matcher(line);
            assertTrue(said.matches(), line);
            assertTrue(open.stream().anyMatch(c -> c.client().equals(said.group(1)) && c.id() == Long.parseLong(said.group(2))),
                    "the client and id are those `connections list` showed: " + open + "\n" + line);
        }
    }
}
