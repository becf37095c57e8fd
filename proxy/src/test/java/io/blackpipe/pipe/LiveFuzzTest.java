package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.connection.ServerMonitoringMode;
import com.mongodb.event.ConnectionPoolClearedEvent;
import com.mongodb.event.ConnectionPoolListener;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.topology.MemberAddress;
import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.DecoderFuzzTest;
import io.blackpipe.wire.FrameDecoder;
import io.blackpipe.wire.Header;
import io.blackpipe.wire.MalformedMessageException;
import io.blackpipe.wire.OpCode;
import io.blackpipe.wire.OpMsg;
import io.blackpipe.wire.OpQuery;
import io.blackpipe.wire.WireFixtures;
import io.netty.buffer.ByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import io.netty.util.ReferenceCountUtil;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * Random and mutated frames against a live listener (a proxy in front of a {@link ScriptedMongod}).
 * For every connection the test judges offline, with the same decoder and views, whether the bytes
 * hold a malformed message:
 * <ul>
 * <li>malformed: the proxy must close the connection on its own (the client keeps its side open)
 *     and log a "malformed message" line naming the client;</li>
 * <li>otherwise (valid, or a truncated tail): the client half-closes, and the proxy must close.</li>
 * </ul>
 * Meanwhile a real driver client inserts and reads back through the same listener without a single
 * failure or pool clear; the blackpipe log never holds an "unexpected error"; and the proxy's
 * openConnections returns to its baseline. Default a few hundred connections;
 * -Dblackpipe.fuzz.minutes=M runs for M minutes. The seed is printed (-Dblackpipe.fuzz.seed=N).
 */
class LiveFuzzTest {
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(10);

    @Test
    void everyBadConnectionIsClosedAndNothingElseIsHurt() throws Exception {
        long seed = Long.getLong("blackpipe.fuzz.seed", System.nanoTime());
        double minutes = Double.parseDouble(System.getProperty("blackpipe.fuzz.minutes", "0"));
        long deadline = minutes > 0 ? System.nanoTime() + (long) (minutes * 60e9) : Long.MAX_VALUE;
        int connections = minutes > 0 ? Integer.MAX_VALUE : Integer.getInteger("blackpipe.fuzz.connections", 300);
        System.out.println("LiveFuzzTest seed=" + seed + " (rerun with -Dblackpipe.fuzz.seed=" + seed + ")");
        try (LogCapture log = LogCapture.start();
             ScriptedMongod upstream = ScriptedMongod.start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(upstream.uri()))) {
            AtomicInteger poolClears = new AtomicInteger();
            try (MongoClient driver = MongoClients.create(MongoClientSettings.builder()
                    .applyConnectionString(new ConnectionString(proxy.connectionString()))
                    .applyToClusterSettings(b -> b.serverSelectionTimeout(10, TimeUnit.SECONDS))
                    .applyToSocketSettings(b -> b.readTimeout(10, TimeUnit.SECONDS))
                    // one monitoring connection, open from the start: a streaming monitor opens its RTT
                    // connection some time later, maybe after the baseline count below
                    .applyToServerSettings(b -> b.serverMonitoringMode(ServerMonitoringMode.POLL))
                    .applyToConnectionPoolSettings(b -> b.addConnectionPoolListener(new ConnectionPoolListener() {
                        @Override
                        public void connectionPoolCleared(ConnectionPoolClearedEvent event) {
                            poolClears.incrementAndGet();
                        }
                    }))
                    .build())) {
                MongoCollection<Document> collection = driver.getDatabase("fuzz").getCollection("alive");
                collection.insertOne(new Document("_id", -1)); // warm: pool and monitor connections are open
                MemberAddress member = proxy.members().get(0).upstream();
                MemberAddress listener = proxy.members().get(0).advertised();
                int baseline = proxy.openConnections(member);

                AtomicBoolean stop = new AtomicBoolean();
                AtomicInteger driverOps = new AtomicInteger();
                AtomicReference<Throwable> driverFailure = new AtomicReference<>();
                Thread alive = new Thread(() -> {
                    int id = 0;
                    while (!stop.get() && driverFailure.get() == null) {
                        try {
                            collection.insertOne(new Document("_id", id).append("v", "x" + id));
                            Document back = collection.find(new Document("_id", id)).first();
                            if (back == null || !("x" + id).equals(back.getString("v"))) {
                                throw new AssertionError("read back " + back + " for _id " + id);
                            }
                            driverOps.incrementAndGet();
                            id++;
                        } catch (Throwable t) {
                            driverFailure.set(t);
                        }
                    }
                }, "live-fuzz-driver");
                alive.start();

                Random seeds = new Random(seed);
                ExecutorService pool = Executors.newFixedThreadPool(4);
                AtomicInteger malformed = new AtomicInteger();
                AtomicInteger total = new AtomicInteger();
                List<Future<?>> futures = new ArrayList<>();
                try {
                    for (int i = 0; i < connections && System.nanoTime() < deadline; i++) {
                        long caseSeed = seeds.nextLong();
                        int index = i;
                        total.incrementAndGet();
                        futures.add(pool.submit(() -> {
                            try {
                                if (oneConnection(listener, new Random(caseSeed), log)) {
                                    malformed.incrementAndGet();
                                }
                            } catch (Throwable t) {
                                throw new AssertionError("LiveFuzzTest seed=" + seed + " connection " + index
                                        + " (case seed " + caseSeed + "): " + t, t);
                            }
                            return null;
                        }));
                        if (futures.size() >= 64) {
                            futures.remove(0).get(1, TimeUnit.MINUTES);
                        }
                    }
                    for (Future<?> f : futures) {
                        f.get(1, TimeUnit.MINUTES);
                    }
                } finally {
                    pool.shutdownNow();
                    stop.set(true);
                    alive.join(20_000);
                }
                if (driverFailure.get() != null) {
                    throw new AssertionError("seed " + seed + ": the driver failed while bad connections came and went",
                            driverFailure.get());
                }
                assertTrue(driverOps.get() > 0, "the driver made no progress");
                assertEquals(0, poolClears.get(), "seed " + seed + ": the driver's pool must never be cleared");
                Await.until(Duration.ofSeconds(10), () -> "openConnections back to " + baseline + " (is "
                        + proxy.openConnections(member) + ")", () -> proxy.openConnections(member) == baseline);
                List<String> unexpected = log.messages().stream()
                        .filter(m -> m.contains("unexpected error")).toList();
                assertTrue(unexpected.isEmpty(), "seed " + seed + ": unhandled errors in the proxy: " + unexpected);
                assertTrue(malformed.get() > 0, "no connection carried a malformed message");
                System.out.println("LiveFuzzTest: " + total.get() + " connections, " + malformed.get()
                        + " judged malformed, driver made " + driverOps.get() + " round trips meanwhile");
            }
        }
    }

    /**
     * configureFailPoint and waitForFailPoint are the commands the proxy answers itself from the
     * client's document: random documents with their field names and random value types each get a
     * reply (ok 1 or an error), never a closed connection or an unexpected error.
     */
    @Test
    void randomConfigureFailPointCommandsAreAnsweredNotCrashedOn() throws Exception {
        long seed = Long.getLong("blackpipe.fuzz.seed", System.nanoTime());
        System.out.println("LiveFuzzTest configureFailPoint seed=" + seed);
        Random random = new Random(seed);
        String[] topKeys = {"configureFailPoint", "mode", "data"};
        String[] dataKeys = {"failCommands", "errorCode", "error", "errorLabels", "closeConnection", "resetConnection",
            "dropReply", "hang", "delayReplyMS", "member", "attempt", "topologyVersion", "writeConcernError", "failInternalCommands"};
        try (LogCapture log = LogCapture.start();
             ScriptedMongod upstream = ScriptedMongod.start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(upstream.uri()));
             RawClient client = RawClient.connect(proxy.members().get(0).advertised())) {
            for (int i = 0; i < 400; i++) {
                org.bson.BsonDocument command = new org.bson.BsonDocument("configureFailPoint",
                        random.nextInt(3) == 0 ? DecoderFuzzTest.randomValue(random, 1) : new org.bson.BsonString("failCommand"));
                for (String key : topKeys) {
                    if (!key.equals("configureFailPoint") && random.nextInt(4) > 0) {
                        command.append(key, pick(random, key));
                    }
                }
                if (command.containsKey("data") && random.nextBoolean()) {
                    org.bson.BsonDocument data = new org.bson.BsonDocument();
                    for (int k = random.nextInt(5); k > 0; k--) {
                        String key = dataKeys[random.nextInt(dataKeys.length)];
                        data.put(key, pick(random, key));
                    }
                    command.put("data", data);
                }
                if (random.nextInt(4) == 0) {
                    command = randomWaitForFailPoint(random);
                }
                command.append("$db", new org.bson.BsonString("admin"));
                byte[] request = WireFixtures.opMsg(1000 + i, 0, 0).body(WireFixtures.bson(command)).build();
                byte[] reply;
                try {
                    reply = client.roundTrip(request);
                } catch (java.io.IOException e) {
                    throw new AssertionError("seed " + seed + ": no reply to " + command.toJson() + "; log: " + log.messages(), e);
                }
                assertEquals(1000 + i, WireFixtures.readLe32(reply, 8), "the reply answers " + command.toJson());
            }
            List<String> unexpected = log.messages().stream().filter(m -> m.contains("unexpected error")).toList();
            assertTrue(unexpected.isEmpty(), "seed " + seed + ": unhandled errors in the proxy: " + unexpected);
        }
    }

    /**
     * waitForFailPoint with random names and values; its maxTimeMS is a few ms or not a number (so
     * refused), never absent or 0: a wait without a limit for a count never reached lasts forever, as on a server.
     */
    private static org.bson.BsonDocument randomWaitForFailPoint(Random random) {
        org.bson.BsonValue maxTime = DecoderFuzzTest.randomValue(random, 1);
        return new org.bson.BsonDocument("waitForFailPoint",
                random.nextBoolean() ? new org.bson.BsonString("failCommand") : DecoderFuzzTest.randomValue(random, 1))
                .append("timesEntered", random.nextBoolean() ? new org.bson.BsonInt64(random.nextInt(10) - 2) : DecoderFuzzTest.randomValue(random, 1))
                .append("maxTimeMS", maxTime.isNumber() || random.nextBoolean() ? new org.bson.BsonInt32(1 + random.nextInt(20)) : maxTime);
    }

    /** A plausible value for a failpoint field, or any random BSON value. */
    private static org.bson.BsonValue pick(Random random, String key) {
        if (random.nextInt(3) == 0) {
            return DecoderFuzzTest.randomValue(random, 2);
        }
        return switch (key) {
            case "mode" -> random.nextBoolean() ? new org.bson.BsonString(random.nextBoolean() ? "off" : "alwaysOn")
                    : new org.bson.BsonDocument(random.nextBoolean() ? "times" : "activationProbability", new org.bson.BsonDouble(random.nextDouble() * 2));
            case "failCommands" -> new org.bson.BsonArray(List.of(new org.bson.BsonString("ping")));
            case "errorCode", "delayReplyMS" -> new org.bson.BsonInt32(random.nextInt(20000) - 100);
            case "errorLabels" -> new org.bson.BsonArray(List.of(new org.bson.BsonString("RetryableWriteError")));
            case "writeConcernError" -> new org.bson.BsonDocument("code", DecoderFuzzTest.randomValue(random, 0));
            default -> DecoderFuzzTest.randomValue(random, 1);
        };
    }

    /** One connection's worth of random bytes; returns true when they were judged malformed. */
    private static boolean oneConnection(MemberAddress listener, Random random, LogCapture log) throws Exception {
        byte[] bytes;
        if (random.nextInt(10) == 0) {
            bytes = new byte[random.nextInt(120)];
            random.nextBytes(bytes);
            if (bytes.length >= 16 && random.nextBoolean()) {
                int[] ops = {OpCode.OP_MSG, OpCode.OP_QUERY, OpCode.OP_REPLY, OpCode.OP_COMPRESSED};
                bytes = WireFixtures.patchLe32(WireFixtures.patchLe32(bytes, 0, bytes.length), 12, ops[random.nextInt(4)]);
            }
        } else {
            DecoderFuzzTest.Generated g = DecoderFuzzTest.message(random);
            if (random.nextInt(8) != 0) {
                DecoderFuzzTest.mutate(g, random);
            }
            bytes = g.bytes;
        }
        boolean malformed = judge(bytes);
        try (RawClient client = RawClient.connect(listener)) {
            client.send(bytes);
            if (!malformed) {
                client.socket.shutdownOutput();
            }
            client.awaitClosedByPeer(CLOSE_TIMEOUT);
            if (malformed) {
                String name = client.logName();
                log.await(m -> m.contains(name + " ") && m.contains("malformed"), CLOSE_TIMEOUT,
                        "about the malformed message of " + name);
            }
        }
        return malformed;
    }

    /** Whether the proxy's client side must reject these bytes: the decoder or a request view refuses a frame. */
    static boolean judge(byte[] bytes) {
        EmbeddedChannel channel = new EmbeddedChannel(new FrameDecoder());
        List<ByteBuf> frames = new ArrayList<>();
        try {
            try {
                channel.writeInbound(WireFixtures.buf(bytes));
            } catch (DecoderException e) {
                if (!(e.getCause() instanceof MalformedMessageException)) {
                    throw e;
                }
                return true;
            }
            Object o;
            while ((o = channel.readInbound()) != null) {
                frames.add((ByteBuf) o);
            }
            for (ByteBuf frame : frames) {
                try {
                    switch (Header.opCode(frame)) {
                        case OpCode.OP_MSG -> CommandFacts.ofOpMsg(frame, OpMsg.parse(frame));
                        case OpCode.OP_QUERY -> CommandFacts.ofOpQuery(frame, OpQuery.parse(frame));
                        case OpCode.OP_REPLY -> {
                            return true; // clients do not send replies
                        }
                        default -> {
                        }
                    }
                } catch (MalformedMessageException e) {
                    return true;
                }
            }
            return false;
        } finally {
            frames.forEach(ReferenceCountUtil::release);
            channel.finishAndReleaseAll();
        }
    }
}
