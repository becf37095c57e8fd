package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.event.ServerHeartbeatSucceededEvent;
import com.mongodb.event.ServerMonitorListener;
import io.blackpipe.BlackPipe;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.NodeSpecDriver;
import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.testing.WireSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.Document;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A proxy in front of the lane's real members answers awaitable hellos as a server does, whatever
 * the member does with them. A mongod holds one until its topologyVersion moves on or the wait
 * ends, and streams a reply of each to a client that allowed it; jongodb answers every one at once
 * and ends every stream with that one reply, with a processId of isMaster's own. Passed on, that
 * had an idle Java driver make tens of thousands of heartbeats in ten seconds and the Node.js
 * driver fail a heartbeat at each stream's end; and held without one processId per member, a
 * retry after an injected NotWritablePrimary waited out the hold.
 */
class AwaitableHelloLaneTest {
    private static final int ONE_REPLY = 0;
    private static final int WAIT_MILLIS = 1_200;

    private BlackPipe blackPipe;

    @BeforeEach
    void start() {
        blackPipe = BlackPipe.start(UpstreamLane.uri());
    }

    @AfterEach
    void stop() {
        blackPipe.close();
    }

    private WireSocket socket() throws Exception {
        return new WireSocket(blackPipe.server().members().get(0).advertised().port(), 1, 30_000);
    }

    /** One reply (flags 0) and a streamed hello alike: the first answer comes when the wait ends, not before. */
    @ParameterizedTest(name = "flags {0}")
    @ValueSource(ints = {ONE_REPLY, ScriptedMongodWire.FLAG_EXHAUST_ALLOWED})
    void anAwaitableHelloIsAnsweredWhenItsWaitEnds(int flags) throws Exception {
        try (WireSocket socket = socket()) {
            BsonDocument known = socket.readOk(socket.sendMsg(0, hello("hello"))).getDocument("topologyVersion");
            long sent = System.nanoTime();
            int id = socket.sendMsg(flags, awaitable(known, WAIT_MILLIS));
            byte[] answer = socket.read();
            long tookMillis = (System.nanoTime() - sent) / 1_000_000;
            assertTrue(tookMillis >= WAIT_MILLIS - 50, "answered after " + tookMillis + " ms, before its wait of " + WAIT_MILLIS);
            assertEquals(id, ScriptedMongodWire.responseTo(answer));
            assertEquals(known, ScriptedMongodWire.parseOpMsg(answer).body().getDocument("topologyVersion"));
            assertEquals(flags == ONE_REPLY ? 0 : ScriptedMongodWire.FLAG_MORE_TO_COME,
                    ScriptedMongodWire.parseOpMsg(answer).flags() & ScriptedMongodWire.FLAG_MORE_TO_COME);
        }
    }

    /**
     * A streamed hello that knows an older version (another process's) is answered at once, as a
     * server does, and the stream goes on: each next reply a wait later, answering the last.
     */
    @Test
    void aStreamedHelloThatKnowsAnOlderVersionIsAnsweredAtOnceAndStreamsOn() throws Exception {
        BsonDocument other = new BsonDocument("processId", new BsonObjectId(new ObjectId())).append("counter", new BsonInt64(0));
        try (WireSocket socket = socket()) {
            socket.sendMsg(ScriptedMongodWire.FLAG_EXHAUST_ALLOWED, awaitable(other, 60_000));
            // within the socket's 30 s, though the wait is a minute: not held
            assertTrue(ScriptedMongodWire.parseOpMsg(socket.read()).moreToCome(), "a stream's first reply says more is to come");
        }
        try (WireSocket socket = socket()) {
            BsonDocument known = socket.readOk(socket.sendMsg(0, hello("hello"))).getDocument("topologyVersion");
            long sent = System.nanoTime();
            int answers = socket.sendMsg(ScriptedMongodWire.FLAG_EXHAUST_ALLOWED, awaitable(other, 500));
            for (int i = 0; i < 3; i++) {
                byte[] streamed = socket.read();
                ScriptedMongodWire.OpMsg reply = ScriptedMongodWire.parseOpMsg(streamed);
                assertTrue(reply.moreToCome(), "reply " + i + " says more is to come");
                assertEquals(answers, ScriptedMongodWire.responseTo(streamed), "reply " + i + " answers the one before");
                assertEquals(known, reply.body().getDocument("topologyVersion"));
                answers = ScriptedMongodWire.requestId(streamed);
            }
            long tookMillis = (System.nanoTime() - sent) / 1_000_000;
            assertTrue(tookMillis >= 2 * 500 - 50, "three replies in " + tookMillis + " ms: the second and third a wait apart");
        }
    }

    /** A member's hello and isMaster replies name one processId, as mongod's do (jongodb's name two). */
    @Test
    void helloAndIsMasterNameOneProcessId() throws Exception {
        try (WireSocket socket = socket()) {
            BsonDocument byHello = socket.readOk(socket.sendMsg(0, hello("hello"))).getDocument("topologyVersion");
            BsonDocument byIsMaster = socket.readOk(socket.sendMsg(0, hello("isMaster"))).getDocument("topologyVersion");
            BsonDocument byLegacy = socket.readOk(socket.sendMsg(0, hello("ismaster"))).getDocument("topologyVersion");
            assertEquals(byHello.get("processId"), byIsMaster.get("processId"));
            assertEquals(byHello.get("processId"), byLegacy.get("processId"));
        }
    }

    /** The real Java driver, idle, asks about once a wait per member, not without pause, and then writes. */
    @Test
    void anIdleJavaDriverAsksAboutOnceAWait() throws Exception {
        AtomicLong heartbeats = new AtomicLong();
        try (MongoClient client = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(blackPipe.connectionString() + "&heartbeatFrequencyMS=1000"))
                .applyToServerSettings(b -> b.addServerMonitorListener(new ServerMonitorListener() {
                    @Override
                    public void serverHeartbeatSucceeded(ServerHeartbeatSucceededEvent event) {
                        heartbeats.incrementAndGet();
                    }
                })).build())) {
            client.getDatabase("admin").runCommand(new Document("ping", 1));
            long before = heartbeats.get();
            Thread.sleep(3_000);
            long idle = heartbeats.get() - before;
            int members = blackPipe.server().members().size();
            // a heartbeat a second for each member; the node's answers passed on at once made thousands
            assertTrue(idle <= 10L * members, idle + " heartbeats in 3 s from an idle driver, " + members + " member(s)");

            String db = UpstreamLane.freshDatabaseName("awaitlaneidle");
            client.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1)); // the held streams left it usable
            try (MongoClient direct = UpstreamLane.directClient()) {
                assertEquals(1, direct.getDatabase(db).getCollection("c").countDocuments(), "its write after the idle time landed once");
            }
        }
    }

    /**
     * After each injected NotWritablePrimary the driver's retry goes on at once, not when the
     * monitor's held hello ends (here two minutes, beyond the five seconds of server selection),
     * and that also after a new connection's handshake (isMaster) came in between.
     */
    @Test
    void eachRetryAfterAnInjectedStateChangeGoesOnAtOnce() throws Exception {
        String db = UpstreamLane.freshDatabaseName("awaitlaneretry");
        try (MongoClient client = clientWhoseMonitorWaitsTwoMinutes()) {
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            c.insertOne(new Document("_id", 0));
            for (int i = 1; i <= 3; i++) {
                try (MongoClient other = MongoClients.create(blackPipe.connectionString() + "&serverMonitoringMode=poll")) {
                    other.getDatabase(db).getCollection("other").insertOne(new Document("_id", i)); // its handshakes: isMaster
                }
                blackPipe.fail("insert").times(1).error("NotWritablePrimary");
                c.insertOne(new Document("_id", i)); // refused once, retried within the 5 s of server selection
            }
        }
        assertEquals(3, Meters.retries(blackPipe.server().registry(), "insert"));
        try (MongoClient direct = UpstreamLane.directClient()) {
            assertEquals(4, direct.getDatabase(db).getCollection("c").countDocuments());
        }
    }

    /** A client whose monitor's awaitable hello waits two minutes, and whose server selection gives up after five seconds. */
    private MongoClient clientWhoseMonitorWaitsTwoMinutes() {
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(blackPipe.connectionString() + "&heartbeatFrequencyMS=120000"))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(5, TimeUnit.SECONDS)).build());
    }

    /**
     * The same after a writeConcernError of a not-primary code, which mongod gives its topologyVersion: the write ran,
     * the retry (answered from the first run) goes on at once. Without a topologyVersion the retry waited out the
     * monitor's held hello: here two minutes, beyond server selection's five seconds.
     */
    @Test
    void aRetryAfterAStateChangeWriteConcernErrorGoesOnAtOnce() throws Exception {
        String db = UpstreamLane.freshDatabaseName("awaitlanewce");
        try (MongoClient client = clientWhoseMonitorWaitsTwoMinutes()) {
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            c.insertOne(new Document("_id", 0));
            blackPipe.fail("insert").times(1).writeConcernError(10107, "not primary");
            c.insertOne(new Document("_id", 1)); // applied, its writeConcernError retried within the 5 s of server selection
        }
        assertEquals(1, Meters.retries(blackPipe.server().registry(), "insert"));
        try (MongoClient direct = UpstreamLane.directClient()) {
            assertEquals(2, direct.getDatabase(db).getCollection("c").countDocuments(), "each insert once");
        }
    }

    /**
     * The Node.js driver: idle, it fails no heartbeat (jongodb ends each stream); and an insert it
     * sends at once, refused with NotWritablePrimary before its monitor's first awaitable hello,
     * is retried at once. Node's monitor asks then with the error's topologyVersion, which the
     * member's replies, one newer, answer at once; were they the error's own, a server would hold
     * that hello its whole wait (ten seconds), and the retry would fail server selection (five).
     */
    @Test
    void theNodeDriverFailsNoHeartbeatAndItsRetryInItsFirstMomentGoesOn() throws Exception {
        String db = UpstreamLane.freshDatabaseName("awaitlanenode");
        BsonDocument idle = runNode("idle-heartbeats.js", blackPipe.connectionString() + "&heartbeatFrequencyMS=500", "3000", db);
        assertEquals(0, idle.getInt32("failed").getValue(), idle::toJson);
        assertTrue(idle.getInt32("awaited").getValue() >= 3, "an awaited heartbeat a wait: " + idle.toJson());

        String retried = UpstreamLane.freshDatabaseName("awaitlanenodeat");
        blackPipe.fail("insert").times(1).error("NotWritablePrimary");
        runNode("insert-at-once.js", blackPipe.connectionString(), retried);
        assertEquals(1, Meters.retries(blackPipe.server().registry(), "insert"));
        try (MongoClient direct = UpstreamLane.directClient()) {
            assertEquals(1, direct.getDatabase(db).getCollection("c").countDocuments(), "the idle client's write landed once");
            assertEquals(1, direct.getDatabase(retried).getCollection("c").countDocuments(), "the retried insert landed once");
        }
    }

    /** Runs a script of src/test/resources/node with the pinned driver; its last line, a JSON document. */
    private static BsonDocument runNode(String script, String... args) throws Exception {
        Path path = Path.of(AwaitableHelloLaneTest.class.getResource("/node/" + script).toURI());
        StringBuilder command = new StringBuilder(NodeSpecDriver.commandFor(path));
        for (int i = 0; i < args.length; i++) {
            command.append(" \"$").append(i).append('"');
        }
        String[] argv = new String[args.length + 3];
        argv[0] = "bash";
        argv[1] = "-c";
        argv[2] = command.toString();
        System.arraycopy(args, 0, argv, 3, args.length);
        Process node = new ProcessBuilder(argv).redirectErrorStream(true).start();
        String output = new String(node.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertTrue(node.waitFor(60, TimeUnit.SECONDS), output);
        assertEquals(0, node.exitValue(), output);
        return BsonDocument.parse(output.substring(output.lastIndexOf('\n') + 1));
    }

    private static BsonDocument hello(String command) {
        return new BsonDocument(command, new BsonInt32(1)).append("$db", new BsonString("admin"));
    }

    private static BsonDocument awaitable(BsonDocument known, long maxAwaitMillis) {
        return hello("hello").append("topologyVersion", known).append("maxAwaitTimeMS", new BsonInt64(maxAwaitMillis));
    }
}
