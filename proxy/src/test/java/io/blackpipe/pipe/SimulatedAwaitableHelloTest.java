package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.event.ServerHeartbeatSucceededEvent;
import com.mongodb.event.ServerMonitorListener;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.NodeSpecDriver;
import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.testing.WireSocket;
import io.blackpipe.topology.Member;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A simulated member holds an awaitable hello as a server does: it answers when its topologyVersion
 * moves on or when the hello's maxAwaitTimeMS ends, not before, even when the one real node
 * answers at once (jongodb always does), and it streams hello on where the node ends the stream.
 * Passed on at once, the node's answer had every streaming driver monitor ask again at once
 * (thousands of hellos a second for each member of an idle client), and its end of the stream
 * failed the Node.js driver's heartbeats.
 */
class SimulatedAwaitableHelloTest {
    private static final int ONE_REPLY = 0;
    private static final int WAIT_MILLIS = 1_200;

    @RegisterExtension
    final SimulatedSetOverTheLane set = new SimulatedSetOverTheLane();

    /** One reply (flags 0) and a streamed hello (exhaustAllowed) alike: the first answer comes when the wait ends. */
    @ParameterizedTest(name = "flags {0}")
    @ValueSource(ints = {ONE_REPLY, ScriptedMongodWire.FLAG_EXHAUST_ALLOWED})
    void anAwaitableHelloIsAnsweredWhenItsWaitEnds(int flags) throws Exception {
        Member primary = set.proxy().members().get(0);
        try (WireSocket socket = new WireSocket(primary.advertised().port(), 1, 30_000)) {
            BsonDocument known = topologyVersion(socket);

            long sent = System.nanoTime();
            int id = socket.sendMsg(flags, awaitable(known, WAIT_MILLIS));
            byte[] answer = socket.read();
            long tookMillis = (System.nanoTime() - sent) / 1_000_000;

            assertTrue(tookMillis >= WAIT_MILLIS, "answered after " + tookMillis + " ms, before the hello's wait of "
                    + WAIT_MILLIS + " ms ended, with nothing changed");
            assertEquals(id, ScriptedMongodWire.responseTo(answer));
            BsonDocument hello = ScriptedMongodWire.parseOpMsg(answer).body();
            assertEquals(known, hello.getDocument("topologyVersion"), hello::toJson);
            assertTrue(hello.getBoolean("isWritablePrimary").getValue(), hello::toJson);
            assertEquals(primary.advertised().toString(), hello.getString("me").getValue());
        }
    }

    /** An election ends the wait at once, with the new counter and the member's new role. */
    @ParameterizedTest(name = "flags {0}")
    @ValueSource(ints = {ONE_REPLY, ScriptedMongodWire.FLAG_EXHAUST_ALLOWED})
    void anElectionAnswersAHeldHelloAtOnce(int flags) throws Exception {
        Member oldPrimary = set.proxy().members().get(0);
        try (WireSocket socket = new WireSocket(oldPrimary.advertised().port(), 1, 30_000)) {
            BsonDocument known = topologyVersion(socket);
            int id = socket.sendMsg(flags, awaitable(known, 120_000));
            socket.expectSilence(500); // held, as at a server

            set.proxy().failover();
            byte[] answer = socket.read(); // within the socket's 30 s, not the hello's two minutes
            assertEquals(id, ScriptedMongodWire.responseTo(answer));
            ScriptedMongodWire.OpMsg reply = ScriptedMongodWire.parseOpMsg(answer);
            BsonDocument hello = reply.body();
            assertEquals(known.getInt64("counter").getValue() + 1, hello.getDocument("topologyVersion").getInt64("counter").getValue(),
                    hello::toJson);
            assertFalse(hello.getBoolean("isWritablePrimary").getValue(), hello::toJson);
            assertEquals(set.proxy().members().get(1).advertised().toString(), hello.getString("primary").getValue());
            assertEquals(flags == ScriptedMongodWire.FLAG_EXHAUST_ALLOWED, reply.moreToCome(), "a stream goes on; one reply ends");

            if (reply.moreToCome()) { // the next election's news comes at once too, chained after the last reply
                set.proxy().reset();
                byte[] next = socket.read();
                assertEquals(ScriptedMongodWire.requestId(answer), ScriptedMongodWire.responseTo(next));
                BsonDocument back = ScriptedMongodWire.parseOpMsg(next).body();
                assertEquals(known.getInt64("counter").getValue() + 2, back.getDocument("topologyVersion").getInt64("counter").getValue());
                assertTrue(back.getBoolean("isWritablePrimary").getValue(), back::toJson);
            }
        }
    }

    /**
     * A streamed hello gets a stream, as from mongod: one reply each maxAwaitTimeMS, each with
     * moreToCome and answering the last, where the node ends the stream with its first reply
     * (jongodb does, and the Node.js driver fails that heartbeat and marks the member Unknown).
     */
    @Test
    void aStreamedHelloGetsAReplyEachWaitAsFromAServer() throws Exception {
        Member member = set.proxy().members().get(1);
        try (WireSocket socket = new WireSocket(member.advertised().port(), 1, 30_000)) {
            BsonDocument known = topologyVersion(socket);
            long sent = System.nanoTime();
            int answers = socket.sendMsg(ScriptedMongodWire.FLAG_EXHAUST_ALLOWED, awaitable(known, 500));
            for (int i = 1; i <= 3; i++) {
                byte[] streamed = socket.read();
                ScriptedMongodWire.OpMsg reply = ScriptedMongodWire.parseOpMsg(streamed);
                assertTrue(reply.moreToCome(), "reply " + i + " says more is to come");
                assertEquals(answers, ScriptedMongodWire.responseTo(streamed), "reply " + i + " answers the one before");
                assertEquals(known, reply.body().getDocument("topologyVersion"));
                assertTrue(reply.body().getBoolean("secondary").getValue(), reply.body()::toJson);
                answers = ScriptedMongodWire.requestId(streamed);
            }
            long tookMillis = (System.nanoTime() - sent) / 1_000_000;
            assertTrue(tookMillis >= 1_500, "three replies in " + tookMillis + " ms, before three waits of 500 ms");
        }
    }

    /** The Node.js driver, idle, fails no heartbeat (the stream jongodb ends goes on from the members), and then writes once. */
    @Test
    void anIdleNodeDriverFailsNoHeartbeat() throws Exception {
        Path script = Path.of(SimulatedAwaitableHelloTest.class.getResource("/node/idle-heartbeats.js").toURI());
        String uri = set.proxy().connectionString() + "&heartbeatFrequencyMS=500";
        String db = UpstreamLane.freshDatabaseName("simawaitnode");
        Process node = new ProcessBuilder("bash", "-c", NodeSpecDriver.commandFor(script) + " \"$0\" 3000 \"$1\"", uri, db)
                .redirectErrorStream(true).start();
        String output = new String(node.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertTrue(node.waitFor(60, TimeUnit.SECONDS), output);
        assertEquals(0, node.exitValue(), output);
        BsonDocument seen = BsonDocument.parse(output.substring(output.lastIndexOf('\n') + 1));
        assertEquals(0, seen.getInt32("failed").getValue(), output);
        assertTrue(seen.getInt32("awaited").getValue() >= 3, "an awaited heartbeat a wait for each member: " + output);
        assertEquals(1, set.direct().getDatabase(db).getCollection("c").countDocuments(), "its write after the idle time landed once");
    }

    /**
     * A hello whose wait ends while its member is blackholed is answered when the blackhole ends, as
     * the member's own reply would be: it is not lost, with the client's monitor left waiting for
     * its socket to time out.
     */
    @Test
    void aWaitThatEndsInABlackholeIsAnsweredWhenTheBlackholeEnds() throws Exception {
        Member member = set.proxy().members().get(0);
        try (WireSocket socket = new WireSocket(member.advertised().port(), 1, 30_000)) {
            BsonDocument known = topologyVersion(socket);
            long sent = System.nanoTime();
            int id = socket.sendMsg(ONE_REPLY, awaitable(known, 1_000)); // ends inside the blackhole even if it starts late
            socket.expectSilence(100);
            set.proxy().blackhole(member.advertised().toString(), 1_500);

            byte[] answer = socket.read(); // within the socket's 30 s
            long tookMillis = (System.nanoTime() - sent) / 1_000_000;
            assertTrue(tookMillis >= 1_500, "answered after " + tookMillis + " ms, through the blackhole");
            assertEquals(id, ScriptedMongodWire.responseTo(answer));
            assertEquals(known, ScriptedMongodWire.parseOpMsg(answer).body().getDocument("topologyVersion"));
        }
    }

    /**
     * The real Java driver, idle, streams hellos to the three members: a few a second in all, as
     * against a server, and none of its monitors misses the next election.
     */
    @Test
    void anIdleStreamingDriverAsksAFewTimesASecondAndStillHearsOfAnElectionAtOnce() throws Exception {
        AtomicLong heartbeats = new AtomicLong();
        MongoClientSettings settings = MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(set.proxy().connectionString() + "&heartbeatFrequencyMS=1000"))
                .applyToServerSettings(b -> b.addServerMonitorListener(new ServerMonitorListener() {
                    @Override
                    public void serverHeartbeatSucceeded(ServerHeartbeatSucceededEvent event) {
                        heartbeats.incrementAndGet();
                    }
                }))
                .build();
        try (MongoClient client = MongoClients.create(settings)) {
            client.getDatabase("admin").runCommand(new Document("ping", 1));
            Await.until(Duration.ofSeconds(10), () -> "the driver streams from all three: " + client.getClusterDescription(),
                    () -> client.getClusterDescription().getServerDescriptions().stream().filter(d -> d.getTopologyVersion() != null).count() == 3);

            long before = heartbeats.get();
            Thread.sleep(3_000);
            long idle = heartbeats.get() - before;
            // a heartbeat a second for each of three members: about 9 in 3 s; the node's answers passed on at once made thousands
            assertTrue(idle <= 30, idle + " heartbeats in 3 s from an idle driver");

            set.proxy().failover();
            String next = set.proxy().members().get(1).advertised().toString();
            Await.until(Duration.ofSeconds(10), () -> "the driver hears of the election from a held hello: " + client.getClusterDescription(),
                    () -> client.getClusterDescription().getServerDescriptions().stream()
                            .anyMatch(d -> d.isPrimary() && d.getAddress().toString().equals(next)));
            String db = UpstreamLane.freshDatabaseName("simawait");
            client.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1));
            assertEquals(1, set.direct().getDatabase(db).getCollection("c").countDocuments());
        }
    }

    /**
     * An injected NotWritablePrimary moves the member's topologyVersion on and answers the hellos it
     * holds: the driver's retry finds the primary at once, and does not wait out the held hello.
     */
    @Test
    void aRetryAfterAnInjectedStateChangeDoesNotWaitForAHeldHello() throws Exception {
        MongoClientSettings settings = MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(set.proxy().connectionString() + "&heartbeatFrequencyMS=120000"))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(5, TimeUnit.SECONDS))
                .build();
        String db = UpstreamLane.freshDatabaseName("simawaitshift");
        try (MongoClient client = MongoClients.create(settings)) {
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            c.insertOne(new Document("_id", 0));
            Await.until(Duration.ofSeconds(10), () -> "the driver streams from all three: " + client.getClusterDescription(),
                    () -> client.getClusterDescription().getServerDescriptions().stream().filter(d -> d.getTopologyVersion() != null).count() == 3);
            Thread.sleep(200); // the monitors' next hellos reach the node and are held
            set.proxy().rules().put(set.proxy().ruleParser().parse("r", BsonDocument.parse("{configureFailPoint: 'failCommand',"
                    + " mode: {times: 1}, data: {failCommands: ['insert'], error: 'NotWritablePrimary'}}")));

            c.insertOne(new Document("_id", 1)); // refused once, retried within the 5 s server selection, not after two minutes
        }
        assertEquals(1, Meters.retries(set.proxy().registry(), "insert"));
        assertEquals(2, set.direct().getDatabase(db).getCollection("c").countDocuments());
    }

    private static BsonDocument hello() {
        return new BsonDocument("hello", new BsonInt32(1)).append("$db", new BsonString("admin"));
    }

    /**
     * A restart's quiesce answers the awaitable hello a monitor has waiting at once, ShutdownInProgress, as mongod's
     * does: that check broke, and counts as the restart's fault as a new hello's does (a C user's pooled libmongoc
     * monitors saw it fail, and blackpipe counted nothing).
     */
    @ParameterizedTest(name = "flags {0}")
    @ValueSource(ints = {ONE_REPLY, ScriptedMongodWire.FLAG_EXHAUST_ALLOWED})
    void aRestartsQuiesceAnswersAHeldHelloAndCountsItsFault(int flags) throws Exception {
        Member secondary = set.proxy().members().get(1);
        try (WireSocket socket = new WireSocket(secondary.advertised().port(), 1, 30_000)) {
            BsonDocument known = topologyVersion(socket);
            int id = socket.sendMsg(flags, awaitable(known, 20_000));
            socket.expectSilence(100); // held: nothing moved
            double before = Meters.faults(set.proxy().registry(), io.blackpipe.fault.DeploymentFaults.RESTART, "hello");
            Thread restarter = new Thread(() -> set.proxy().restart(secondary.advertised().toString(),
                    new io.blackpipe.fault.Restart(1_000, 500)));
            restarter.start();
            byte[] answer = socket.read();
            assertEquals(id, ScriptedMongodWire.responseTo(answer));
            BsonDocument error = ScriptedMongodWire.parseOpMsg(answer).body();
            assertEquals(91, error.getInt32("code").getValue(), error::toJson);
            assertEquals(1, Meters.faults(set.proxy().registry(), io.blackpipe.fault.DeploymentFaults.RESTART, "hello") - before,
                    "the monitor's broken check counted as the restart's fault");
            restarter.join(30_000);
        }
    }

    private static BsonDocument awaitable(BsonDocument known, long maxAwaitMillis) {
        return hello().append("topologyVersion", known).append("maxAwaitTimeMS", new BsonInt64(maxAwaitMillis));
    }

    /** The member's topologyVersion, from a plain hello on the socket. */
    private static BsonDocument topologyVersion(WireSocket socket) throws Exception {
        return socket.readOk(socket.sendMsg(0, hello())).getDocument("topologyVersion");
    }
}
