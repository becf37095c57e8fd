package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoException;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoSocketReadTimeoutException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import io.blackpipe.fault.DeploymentFaults;
import io.blackpipe.fault.Restart;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.topology.Member;
import io.blackpipe.topology.MemberAddress;
import io.blackpipe.topology.MemberState;
import java.io.IOException;
import java.net.BindException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Member-level faults against the real driver and raw sockets: an outage refuses new connections
 * and resets open ones, then the member is back on the same port; a blackhole accepts and never
 * answers; restore ends either early; resetConnections resets every connection of a member; and
 * the member selectors (primary, secondary, all, host:port) pick the right listeners.
 *
 * <p>Driver clients here poll (serverMonitoringMode=poll, long heartbeat) so that their monitor
 * does not notice a reset before the application's next operation does: that operation is the
 * first to meet the reset connection, deterministically.
 */
class DeploymentFaultsTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final String POLL = "serverMonitoringMode=poll&heartbeatFrequencyMS=60000";

    private ProxyServer proxy;
    private MongoClient direct;
    private final List<MongoClient> clients = new ArrayList<>();

    @BeforeEach
    void start() {
        proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()));
        direct = UpstreamLane.directClient();
    }

    @AfterEach
    void stop() throws Exception {
        clients.forEach(MongoClient::close);
        direct.close();
        proxy.close();
    }

    // ------------------------------------------------------------------ helpers

    private Member primary() {
        return proxy.members().stream().filter(m -> proxy.memberState(m.upstream()).role() == MemberState.Role.PRIMARY)
                .findFirst().orElseThrow(() -> new AssertionError("no member is primary: " + proxy.members()));
    }

    private MemberListener listenerOf(Member member) {
        return proxy.listener(member.upstream());
    }

    private MongoClient client(String options, int socketTimeoutMillis, int serverSelectionMillis, List<CommandStartedEvent> events) {
        String base = proxy.connectionString();
        String uri = base + (base.contains("?") ? "&" : "?") + "socketTimeoutMS=" + socketTimeoutMillis + "&" + options;
        MongoClient client = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(uri))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(serverSelectionMillis, TimeUnit.MILLISECONDS))
                .applyToSocketSettings(b -> b.connectTimeout(3, TimeUnit.SECONDS))
                .addCommandListener(new CommandListener() {
                    @Override
                    public void commandStarted(CommandStartedEvent event) {
                        events.add(event);
                    }
                })
                .build());
        clients.add(client);
        return client;
    }

    private static long started(List<CommandStartedEvent> events, String command) {
        return events.stream().filter(e -> e.getCommandName().equals(command)).count();
    }

    private static byte[] hello(int requestId) {
        return ScriptedMongodWire.buildOpMsg(requestId, 0, 0,
                new BsonDocument("hello", new BsonInt32(1)).append("$db", new BsonString("admin")), null);
    }

    private static void assertRefused(MemberAddress address) {
        try (Socket socket = new Socket()) {
            assertThrows(ConnectException.class, () -> socket.connect(new InetSocketAddress(address.host(), address.port()), 2_000),
                    () -> address + " accepted a connection during an outage");
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    /**
     * No one else can bind {@code address} while its member is down: the proxy keeps the port, so that a process asking
     * the system for a free one (another proxy started beside, on port 0) is never given it and the member comes back.
     */
    private static void assertKept(MemberAddress address) {
        try (ServerSocket other = new ServerSocket()) {
            other.setReuseAddress(false);
            assertThrows(BindException.class, () -> other.bind(new InetSocketAddress(address.host(), address.port())),
                    () -> address + " was free for another process while its member was down");
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    /** A new raw connection to {@code address} gets its hello answered. */
    private static void assertAnswers(MemberAddress address) throws IOException {
        try (RawClient raw = RawClient.connect(address)) {
            byte[] reply = raw.roundTrip(hello(7));
            assertEquals(7, ScriptedMongodWire.intLE(reply, 8), "the reply answers our hello");
        }
    }

    /** Runs {@code operation} until it succeeds; fails after {@code timeout}. */
    private static void eventually(Duration timeout, String what, Runnable operation) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            try {
                operation.run();
                return;
            } catch (MongoException e) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError(what + " still fails after " + timeout, e);
                }
                Thread.sleep(100);
            }
        }
    }

    // ------------------------------------------------------------------ outage

    @Test
    void anOutageRefusesNewConnectionsResetsOpenOnesAndEndsOnTheSamePort() throws Exception {
        Member member = primary();
        MemberAddress advertised = member.advertised();
        MemberListener listener = listenerOf(member);
        String connectionString = proxy.connectionString();
        String db = UpstreamLane.freshDatabaseName("outage");
        List<CommandStartedEvent> events = new CopyOnWriteArrayList<>();
        MongoCollection<Document> c = client("retryReads=false&retryWrites=false&" + POLL, 5_000, 2_000, events)
                .getDatabase(db).getCollection("c");
        c.insertOne(new Document("_id", 1)); // the driver now holds an open pooled connection
        RawClient open = RawClient.connect(advertised);
        open.roundTrip(hello(1));
        assertTrue(listener.openConnections() >= 2, "the driver's connections and ours are open");

        long began = System.nanoTime();
        proxy.outage(advertised.toString(), 1_500);
        assertTrue(listener.down());

        assertRefused(advertised);
        assertKept(advertised);
        open.awaitClosedByPeer(Duration.ofSeconds(5)); // our open connection was reset
        open.close();
        Await.until(WAIT, "every connection of the member to be gone", () -> listener.openConnections() == 0);

        // the driver's next operation meets its reset connection: a network error, not a hang
        MongoSocketException reset = assertThrows(MongoSocketException.class, () -> c.find().first());
        assertTrue(reset.getMessage() != null);
        assertEquals(1, started(events, "find"));

        Await.until(WAIT, "the outage to end by itself", () -> !listener.down());
        long lasted = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began);
        assertTrue(lasted >= 1_400, "the outage ended after " + lasted + " ms, it was 1500 ms");
        assertEquals(advertised, member.advertised());
        assertEquals(advertised, proxy.members().stream().filter(m -> m.upstream().equals(member.upstream())).findFirst()
                .orElseThrow().advertised(), "the member keeps its advertised address");
        assertEquals(connectionString, proxy.connectionString());
        assertAnswers(advertised); // back on the SAME port

        eventually(WAIT, "the driver after the outage", () -> c.insertOne(new Document("_id", 2)));
        assertEquals(2, c.find(new Document("_id", 2)).first().getInteger("_id"));
        assertEquals(2, direct.getDatabase(db).getCollection("c").countDocuments());
    }

    /**
     * A reset is done when the call returns: what a client sends after it never reaches the proxy
     * (the API's connections reset and an outage rely on this; the resets run on the connections'
     * event loops).
     */
    @Test
    void resettingConnectionsReturnsOnceEveryConnectionIsReset() throws Exception {
        Member member = primary();
        MemberListener listener = listenerOf(member);
        List<RawClient> open = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            RawClient client = RawClient.connect(member.advertised());
            client.roundTrip(hello(1));
            open.add(client);
        }
        assertEquals(4, listener.openConnections());
        assertEquals(4, listener.resetConnections());
        assertEquals(0, listener.openConnections(), "every connection is closed when the reset returns");
        for (RawClient client : open) {
            client.awaitClosedByPeer(Duration.ofSeconds(5));
            client.close();
        }
    }

    @Test
    void anOutageResetsADriversConnectionAndARetryableWriteWaitsForTheMemberToComeBack() throws Exception {
        String db = UpstreamLane.freshDatabaseName("outageretry");
        List<CommandStartedEvent> events = new CopyOnWriteArrayList<>();
        MongoCollection<Document> c = client("retryWrites=true&" + POLL, 5_000, 15_000, events).getDatabase(db).getCollection("c");
        c.insertOne(new Document("_id", 1));

        proxy.outage("primary", 800);
        c.insertOne(new Document("_id", 2)); // first attempt on the reset connection, the retry once the member is back

        assertEquals(3, started(events, "insert"), "the second insert was retried by the driver");
        assertEquals(2, Meters.attempts(proxy.registry(), "insert"), "the attempt on the reset connection never reached the proxy");
        assertFalse(listenerOf(primary()).down());
        assertEquals(2, direct.getDatabase(db).getCollection("c").countDocuments());
    }

    /**
     * An outage and a restart's time down are two faults, each with its own end: the member is back once neither holds
     * it. Before, both kept one timer: the restart's exit called the outage's end off and put its own in place.
     */
    @Test
    void anOutageAndARestartOnOneMemberEachKeepTheirOwnEnd() throws Exception {
        Member member = primary();
        MemberListener listener = listenerOf(member);
        String name = member.upstream().toString();
        long outage = proxy.outage(name, 0).get(0).mark(); // until restored
        proxy.restart(name, new Restart(0, 300));
        Thread.sleep(800); // the restart's time down is over
        assertTrue(listener.down(), "the outage, which nothing ended, still holds the member down");
        assertEquals(DeploymentFaults.OUTAGE, listener.downBy());
        assertRefused(member.advertised());
        assertKept(member.advertised());
        listener.endIfStill(DeploymentFaults.OUTAGE, outage);
        assertFalse(listener.down());
        assertAnswers(member.advertised());

        long restart = proxy.restart(name, new Restart(0, 60_000)).get(0).mark();
        proxy.outage(name, 300);
        Thread.sleep(800); // the outage's time is over
        assertTrue(listener.down(), "the restart's minute down still holds it");
        assertEquals(DeploymentFaults.RESTART, listener.downBy());
        assertRefused(member.advertised());
        listener.endIfStill(DeploymentFaults.RESTART, restart);
        assertFalse(listener.down());
        assertAnswers(member.advertised());
        String db = UpstreamLane.freshDatabaseName("twofaults");
        client(POLL, 5_000, 10_000, new ArrayList<>()).getDatabase(db).getCollection("c").insertOne(new Document("_id", 1));
        assertEquals(1, direct.getDatabase(db).getCollection("c").countDocuments(), "the member back, its write on the server");
    }

    @Test
    void aTimedOutageEndsByItselfEveryTime() throws Exception {
        Member member = primary();
        MemberListener listener = listenerOf(member);
        // the end runs on a timer; it once failed now and then (about 1 in 20) and left the member down for good
        for (int i = 0; i < 60; i++) {
            proxy.outage("primary", 20);
            assertTrue(listener.down());
            int round = i;
            Await.until(Duration.ofSeconds(5), () -> "the 20 ms outage #" + round + " to end by itself", () -> !listener.down());
            assertAnswers(member.advertised());
        }
    }

    // ------------------------------------------------------------------ blackhole

    @Test
    void aBlackholeAcceptsButNeverAnswers() throws Exception {
        Member member = primary();
        MemberListener listener = listenerOf(member);
        String db = UpstreamLane.freshDatabaseName("blackhole");
        direct.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1));
        List<CommandStartedEvent> events = new CopyOnWriteArrayList<>();
        MongoCollection<Document> c = client("retryReads=false&" + POLL, 1_000, 5_000, events).getDatabase(db).getCollection("c");
        assertEquals(1, c.find().first().getInteger("_id"));

        proxy.blackhole("primary", 0);
        assertTrue(listener.blackholed());
        assertFalse(listener.down());

        try (RawClient raw = RawClient.connect(member.advertised())) { // accepted
            raw.send(hello(3));
            raw.socket.setSoTimeout(1_000);
            assertThrows(SocketTimeoutException.class, raw::readFrame, "a hello in a blackhole gets no answer");
        }

        long before = System.nanoTime();
        assertThrows(MongoSocketReadTimeoutException.class, () -> c.find().first());
        assertTrue(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - before) >= 950);
        assertEquals(2, started(events, "find"));
        assertEquals(1, Meters.faults(proxy.registry(), "blackhole", "find"), "counted as fault \"blackhole\"");
        Await.until(WAIT, "the swallowed find to end when the driver closed its connection",
                () -> Meters.outcomes(proxy.registry(), "find", "network_error") == 1);

        proxy.restore("primary");
        assertFalse(listener.blackholed());
        assertAnswers(member.advertised());
        eventually(WAIT, "the driver after the blackhole", () -> c.find().first());
    }

    /** As over a partitioned network that heals: a write sent into a blackhole waits, and lands when it ends. */
    @Test
    void aWriteSentIntoATimedBlackholeLandsWhenItEnds() throws Exception {
        String db = UpstreamLane.freshDatabaseName("blackhole_heal");
        List<CommandStartedEvent> events = new CopyOnWriteArrayList<>();
        MongoCollection<Document> c = client("retryWrites=false&" + POLL, 20_000, 5_000, events).getDatabase(db).getCollection("c");
        c.insertOne(new Document("_id", 0));
        proxy.blackhole("primary", 1_000);
        long before = System.nanoTime();
        c.insertOne(new Document("_id", 1));
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - before);
        assertTrue(tookMillis >= 900, "answered when the blackhole ended, after " + tookMillis + " ms");
        assertEquals(2, started(events, "insert"), "one attempt each: nothing was lost");
        assertEquals(1, Meters.faults(proxy.registry(), "blackhole", "insert"));
        assertEquals(2, Meters.outcomes(proxy.registry(), "insert", "ok"));
        assertEquals(2, direct.getDatabase(db).getCollection("c").countDocuments());
    }

    /** A command whose client gave up while the blackhole held it never reaches the member. */
    @Test
    void aWriteWhoseClientGaveUpInTheBlackholeNeverReachesTheMember() throws Exception {
        String db = UpstreamLane.freshDatabaseName("blackhole_gaveup");
        List<CommandStartedEvent> events = new CopyOnWriteArrayList<>();
        MongoCollection<Document> c = client("retryWrites=false&" + POLL, 1_500, 5_000, events).getDatabase(db).getCollection("c");
        c.insertOne(new Document("_id", 0));
        proxy.blackhole("primary", 0);
        assertThrows(MongoSocketReadTimeoutException.class, () -> c.insertOne(new Document("_id", 1)));
        Await.until(WAIT, "the held insert to end when the driver closed its connection",
                () -> Meters.outcomes(proxy.registry(), "insert", "network_error") == 1);
        proxy.restore("primary");
        eventually(WAIT, "the driver after the blackhole", () -> c.insertOne(new Document("_id", 2)));
        assertEquals(List.of(0, 2), direct.getDatabase(db).getCollection("c").find().map(d -> d.getInteger("_id"))
                .into(new ArrayList<>()));
    }

    @Test
    void aTimedBlackholeEndsByItself() throws Exception {
        Member member = primary();
        MemberListener listener = listenerOf(member);
        proxy.blackhole(member.upstream().toString(), 1_500);
        assertTrue(listener.blackholed());
        try (RawClient raw = RawClient.connect(member.advertised())) {
            raw.send(hello(4));
            raw.socket.setSoTimeout(300);
            assertThrows(SocketTimeoutException.class, raw::readFrame);
        }
        Await.until(WAIT, "the blackhole to end", () -> !listener.blackholed());
        assertAnswers(member.advertised());
    }

    // ------------------------------------------------------------------ restore

    @Test
    void restoreEndsAnOutageOrABlackholeEarly() throws Exception {
        Member member = primary();
        MemberListener listener = listenerOf(member);
        String upstream = member.upstream().toString();

        proxy.outage(upstream, 60_000);
        assertTrue(listener.down());
        assertRefused(member.advertised());
        proxy.restore(upstream);
        assertFalse(listener.down());
        assertAnswers(member.advertised()); // the same port, at once

        proxy.blackhole(upstream, 60_000);
        try (RawClient raw = RawClient.connect(member.advertised())) {
            raw.send(hello(5));
            raw.socket.setSoTimeout(300);
            assertThrows(SocketTimeoutException.class, raw::readFrame);
        }
        proxy.restore(upstream);
        assertFalse(listener.blackholed());
        assertAnswers(member.advertised());

        // a restore also cancels the pending end of the fault it ended: it cannot end a later fault early
        proxy.outage(upstream, 300);
        proxy.restore(upstream);
        proxy.outage(upstream, 0); // until restored
        Thread.sleep(800);
        assertTrue(listener.down(), "the first outage's timer ended the second outage");
        proxy.restore(upstream);
        assertAnswers(member.advertised());

        proxy.restore(upstream); // restoring a healthy member changes nothing
        assertFalse(listener.down());
        assertFalse(listener.blackholed());
    }

    // ------------------------------------------------------------------ resetConnections

    @Test
    void resetConnectionsResetsEveryConnectionOfTheMember() throws Exception {
        String db = UpstreamLane.freshDatabaseName("reset");
        List<CommandStartedEvent> plainEvents = new CopyOnWriteArrayList<>();
        List<CommandStartedEvent> retryingEvents = new CopyOnWriteArrayList<>();
        MongoCollection<Document> plain = client("retryWrites=false&appName=plain&" + POLL, 5_000, 10_000, plainEvents)
                .getDatabase(db).getCollection("plain");
        MongoCollection<Document> retrying = client("retryWrites=true&appName=retrying&" + POLL, 5_000, 10_000, retryingEvents)
                .getDatabase(db).getCollection("retrying");
        plain.insertOne(new Document("_id", 1));
        retrying.insertOne(new Document("_id", 1));
        Member member = primary();
        MemberListener listener = listenerOf(member);
        assertTrue(listener.openConnections() >= 4, "two clients, each with a monitor and a pooled connection: "
                + listener.openConnections());
        int open = proxy.select("all").stream().mapToInt(MemberListener::openConnections).sum();

        int reset = proxy.select("all").stream().mapToInt(MemberListener::resetConnections).sum();
        assertEquals(open, reset, "every open connection of every member was reset");
        Await.until(WAIT, "every connection to be reset",
                () -> proxy.select("all").stream().mapToInt(MemberListener::openConnections).sum() == 0);
        assertFalse(listener.down(), "a reset is not an outage: the member still accepts connections");

        // without retryable writes the application sees the reset as a network error
        assertThrows(MongoSocketException.class, () -> plain.insertOne(new Document("_id", 2)));
        // retryable writes hide it: the driver retries once on a new connection
        retrying.insertOne(new Document("_id", 2));

        assertEquals(2, started(plainEvents, "insert"));
        assertEquals(3, started(retryingEvents, "insert"), "the second insert was sent twice by the driver");
        assertEquals(1, (long) Meters.sum(proxy.registry(), "blackpipe.command.attempts", "command", "insert", "app", "plain"),
                "the failed insert never reached the proxy");
        assertEquals(2, (long) Meters.sum(proxy.registry(), "blackpipe.command.attempts", "command", "insert", "app", "retrying"));
        assertEquals(1, direct.getDatabase(db).getCollection("plain").countDocuments());
        assertEquals(2, direct.getDatabase(db).getCollection("retrying").countDocuments());
        eventually(WAIT, "the plain client after the reset", () -> plain.insertOne(new Document("_id", 3)));
    }

    // ------------------------------------------------------------------ member selectors

    @Test
    void memberSelectorsPickTheRightListeners() throws Exception {
        Member primary = primary();
        MemberListener primaryListener = listenerOf(primary);
        assertEquals(List.of(primaryListener), proxy.select("primary"));
        assertEquals(proxy.members().size(), proxy.select("all").size());
        assertEquals(List.of(primaryListener), proxy.select(primary.upstream().toString()));
        assertEquals(List.of(primaryListener), proxy.select(primary.advertised().toString()));
        long secondaries = proxy.members().stream()
                .filter(m -> proxy.memberState(m.upstream()).role() == MemberState.Role.SECONDARY).count();
        assertEquals(secondaries, proxy.select("secondary").size());
        assertTrue(proxy.select("secondary").stream().noneMatch(primaryListener::equals));
        assertTrue(proxy.select("nowhere:1").isEmpty());

        assertTrue(proxy.knowsMember("primary"));
        assertEquals(proxy.members().size() > 1 && proxy.deployment().isReplicaSet(), proxy.knowsMember("secondary"),
                "secondary is a member where the set has more than one");
        assertTrue(proxy.knowsMember("all"));
        assertTrue(proxy.knowsMember(primary.upstream().toString()));
        assertTrue(proxy.knowsMember(primary.advertised().toString()));
        assertFalse(proxy.knowsMember("nowhere:1"));

        for (Runnable nowhere : List.<Runnable>of(() -> proxy.outage("nowhere:1", 0), () -> proxy.blackhole("nowhere:1", 0),
                () -> proxy.restore("nowhere:1"))) { // names no listener: an error naming those that exist, and nothing happens
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, nowhere::run);
            assertTrue(e.getMessage().startsWith("no member 'nowhere:1' (known: primary, "), e.getMessage());
            assertTrue(e.getMessage().contains(primary.upstream().toString()), e.getMessage());
        }
        assertTrue(proxy.select("all").stream().noneMatch(l -> l.down() || l.blackholed()));

        proxy.outage("all", 0);
        assertTrue(proxy.select("all").stream().allMatch(MemberListener::down));
        for (Member m : proxy.members()) {
            assertRefused(m.advertised());
        }
        proxy.restore("all");
        assertTrue(proxy.select("all").stream().noneMatch(MemberListener::down));
        for (Member m : proxy.members()) {
            assertAnswers(m.advertised());
        }
    }
}
