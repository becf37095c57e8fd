package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.HeldPort;
import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.TcpTap;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.testing.WireSocket;
import io.blackpipe.topology.Member;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * What the log says of a member the proxy cannot reach, then can again, of one that flaps, and of a member that resets a
 * connection, with the real driver (or raw connections, one dial each) through the proxy to the lane's node behind a TCP
 * relay: the relay closed (its port refuses), then opened again on the same port; or its connections reset (RST).
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
     * The first insert of a {@link #quickToNotice} client, whose 500 ms server selection a loaded machine's first
     * handshake through the proxy can outlast: tried again until it is sent (a selection timeout sent nothing).
     */
    private static void insertOnceConnected(MongoCollection<Document> c, Document document) throws InterruptedException {
        Await.until(WAIT, "the first insert through the proxy", () -> {
            try {
                c.insertOne(document);
                return true;
            } catch (MongoTimeoutException notConnectedYet) {
                return false;
            }
        });
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
        HeldPort down = null;
        try (LogCapture log = LogCapture.start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.directlyTo(UpstreamLane.uri(), "127.0.0.1:" + port)));
             MongoClient client = quickToNotice(proxy)) {
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            insertOnceConnected(c, new Document("_id", 1));

            long downAt = System.nanoTime(); // before the close, which waits for the relay's accepting thread: a dial may fail meanwhile
            relay.close(); // its connections close, and its port refuses: the driver's monitor dials again every 500 ms
            down = HeldPort.again(port); // refused meanwhile, and given to no other process: the relay comes back on it
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

            down.close();
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
            assertTrue(Double.parseDouble(said.group(2)) <= downSeconds + 0.05, back + " (said to a tenth, rounded) in " + downSeconds + " s");
            assertEquals(1, log.messages().stream().filter(m -> m.contains("reachable again")).filter(m -> m.contains(member)).count(),
                    "said once, not for each connection dialled after: " + log.messages());
        } finally {
            if (down != null) {
                down.close();
            }
            relay.close();
        }
    }

    /** The lane's node behind a relay on a port of its own, closed (the port refuses) and opened again on that port. */
    private static final class FlappingPort implements AutoCloseable {
        private final String host;
        private final int nodePort;
        private TcpTap relay;

        FlappingPort() throws Exception {
            String node = node();
            host = node.substring(0, node.lastIndexOf(':'));
            nodePort = Integer.parseInt(node.substring(node.lastIndexOf(':') + 1));
            relay = new TcpTap(host, nodePort);
        }

        int port() {
            return relay.port();
        }

        void refuse() throws Exception {
            relay.close();
        }

        void answer() throws Exception {
            relay = new TcpTap(host, nodePort, relay.port());
        }

        @Override
        public void close() throws Exception {
            relay.close();
        }
    }

    /** A raw connection to the member's listener, which the proxy dials the member for: the member refuses, so it closes. */
    private static void dialRefused(Member member) throws Exception {
        try (WireSocket socket = new WireSocket(member.advertised().port(), 1, 10_000)) {
            socket.expectClosed();
        }
    }

    /** A raw connection to the member's listener whose hello the member answers: the proxy's dial of it succeeded. */
    private static void dialAnswered(Member member) throws Exception {
        try (WireSocket socket = new WireSocket(member.advertised().port(), 1, 10_000)) {
            socket.readOk(socket.sendMsg(0, new BsonDocument("hello", new BsonInt32(1)).append("$db", new BsonString("admin"))));
        }
    }

    /** The lines about the member: by the address dialled (its refusals) or by its name (its returns). */
    private static List<String> memberLines(LogCapture log, int port, Member member) {
        return log.messages().stream().filter(m -> m.startsWith("upstream 127.0.0.1:" + port + " ")
                || m.startsWith("member " + member.upstream() + " reachable again")).toList();
    }

    private static String last(List<String> lines) {
        return lines.get(lines.size() - 1);
    }

    /**
     * A member whose port refuses some dials and answers others gave a warning and a "reachable again" line at every turn,
     * each read as a new outage. Through the proxy, each dial a raw connection's (one connection, one dial): one warning,
     * the first return at once, the turns counted; and with no dial after the last turn, the last line says within about
     * a second that the member is down, then, after one answered dial, that it is up.
     */
    @Test
    void aFlappingMemberIsOneOutageWhoseLastLineIsTrueWithNoFurtherDial() throws Exception {
        try (FlappingPort port = new FlappingPort();
             LogCapture log = LogCapture.start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.directlyTo(UpstreamLane.uri(), "127.0.0.1:" + port.port())))) {
            Member member = proxy.members().get(0);
            long start = System.nanoTime();
            for (int turn = 0; turn < 5; turn++) {
                port.refuse();
                dialRefused(member);
                port.answer();
                dialAnswered(member);
            }
            port.refuse();
            dialRefused(member); // down for good: nobody dials it again
            String down = log.await(m -> m.startsWith("upstream 127.0.0.1:" + port.port() + " unreachable, flapping: ")
                    && m.contains("; 5 returns and 6 refused connections in "), WAIT, "saying the member down, with every turn counted");
            List<String> lines = memberLines(log, port.port(), member);
            assertEquals(down, last(lines), "the last line says it is down: " + lines);
            assertEquals(1, lines.stream().filter(m -> m.contains(" unreachable for client ")).count(), "one outage, one warning: " + lines);
            assertTrue(log.messagesAt(Level.WARNING).contains(lines.get(0)), lines.get(0));
            assertEquals(1, lines.stream().filter(m -> m.matches("member \\S+ reachable again after 1 refused connection over \\d+\\.\\d s"))
                    .count(), "its first return said at once, as after any outage: " + lines);
            double seconds = (System.nanoTime() - start) / 1e9;
            assertTrue(lines.size() <= 3 + seconds, "the warning, the first return, then a line a second: " + lines.size() + " lines in "
                    + seconds + " s\n" + String.join("\n", lines));

            port.answer();
            dialAnswered(member); // up for good
            String up = log.await(m -> m.startsWith("member " + member.upstream() + " reachable again, flapping: ")
                    && m.contains("; 6 returns and 6 refused connections in "), WAIT, "saying the member up, with every turn counted");
            Thread.sleep(1_500);
            assertEquals(up, last(memberLines(log, port.port(), member)), "and nothing after: " + memberLines(log, port.port(), member));
        }
    }

    private static List<Thread> proxyThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith("blackpipe") && t.isAlive()).toList();
    }

    /**
     * A line held back when the proxy closes is never said: its flush, on the proxy's event loops, ends with them. The
     * refusal must come within a second of the return's line to be held back: where a loaded machine took longer, the
     * case is run again (three times at most), never judged on a premise that did not hold.
     */
    @Test
    void aLineHeldBackWhenTheProxyClosesIsNeverSaidAndLeavesNoThread() throws Exception {
        for (int run = 1; run <= 3; run++) {
            if (heldBackThenClosed()) {
                return;
            }
        }
        fail("in three runs the refusal never came within a second of the return: too loaded a machine to judge the case");
    }

    /** One run of the case above; false: the refusal came too late after the return to be held back, nothing judged. */
    private boolean heldBackThenClosed() throws Exception {
        try (FlappingPort port = new FlappingPort(); LogCapture log = LogCapture.start()) {
            List<Thread> before = proxyThreads(); // the lane's are up by now: FlappingPort asked its node
            ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.directlyTo(UpstreamLane.uri(), "127.0.0.1:" + port.port())));
            Member member = proxy.members().get(0);
            try {
                port.refuse();
                dialRefused(member);
                port.answer();
                long returned = System.nanoTime();
                dialAnswered(member);
                port.refuse();
                dialRefused(member); // within a second of the return's line: held back
                boolean inTime = System.nanoTime() - returned < TimeUnit.MILLISECONDS.toNanos(800);
                List<String> lines = memberLines(log, port.port(), member);
                if (!inTime && !last(lines).startsWith("member " + member.upstream() + " reachable again after ")) {
                    return false; // said at once, as it should be over a second after the return: the premise did not hold
                }
                assertTrue(last(lines).startsWith("member " + member.upstream() + " reachable again after 1 refused connection over "),
                        "the refusal held back: " + lines);
            } finally {
                proxy.close();
            }
            List<String> atClose = memberLines(log, port.port(), member);
            Thread.sleep(2_000);
            assertEquals(atClose, memberLines(log, port.port(), member), "nothing said after the proxy closed");
            Await.until(Duration.ofSeconds(5), () -> "the proxy's threads to end: " + proxyThreads(),
                    () -> before.containsAll(proxyThreads()));
        }
        return true;
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
            insertOnceConnected(client.getDatabase(db).getCollection("c"), new Document("_id", 1));
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
