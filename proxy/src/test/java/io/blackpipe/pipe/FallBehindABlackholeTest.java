package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoSocketReadTimeoutException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.blackpipe.fault.DeploymentFaults;
import io.blackpipe.fault.Restart;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.CommandLog;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.ScriptedMongodCompressor;
import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.topology.Member;
import io.blackpipe.topology.MemberAddress;
import io.blackpipe.topology.MemberState;
import io.netty.channel.EventLoop;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * A member that falls (an outage, a restart's exit) while a blackhole hides it, through the real driver and raw
 * sockets. Across a real partition the member's reset or close is lost on the way: its clients meet silence (a read
 * timeout, a connect that gets no answer), not a refusal, until the partition heals. Then each connection that was
 * open at the fall ends as the fall would have ended it, a connection made while the member was down is refused
 * (reset) if it is down still, and goes on if it is back. Before, the fall reached the clients at once, through the
 * blackhole.
 */
class FallBehindABlackholeTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final String POLL = "serverMonitoringMode=poll&heartbeatFrequencyMS=60000";

    private static MongoClient client(ProxyServer proxy, String options, int socketTimeoutMillis) {
        String base = proxy.connectionString();
        String uri = base + (base.contains("?") ? "&" : "?") + "socketTimeoutMS=" + socketTimeoutMillis + "&" + options;
        return MongoClients.create(MongoClientSettings.builder().applyConnectionString(new ConnectionString(uri))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(5, TimeUnit.SECONDS))
                .applyToSocketSettings(b -> b.connectTimeout(3, TimeUnit.SECONDS)).build());
    }

    private static Member primary(ProxyServer proxy) {
        return proxy.members().stream().filter(m -> proxy.memberState(m.upstream()).role() == MemberState.Role.PRIMARY)
                .findFirst().orElseThrow(() -> new AssertionError("no member is primary: " + proxy.members()));
    }

    private static byte[] hello(int requestId) {
        return ScriptedMongodWire.buildOpMsg(requestId, 0, 0,
                new BsonDocument("hello", new BsonInt32(1)).append("$db", new BsonString("admin")), null);
    }

    /** A connection to {@code address} is accepted, and a hello sent on it gets no answer. */
    private static RawClient silentConnection(MemberAddress address, int requestId) throws IOException {
        RawClient raw = RawClient.connect(address); // a refusal throws ConnectException here
        raw.send(hello(requestId));
        raw.socket.setSoTimeout(500);
        assertThrows(SocketTimeoutException.class, raw::readFrame, "a hello behind a blackhole gets no answer");
        return raw;
    }

    private static void assertRefused(MemberAddress address) throws IOException {
        try (Socket socket = new Socket()) {
            assertThrows(ConnectException.class, () -> socket.connect(new InetSocketAddress(address.host(), address.port()), 2_000),
                    () -> address + " accepted a connection while down, with no blackhole to hide it");
        }
    }

    private static long mark(List<DeploymentFaults.Begun> begun) {
        return begun.get(0).mark();
    }

    @Test
    void anOutageBehindABlackholeIsSilenceAndItsResetsComeWhenTheBlackholeEnds() throws Exception {
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()));
                MongoClient direct = UpstreamLane.directClient();
                MongoClient client = client(proxy, "retryReads=false&retryWrites=false&" + POLL, 1_000)) {
            Member member = primary(proxy);
            MemberListener listener = proxy.listener(member.upstream());
            String name = member.upstream().toString();
            String db = UpstreamLane.freshDatabaseName("fallblackhole");
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            c.insertOne(new Document("_id", 0)); // the driver now holds a pooled connection
            RawClient openBefore = RawClient.connect(member.advertised());
            openBefore.roundTrip(hello(1));

            long blackhole = mark(proxy.blackhole(name, 0));
            proxy.outage(name, 0);
            assertTrue(listener.down() && listener.blackholed());

            long sent = System.nanoTime();
            assertThrows(MongoSocketReadTimeoutException.class, () -> c.insertOne(new Document("_id", 1)),
                    "the pooled connection meets silence, not the outage's reset");
            long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent);
            assertTrue(waited >= 900, "the insert failed after " + waited + " ms: the reset crossed the blackhole");
            RawClient madeWhileDown = silentConnection(member.advertised(), 2);
            openBefore.socket.setSoTimeout(300);
            assertThrows(SocketTimeoutException.class, openBefore::readFrame, "the connection open at the fall is still silent");

            listener.endIfStill(DeploymentFaults.BLACKHOLE, blackhole); // the partition heals; the member is still down
            assertFalse(listener.blackholed());
            assertTrue(listener.down());
            openBefore.awaitClosedByPeer(Duration.ofSeconds(5)); // reset now, as the outage would have at once
            madeWhileDown.awaitClosedByPeer(Duration.ofSeconds(5)); // it never reached the member, which refuses it
            openBefore.close();
            madeWhileDown.close();
            assertRefused(member.advertised());

            proxy.restore(name);
            assertFalse(listener.down());
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (true) {
                try {
                    c.insertOne(new Document("_id", 2));
                    break;
                } catch (MongoException e) {
                    if (System.nanoTime() > deadline) {
                        throw new AssertionError("the driver still fails after the restore", e);
                    }
                    Thread.sleep(100);
                }
            }
            assertEquals(List.of(0, 2), direct.getDatabase(db).getCollection("c").find().map(d -> d.getInteger("_id"))
                    .into(new ArrayList<>()), "the insert held in the blackhole never reached the member that fell");
            Await.until(WAIT, "the held insert to end as a network error",
                    () -> Meters.outcomes(proxy.registry(), "insert", "network_error") == 1);
        }
    }

    /** A command waiting in the blackhole when the member fell fails when the blackhole ends, not when it fell, nor after its timeout. */
    @Test
    void aWriteWaitingInTheBlackholeIsResetWhenItEnds() throws Exception {
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()));
                MongoClient direct = UpstreamLane.directClient();
                MongoClient client = client(proxy, "retryWrites=false&" + POLL, 20_000)) {
            String name = primary(proxy).upstream().toString();
            String db = UpstreamLane.freshDatabaseName("fallblackhole_wait");
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            c.insertOne(new Document("_id", 0));

            long sent = System.nanoTime(); // before the blackhole: its 1.5 s are all after this
            proxy.blackhole(name, 1_500);
            proxy.outage(name, 0);
            MongoSocketException e = assertThrows(MongoSocketException.class, () -> c.insertOne(new Document("_id", 1)));
            long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent);
            assertFalse(e instanceof MongoSocketReadTimeoutException, "reset when the blackhole ended, not timed out: " + e);
            assertTrue(waited >= 1_200 && waited < 10_000, "the insert failed after " + waited + " ms; the blackhole lasted 1500 ms");
            assertEquals(1, Meters.faults(proxy.registry(), "blackhole", "insert"));
            proxy.restore(name);
            assertEquals(1, direct.getDatabase(db).getCollection("c").countDocuments(), "the held insert never reached the member");
        }
    }

    /**
     * A member back before the blackhole ends: a connection made while it was down goes on (the partition held its
     * opening, not a refusal), and one open at its fall is reset (the member's end of it died).
     */
    @Test
    void aMemberBackBeforeTheBlackholeEndsAnswersWhatWasSentWhileItWasDown() throws Exception {
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            Member member = primary(proxy);
            MemberListener listener = proxy.listener(member.upstream());
            String name = member.upstream().toString();
            RawClient openBefore = RawClient.connect(member.advertised());
            openBefore.roundTrip(hello(1));
            long blackhole = mark(proxy.blackhole(name, 0));
            long outage = mark(proxy.outage(name, 0));
            try (RawClient madeWhileDown = silentConnection(member.advertised(), 5)) {
                listener.endIfStill(DeploymentFaults.OUTAGE, outage);
                assertFalse(listener.down());
                assertThrows(SocketTimeoutException.class, madeWhileDown::readFrame, "still behind the blackhole");

                listener.endIfStill(DeploymentFaults.BLACKHOLE, blackhole);
                madeWhileDown.socket.setSoTimeout(5_000);
                assertEquals(5, ScriptedMongodWire.intLE(madeWhileDown.readFrame(), 8), "its hello answered once the blackhole ended");
                openBefore.awaitClosedByPeer(Duration.ofSeconds(5));
            }
            openBefore.close();
        }
    }

    /**
     * A restart's exit behind a blackhole, with a command running at the member: the member's late reply never
     * leaves it, and the command gets InterruptedAtShutdown when the blackhole ends, not at the exit.
     */
    @Test
    void aRestartBehindABlackholeInterruptsItsCommandWhenTheBlackholeEnds() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted)) {
            String advertised = ScriptedProxy.advertised(proxy);
            MemberListener listener = proxy.listener(ScriptedProxy.member(proxy).upstream());
            try (MongoClient client = MongoClients.create(CommandLog.withOptions(proxy.connectionString(),
                    "retryReads=false&" + POLL))) {
                MongoCollection<Document> orders = client.getDatabase("shop").getCollection("orders");
                orders.insertOne(new Document("_id", 1));
                scripted.delayReplies("find", 500);
                CompletableFuture<Throwable> find = Await.failureOf(() -> orders.find().first());
                Await.until(Duration.ofSeconds(5), "the find to reach the member", () -> !scripted.commandsReceived("find").isEmpty());
                long blackhole = mark(proxy.blackhole(advertised, 0));
                long exited = System.nanoTime();
                proxy.restart(advertised, new Restart(0, 60_000));
                Thread.sleep(1_500); // the member's late reply came meanwhile, and waits in the blackhole
                assertFalse(find.isDone(), "nothing crossed the blackhole: " + find.getNow(null));

                listener.endIfStill(DeploymentFaults.BLACKHOLE, blackhole);
                MongoCommandException e = assertInstanceOf(MongoCommandException.class, find.get(10, TimeUnit.SECONDS));
                assertEquals(11600, e.getCode(), "the member exited with the find running: " + e);
                long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - exited);
                assertTrue(millis >= 1_400, "answered when the blackhole ended, " + millis + " ms after the exit");
                assertTrue(listener.down());
                assertRefused(ScriptedProxy.member(proxy).advertised());
            }
        }
    }

    /**
     * A blackhole begun on a member already down hides it: its clients' new connections are accepted and meet
     * silence, not a refusal; when the blackhole ends with the member still down, they are reset, and it refuses again.
     */
    @Test
    void aBlackholeBegunOnADownMemberAcceptsAndThenResets() throws Exception {
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            Member member = primary(proxy);
            MemberListener listener = proxy.listener(member.upstream());
            String name = member.upstream().toString();
            proxy.outage(name, 0);
            assertRefused(member.advertised());
            long blackhole = mark(proxy.blackhole(name, 0));
            try (RawClient hidden = silentConnection(member.advertised(), 3)) {
                listener.endIfStill(DeploymentFaults.BLACKHOLE, blackhole);
                hidden.awaitClosedByPeer(Duration.ofSeconds(5));
            }
            assertTrue(listener.down());
            assertRefused(member.advertised());
            proxy.restore(name);
            try (RawClient back = RawClient.connect(member.advertised())) {
                assertEquals(4, ScriptedMongodWire.intLE(back.roundTrip(hello(4)), 8), "back on the same port");
            }
        }
    }

    /**
     * A member that falls just after its blackhole ended (its connections not yet told) fell in the open: a restart's
     * exit interrupts the command it runs (11600), as without a blackhole. Before, each connection read the member's
     * state when its end of the blackhole ran, took the restart for a fall behind the blackhole, and was reset.
     */
    @Test
    void aFallJustAfterTheBlackholeEndedIsNoFallBehindIt() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted)) {
            String advertised = ScriptedProxy.advertised(proxy);
            MemberListener listener = proxy.listener(ScriptedProxy.member(proxy).upstream());
            try (MongoClient client = MongoClients.create(CommandLog.withOptions(proxy.connectionString(), "retryReads=false&" + POLL))) {
                MongoCollection<Document> orders = client.getDatabase("shop").getCollection("orders");
                orders.insertOne(new Document("_id", 1));
                scripted.delayReplies("find", 5_000);
                CompletableFuture<Throwable> find = Await.failureOf(() -> orders.find().first());
                Await.until(Duration.ofSeconds(5), "the find to reach the member", () -> !scripted.commandsReceived("find").isEmpty());
                long blackhole = mark(proxy.blackhole(advertised, 0));
                CountDownLatch loopsHeld = new CountDownLatch(1);
                for (EventLoop loop : listener.connections().eventLoops()) {
                    loop.execute(() -> awaitQuietly(loopsHeld)); // the connections hear of what follows only once it is all done
                }
                listener.endIfStill(DeploymentFaults.BLACKHOLE, blackhole);
                CompletableFuture<Void> restart = CompletableFuture.runAsync(() -> proxy.restart(advertised, new Restart(0, 60_000)));
                Await.until(Duration.ofSeconds(5), "the member to exit", listener::down);
                loopsHeld.countDown();
                restart.get(10, TimeUnit.SECONDS);
                MongoCommandException e = assertInstanceOf(MongoCommandException.class, find.get(10, TimeUnit.SECONDS));
                assertEquals(11600, e.getCode(), e::toString);
            }
        }
    }

    /** A compressed message (a client that compresses without asking, with noop) waits in a blackhole as any other. */
    @Test
    void aCompressedMessageWaitsInTheBlackholeToo() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted);
                RawClient raw = RawClient.connect(ScriptedProxy.member(proxy).advertised())) {
            raw.roundTrip(hello(1));
            long blackhole = mark(proxy.blackhole(ScriptedProxy.advertised(proxy), 0));
            int hellos = scripted.commandsReceived("hello").size();
            raw.send(ScriptedMongodWire.compress(hello(9), ScriptedMongodCompressor.NOOP));
            raw.socket.setSoTimeout(500);
            assertThrows(SocketTimeoutException.class, raw::readFrame, "nothing crosses a blackhole, compressed or not");
            assertEquals(hellos, scripted.commandsReceived("hello").size(), "the member never got it: it went into the blackhole");
            proxy.listener(ScriptedProxy.member(proxy).upstream()).endIfStill(DeploymentFaults.BLACKHOLE, blackhole);
            raw.socket.setSoTimeout(5_000);
            assertEquals(9, ScriptedMongodWire.intLE(raw.readFrame(), 8), "answered once the blackhole ended");
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
