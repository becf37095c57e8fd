package io.blackpipe.pipe;

import static io.blackpipe.wire.WireFixtures.OP_MSG;
import static io.blackpipe.wire.WireFixtures.bson;
import static io.blackpipe.wire.WireFixtures.bytes;
import static io.blackpipe.wire.WireFixtures.concat;
import static io.blackpipe.wire.WireFixtures.cstring;
import static io.blackpipe.wire.WireFixtures.decode;
import static io.blackpipe.wire.WireFixtures.header;
import static io.blackpipe.wire.WireFixtures.le32;
import static io.blackpipe.wire.WireFixtures.message;
import static io.blackpipe.wire.WireFixtures.opMsg;
import static io.blackpipe.wire.WireFixtures.opReply;
import static io.blackpipe.wire.WireFixtures.patchLe32;
import static io.blackpipe.wire.WireFixtures.range;
import static io.blackpipe.wire.WireFixtures.readLe32;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.event.ConnectionClosedEvent;
import com.mongodb.event.ConnectionPoolClearedEvent;
import com.mongodb.event.ConnectionPoolListener;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.topology.Member;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntFunction;
import java.util.stream.Stream;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A protocol violation on one connection closes exactly that connection, with a log line naming
 * the reason and the client, and nothing else: a driver using the same listener keeps working
 * (no pool clear, no closed connection) during and after. Every case runs against two proxies:
 * one in front of the lane's real upstream, one in front of a {@link ScriptedMongod} that also
 * shows that the bad bytes never reached the upstream.
 */
class BadInputListenerTest {
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(5);
    private static final AtomicInteger REQUEST_IDS = new AtomicInteger(0x0BAD_0000);

    private static LogCapture log;
    private static Target lane;
    private static Target scripted;

    /** One bad input: the bytes (built with a given requestID), whether the client then half-closes, and the logged reason. */
    record BadCase(String name, IntFunction<byte[]> bytes, boolean halfClose, String reason) {
        @Override
        public String toString() {
            return name;
        }
    }

    /** A proxy, the driver that uses it, and what that driver saw. */
    static final class Target implements AutoCloseable {
        final String name;
        final ProxyServer proxy;
        final ScriptedMongod upstream; // null for the lane
        final MongoClient driver;
        final MongoCollection<Document> collection;
        final AtomicInteger poolClears = new AtomicInteger();
        final AtomicInteger driverConnectionsClosed = new AtomicInteger();

        Target(String name, String upstreamUri, ScriptedMongod upstream, String database) {
            this.name = name;
            this.upstream = upstream;
            this.proxy = ProxyServer.start(ProxyConfig.embedded(upstreamUri));
            this.driver = MongoClients.create(MongoClientSettings.builder()
                    .applyConnectionString(new ConnectionString(proxy.connectionString()))
                    .applyToClusterSettings(b -> b.serverSelectionTimeout(10, TimeUnit.SECONDS))
                    .applyToConnectionPoolSettings(b -> b.addConnectionPoolListener(new ConnectionPoolListener() {
                        @Override
                        public void connectionPoolCleared(ConnectionPoolClearedEvent event) {
                            poolClears.incrementAndGet();
                        }

                        @Override
                        public void connectionClosed(ConnectionClosedEvent event) {
                            driverConnectionsClosed.incrementAndGet();
                        }
                    }))
                    .build());
            this.collection = driver.getDatabase(database).getCollection("survivors");
            driver.getDatabase("admin").runCommand(new Document("ping", 1)); // warm: monitor and pool connections exist
        }

        Member member() {
            return proxy.members().get(0);
        }

        int proxiedConnections() {
            return proxy.openConnections(member().upstream());
        }

        /** The driver's proof of life: a write and a read of it through the proxy. */
        void driverWorks(String label) {
            int id = REQUEST_IDS.incrementAndGet();
            collection.insertOne(new Document("_id", id).append("label", label));
            Document back = collection.find(new Document("_id", id)).first();
            assertEquals(label, back == null ? null : back.getString("label"), name + ": the driver's write must read back");
            assertEquals(0, poolClears.get(), name + ": the driver's pool must never be cleared");
            assertEquals(0, driverConnectionsClosed.get(), name + ": none of the driver's connections may be closed");
        }

        @Override
        public void close() {
            driver.close();
            proxy.close();
            if (upstream != null) {
                upstream.close();
            }
        }
    }

    @BeforeAll
    static void start() throws Exception {
        log = LogCapture.start();
        lane = new Target("lane", UpstreamLane.uri(), null, UpstreamLane.freshDatabaseName("badinput"));
        ScriptedMongod upstream = ScriptedMongod.start();
        scripted = new Target("scripted", "mongodb://" + upstream.address() + "/?replicaSet=" + ScriptedMongod.SET_NAME,
                upstream, "badinput");
    }

    @AfterAll
    static void stop() {
        for (AutoCloseable closeable : new AutoCloseable[] {lane, scripted, log}) {
            try {
                if (closeable != null) {
                    closeable.close();
                }
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }

    private static byte[] ping(int requestId) {
        return opMsg(requestId, 0, 0).body("{ping: 1, $db: 'admin'}").build();
    }

    static List<BadCase> badCases() {
        List<BadCase> cases = new ArrayList<>();
        cases.add(new BadCase("length under 16", id -> header(8, id, 0, OP_MSG), false,
                "message length 8 is shorter than the 16-byte header"));
        cases.add(new BadCase("negative length", id -> header(-20, id, 0, OP_MSG), false,
                "message length -20 is shorter than the 16-byte header"));
        cases.add(new BadCase("length over 48,000,000", id -> concat(header(48_000_001, id, 0, OP_MSG), new byte[64]), false,
                "message length 48000001 exceeds the limit of 48000000 bytes"));
        cases.add(new BadCase("unknown opcode", id -> message(id, 0, 2010, bson("{ping: 1}")), false,
                "unknown opcode 2010"));
        cases.add(new BadCase("OP_MSG unknown required flag bit", id -> opMsg(id, 0, 1 << 2).body("{ping: 1, $db: 'admin'}").build(),
                false, "unknown required flag bits 0x4"));
        cases.add(new BadCase("OP_MSG unknown section kind", id -> opMsg(id, 0, 0).body("{ping: 1, $db: 'admin'}")
                .raw(concat(bytes(2), bson("{x: 1}"))).build(), false, "unknown section kind 2"));
        cases.add(new BadCase("BSON length longer than the message", id -> {
            byte[] frame = ping(id);
            return patchLe32(frame, 21, frame.length - 21 + 64); // the body document starts after header, flags, kind byte
        }, false, "does not fit in"));
        cases.add(new BadCase("BSON length shorter than the document", id -> patchLe32(ping(id), 21, 6), false,
                "BSON document is not terminated by 0x00"));
        cases.add(new BadCase("document sequence size beyond the message", id -> opMsg(id, 0, 0)
                .body("{insert: 'c', $db: 'test'}")
                .raw(concat(bytes(1), le32(1000), cstring("documents"), bson("{a: 1}"))).build(), false,
                "document sequence size 1000 is out of bounds"));
        cases.add(new BadCase("OP_MSG with no room for a body", id -> header(16, id, 0, OP_MSG), false,
                "OP_MSG of 16 bytes is too short to hold a body"));
        cases.add(new BadCase("OP_MSG with only a document sequence", id -> opMsg(id, 0, 0)
                .sequence("documents", bson("{a: 1}")).build(), false, "OP_MSG has no body section"));
        cases.add(new BadCase("OP_MSG with two bodies", id -> opMsg(id, 0, 0).body("{ping: 1, $db: 'admin'}")
                .body("{ping: 1, $db: 'admin'}").build(), false, "OP_MSG has more than one body section"));
        cases.add(new BadCase("OP_QUERY with an unterminated collection name", id -> message(id, 0, 2004,
                concat(le32(0), "admin.$cmd".repeat(3).getBytes(StandardCharsets.US_ASCII))), false,
                "OP_QUERY collection name is not terminated"));
        cases.add(new BadCase("bad checksum", id -> opMsg(id, 0, 1).body("{ping: 1, $db: 'admin'}").corruptChecksum().build(),
                false, "checksum mismatch"));
        cases.add(new BadCase("OP_REPLY sent by a client", id -> opReply(id, 0, 0, 0L, 0, 1, bson("{ok: 1}")), false,
                "clients do not send OP_REPLY"));
        cases.add(new BadCase("an HTTP request", id -> "GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n".getBytes(StandardCharsets.US_ASCII),
                false, "message length 542393671 exceeds the limit of 48000000 bytes (it reads as an HTTP request (\"GET ...\"): an"
                + " HTTP client on a MongoDB port; the admin API is on --admin-port)"));
        cases.add(new BadCase("an HTTP/2 client with prior knowledge", id -> "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII),
                false, "message length 541676112 exceeds the limit of 48000000 bytes (it reads as HTTP/2's connection preface (\"PRI *"
                + " HTTP/2.0\"): an HTTP/2 or gRPC client on a MongoDB port; the admin API is on --admin-port, and speaks HTTP/1.1)"));
        cases.add(new BadCase("a TLS ClientHello on a plaintext port", id -> concat(new byte[] {0x16, 0x03, 0x01, 0x00, (byte) 0xa5, 0x01,
                0x00, 0x00, (byte) 0xa1, 0x03, 0x03}, new byte[32]), false, "unknown opcode 0 (it begins a TLS handshake: the client"
                + " uses TLS and this listener does not; start the proxy with --tls-cert and --tls-key, or connect without TLS (the app"
                + " turns it on with tls=true in the URI, or in code: mongoc_uri_set_option_as_bool(uri, MONGOC_URI_TLS, true) in C,"
                + " ['tls' => true] in PHP's URI options))"));
        cases.add(new BadCase("frame truncated by the client closing", id -> range(ping(id), 0, 30), true,
                "closed in the middle of a message (" + (ping(0).length - 30) + " bytes missing)"));
        cases.add(new BadCase("header truncated by the client closing", id -> range(ping(id), 0, 10), true,
                "closed in the middle of a message (" + (ping(0).length - 10) + " bytes missing)"));
        cases.add(new BadCase("length field truncated by the client closing", id -> range(ping(id), 0, 3), true,
                "closed in the middle of a message (header incomplete)"));
        return cases;
    }

    static Stream<Arguments> targetsAndCases() {
        return Stream.of("lane", "scripted").flatMap(t -> badCases().stream().map(c -> Arguments.of(t, c)));
    }

    private static Target target(String name) {
        return name.equals("lane") ? lane : scripted;
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("targetsAndCases")
    void aBadInputClosesOnlyItsConnectionWithALogLine(String targetName, BadCase bad) throws Exception {
        Target target = target(targetName);
        target.driverWorks("before " + bad.name());
        int proxiedBefore = target.proxiedConnections();
        int upstreamBefore = target.upstream == null ? -1 : target.upstream.openConnections();
        int requestId = REQUEST_IDS.incrementAndGet();

        try (RawClient client = RawClient.connect(target.member().advertised())) {
            Await.until(CLOSE_TIMEOUT, "the proxy to count the raw connection", () -> target.proxiedConnections() == proxiedBefore + 1);
            target.driverWorks("during " + bad.name()); // a bad client is connected: the driver does not care

            client.send(bad.bytes().apply(requestId));
            if (bad.halfClose()) {
                client.socket.shutdownOutput();
            }
            byte[] received = client.awaitClosedByPeer(CLOSE_TIMEOUT);
            assertEquals(0, received.length, "nothing may be answered to a malformed message");

            String line = log.awaitContaining(CLOSE_TIMEOUT, client.logName(), bad.reason());
            assertTrue(line.contains(client.logName()), line);
        }

        Await.until(CLOSE_TIMEOUT, () -> "the proxy's open connections back to " + proxiedBefore + ", now " + target.proxiedConnections(),
                () -> target.proxiedConnections() == proxiedBefore);
        if (target.upstream != null) {
            ScriptedMongod upstream = target.upstream;
            Await.until(CLOSE_TIMEOUT, () -> "the paired upstream connection to close: " + upstream.openConnections()
                    + " open, " + upstreamBefore + " before", () -> upstream.openConnections() == upstreamBefore);
            assertEquals(List.of(), upstream.framesReceived(f -> f.requestId() == requestId),
                    "the malformed message must not reach the upstream");
            assertEquals(List.of(), upstream.errors(), "the upstream saw no protocol error");
        }
        target.driverWorks("after " + bad.name());
    }

    /**
     * A bad message in one write with more behind it: one line names the reason, and nothing after it is read. The
     * messages behind it were cut anyway, and each logged its own refusal, and the bytes left at the close "a message cut
     * short": a fuzzer saw 25 lines for one client.
     */
    @Test
    void aBadMessageWithMoreBehindItInOneWriteLogsOneLine() throws Exception {
        byte[] bad = opMsg(REQUEST_IDS.incrementAndGet(), 0, 0).body("{ping: 1, $db: 'admin'}").raw(concat(bytes(2), bson("{x: 1}"))).build();
        byte[] burst = new byte[0];
        for (int i = 0; i < 20; i++) {
            burst = concat(burst, bad);
        }
        int pingBehind = REQUEST_IDS.incrementAndGet();
        burst = concat(burst, ping(pingBehind), new byte[] {9, 0, 0}); // and the start of one more
        try (RawClient client = RawClient.connect(scripted.member().advertised())) {
            client.send(burst);
            assertEquals(0, client.awaitClosedByPeer(CLOSE_TIMEOUT).length);
            log.awaitContaining(CLOSE_TIMEOUT, client.logName(), "unknown section kind 2");
            Thread.sleep(300); // what more the close would log
            // this proxy's member too: another test's client may have had the same port, its close logged late
            String who = client.logName() + " on member " + scripted.member().upstream();
            List<String> aboutIt = log.messages().stream().filter(m -> m.contains(who)).toList();
            assertEquals(1, aboutIt.size(), () -> "one line for the client: " + aboutIt);
        }
        assertEquals(List.of(), scripted.upstream.framesReceived(f -> f.requestId() == pingBehind), "nothing after it was forwarded");
        scripted.driverWorks("after a burst");
    }

    /** Near misses that are valid: an optional flag bit, a correct checksum, a document sequence. None closes anything. */
    @Test
    void validMessagesCloseToTheLimitsPassOnOneConnection() throws Exception {
        ScriptedMongod upstream = scripted.upstream;
        try (RawClient client = RawClient.connect(scripted.member().advertised())) {
            List<byte[]> requests = List.of(
                    opMsg(REQUEST_IDS.incrementAndGet(), 0, 1 << 20).body("{ping: 1, $db: 'admin'}").build(),
                    opMsg(REQUEST_IDS.incrementAndGet(), 0, 1).body("{ping: 1, $db: 'admin'}").build(),
                    opMsg(REQUEST_IDS.incrementAndGet(), 0, 0).body("{insert: 'nearmiss', $db: 'badinput'}")
                            .sequence("documents", bson("{_id: 1}"), bson("{_id: 2}")).build());
            for (byte[] request : requests) {
                int requestId = readLe32(request, 4);
                byte[] reply = client.roundTrip(request);
                assertEquals(requestId, readLe32(reply, 8), "the reply answers the request");
                assertEquals(1, upstream.framesReceived(f -> f.requestId() == requestId).size(), "forwarded once");
                BsonDocument body = decode(range(reply, 21,
                        21 + readLe32(reply, 21)));
                assertEquals(1.0, body.getNumber("ok").doubleValue(), body::toJson);
            }
        }
        assertEquals(2, upstream.documents("badinput", "nearmiss").size());
        assertEquals(List.of(), upstream.errors());
    }

    /** Many bad clients at once, on both listeners, while a driver keeps writing through each. */
    @Test
    void aFloodOfBadConnectionsLeavesBusyDriversAlone() throws Exception {
        List<BadCase> cases = badCases();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> driverFailure = new AtomicReference<>();
        AtomicInteger driverRounds = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(6);
        try {
            List<Future<?>> drivers = new ArrayList<>();
            for (Target target : List.of(lane, scripted)) {
                drivers.add(pool.submit(() -> {
                    while (!stop.get()) {
                        try {
                            target.driverWorks("flood");
                            driverRounds.incrementAndGet();
                        } catch (Throwable t) {
                            driverFailure.compareAndSet(null, t);
                            return;
                        }
                    }
                }));
            }
            List<Future<Integer>> attackers = new ArrayList<>();
            for (int thread = 0; thread < 4; thread++) {
                int offset = thread;
                attackers.add(pool.submit(() -> {
                    int closed = 0;
                    for (int round = 0; round < 3; round++) {
                        for (int i = 0; i < cases.size(); i++) {
                            BadCase bad = cases.get((i + offset) % cases.size());
                            Target target = (i + round + offset) % 2 == 0 ? lane : scripted;
                            try (RawClient client = RawClient.connect(target.member().advertised())) {
                                client.send(bad.bytes().apply(REQUEST_IDS.incrementAndGet()));
                                if (bad.halfClose()) {
                                    client.socket.shutdownOutput();
                                }
                                assertEquals(0, client.awaitClosedByPeer(CLOSE_TIMEOUT).length);
                                closed++;
                            }
                        }
                    }
                    return closed;
                }));
            }
            int closed = 0;
            for (Future<Integer> attacker : attackers) {
                closed += attacker.get(60, TimeUnit.SECONDS);
            }
            assertEquals(4 * 3 * cases.size(), closed, "every bad connection was closed by the proxy");
            int roundsDuringFlood = driverRounds.get();
            stop.set(true);
            for (Future<?> driver : drivers) {
                driver.get(30, TimeUnit.SECONDS);
            }
            if (driverFailure.get() != null) {
                throw new AssertionError("a driver failed during the flood", driverFailure.get());
            }
            assertTrue(roundsDuringFlood > 0, "the drivers did work while the flood ran");
        } finally {
            stop.set(true);
            pool.shutdownNow();
            pool.awaitTermination(10, TimeUnit.SECONDS);
        }
        lane.driverWorks("after the flood");
        scripted.driverWorks("after the flood");
        assertEquals(List.of(), scripted.upstream.errors(), "no malformed message reached the scripted upstream");
    }
}
