package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.NettyLeakCheck;
import io.blackpipe.testing.RawUpstream;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.testing.TcpTap;
import io.blackpipe.topology.Member;
import io.blackpipe.wire.BlockingCommandClient;
import io.netty.channel.EventLoop;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * How a client connection and its upstream connection live and die together: an unreachable
 * member looks like a down node, either side closing closes the other (without losing what was
 * already on its way), and a client that stops reading stops the proxy reading from the upstream.
 */
class ConnectionLifecycleTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private static String replicaSetUri(String address) {
        return "mongodb://" + address + "/?replicaSet=" + ScriptedMongod.SET_NAME;
    }

    private static byte[] hello(int requestId) {
        return ScriptedMongodWire.buildOpMsg(requestId, 0, 0,
                new BsonDocument("hello", new BsonInt32(1)).append("$db", new BsonString("admin")), null);
    }

    private static BsonDocument body(byte[] opMsg) {
        // header (16) + flagBits (4) + section kind (1), then the body document
        return ScriptedMongodWire.decodeDocument(opMsg, 21, ScriptedMongodWire.intLE(opMsg, 21));
    }

    private static MongoClient driver(String uri) {
        return MongoClients.create(MongoClientSettings.builder().applyConnectionString(new ConnectionString(uri)).build());
    }

    // ------------------------------------------------------------------ upstream unreachable

    @Test
    void anUnreachableUpstreamClosesTheClientAtOnceAndTheDriverSeesANetworkError() throws Exception {
        ScriptedMongod upstream = ScriptedMongod.start();
        String upstreamAddress = upstream.address();
        try (LogCapture log = LogCapture.start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(replicaSetUri(upstreamAddress)))) {
            Member member = proxy.members().get(0);
            upstream.close(); // the member goes down after the proxy started

            long start = System.nanoTime();
            try (RawClient client = RawClient.connect(member.advertised())) {
                client.send(hello(1));
                byte[] received = client.awaitClosedByPeer(Duration.ofSeconds(4));
                long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                assertEquals(0, received.length, "a down member answers nothing");
                assertTrue(elapsedMs < 2_500, "closed after " + elapsedMs + " ms; the connect timeout is 5000 ms and a refused"
                        + " connection must close the client at once");
                log.awaitContaining(TIMEOUT, "upstream " + upstreamAddress + " unreachable", client.logName());
            }
            Await.until(TIMEOUT, "no open connection on the member", () -> proxy.openConnections(member.upstream()) == 0);

            try (MongoClient client = driver(proxy.connectionString() + "&serverSelectionTimeoutMS=1000&connectTimeoutMS=2000")) {
                RuntimeException e = assertThrows(RuntimeException.class,
                        () -> client.getDatabase("admin").runCommand(new Document("ping", 1)));
                boolean networkError = e instanceof MongoSocketException
                        || e instanceof MongoTimeoutException && Pattern.compile("MongoSocket\\w*Exception").matcher(e.getMessage()).find();
                System.out.println("[unreachable] the driver saw: " + e);
                assertTrue(networkError, "expected a socket error (or a selection timeout caused by one), got " + e);
            }
        }
    }

    // ------------------------------------------------------------------ client closes

    @Test
    void aClientClosingClosesItsUpstreamConnection() throws Exception {
        try (ScriptedMongod upstream = ScriptedMongod.start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(replicaSetUri(upstream.address())))) {
            Member member = proxy.members().get(0);
            Await.until(TIMEOUT, "the discovery connection to end", () -> upstream.openConnections() == 0);

            try (RawClient client = RawClient.connect(member.advertised())) {
                BsonDocument reply = body(client.roundTrip(hello(1)));
                assertEquals(member.advertised().toString(), reply.getString("me").getValue());
                assertEquals(1, proxy.openConnections(member.upstream()));
                Await.until(TIMEOUT, "one upstream connection for one client", () -> upstream.openConnections() == 1);
            }
            Await.until(TIMEOUT, () -> "the upstream connection to close, " + upstream.openConnections() + " open",
                    () -> upstream.openConnections() == 0);
            Await.until(TIMEOUT, "the proxy to count no connection", () -> proxy.openConnections(member.upstream()) == 0);

            // The driver's monitor, RTT and pool connections: each has its own upstream connection, all go with it.
            try (MongoClient client = driver(proxy.connectionString())) {
                client.getDatabase("admin").runCommand(new Document("ping", 1));
                Await.until(TIMEOUT, () -> "1:1 pairs, proxy " + proxy.openConnections(member.upstream()) + " upstream "
                        + upstream.openConnections(), () -> proxy.openConnections(member.upstream()) >= 2
                        && proxy.openConnections(member.upstream()) == upstream.openConnections());
            }
            Await.until(TIMEOUT, () -> "the upstream connections to close, " + upstream.openConnections() + " open",
                    () -> upstream.openConnections() == 0);
            Await.until(TIMEOUT, "the proxy to count no connection", () -> proxy.openConnections(member.upstream()) == 0);
            assertEquals(List.of(), upstream.errors());
        }
    }

    @Test
    void aRequestSentJustBeforeTheClientClosesStillReachesTheUpstream() throws Exception {
        AtomicReference<byte[]> arrived = new AtomicReference<>();
        AtomicReference<Boolean> endOfStreamAfter = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(1);
        try (RawUpstream upstream = new RawUpstream((socket, index) -> {
            if (index == 0) {
                RawUpstream.answerHellos(socket); // the proxy's discovery
                return;
            }
            InputStream in = socket.getInputStream();
            arrived.set(RawUpstream.readFrame(in));
            endOfStreamAfter.set(in.read() < 0);
            done.countDown();
        }); ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded("mongodb://" + upstream.address() + "/"))) {
            byte[] request = ScriptedMongodWire.buildOpMsg(42, 0, 0, new BsonDocument("insert", new BsonString("c"))
                    .append("$db", new BsonString("test")), Map.of("documents", List.of(new BsonDocument("_id", new BsonInt32(1)))));
            try (RawClient client = RawClient.connect(proxy.members().get(0).advertised())) {
                client.send(request);
                client.socket.shutdownOutput(); // the client is done: the request is all it will ever send
                assertEquals(0, client.awaitClosedByPeer(TIMEOUT).length, "the upstream answered nothing");
            }
            assertTrue(done.await(TIMEOUT.toSeconds(), TimeUnit.SECONDS), "the upstream connection saw the request and its end");
            assertArrayEquals(request, arrived.get(), "the last request arrives byte for byte");
            assertEquals(Boolean.TRUE, endOfStreamAfter.get(), "then the proxy closes the upstream connection");
            assertEquals(List.of(), upstream.errors());
        }
    }

    // ------------------------------------------------------------------ upstream closes

    @Test
    void theUpstreamClosingClosesTheClient() throws Exception {
        ScriptedMongod upstream = ScriptedMongod.start();
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(replicaSetUri(upstream.address())))) {
            Member member = proxy.members().get(0);
            try (RawClient client = RawClient.connect(member.advertised())) {
                assertEquals(member.advertised().toString(), body(client.roundTrip(hello(1))).getString("me").getValue());
                upstream.close();
                assertEquals(0, client.awaitClosedByPeer(TIMEOUT).length);
            }
            Await.until(TIMEOUT, "the proxy to count no connection", () -> proxy.openConnections(member.upstream()) == 0);
        } finally {
            upstream.close();
        }
    }

    @Test
    void aDroppedUpstreamConnectionClosesTheClientWhileTheServerStaysUp() throws Exception {
        try (ScriptedMongod server = ScriptedMongod.start(); TcpTap tap = new TcpTap("127.0.0.1", server.port())) {
            String tapAddress = "127.0.0.1:" + tap.port();
            // The member is known by the tap's address, so the proxy's upstream connections go through the tap.
            server.setAdvertisedHosts(List.of(tapAddress));
            server.setAdvertisedMe(tapAddress);
            server.setAdvertisedPrimary(tapAddress);
            try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(replicaSetUri(tapAddress)))) {
                Member member = proxy.members().get(0);
                assertEquals(tapAddress, member.upstream().toString());
                try (RawClient client = RawClient.connect(member.advertised())) {
                    assertEquals(member.advertised().toString(), body(client.roundTrip(hello(1))).getString("me").getValue());
                    Await.until(TIMEOUT, "the pair's connection through the tap", () -> server.openConnections() == 1);
                    tap.close(); // drops every relayed connection, as a network failure between proxy and member would
                    assertEquals(0, client.awaitClosedByPeer(TIMEOUT).length);
                }
                Await.until(TIMEOUT, "the proxy to count no connection", () -> proxy.openConnections(member.upstream()) == 0);
                Await.until(TIMEOUT, "the tap's connection to the server to close", () -> server.openConnections() == 0);
            }
            // Only the connection died: the server itself is still serving.
            try (BlockingCommandClient direct = new BlockingCommandClient("127.0.0.1", server.port(), 5000)) {
                assertEquals(1.0, direct.run("admin", new BsonDocument("ping", new BsonInt32(1))).getNumber("ok").doubleValue());
            }
        }
    }

    @Test
    void aLastReplySentJustBeforeTheUpstreamClosesStillReachesTheClient() throws Exception {
        AtomicReference<byte[]> sent = new AtomicReference<>();
        try (RawUpstream upstream = new RawUpstream((socket, index) -> {
            if (index == 0) {
                RawUpstream.answerHellos(socket);
                return;
            }
            byte[] request = RawUpstream.readFrame(socket.getInputStream());
            byte[] reply = ScriptedMongodWire.buildOpMsg(9001, ScriptedMongodWire.requestId(request), 0,
                    new BsonDocument("n", new BsonInt32(42)).append("ok", new BsonDouble(1.0)), null);
            sent.set(reply);
            socket.getOutputStream().write(reply);
            socket.getOutputStream().flush();
            // returning closes the socket right behind the reply
        }); ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded("mongodb://" + upstream.address() + "/"))) {
            try (RawClient client = RawClient.connect(proxy.members().get(0).advertised())) {
                client.send(ScriptedMongodWire.buildOpMsg(7, 0, 0, new BsonDocument("count", new BsonString("c"))
                        .append("$db", new BsonString("test")), null));
                byte[] received = client.awaitClosedByPeer(TIMEOUT);
                assertNotNull(sent.get());
                assertArrayEquals(sent.get(), received, "the reply arrives whole, byte for byte, then the connection ends");
            }
            assertEquals(List.of(), upstream.errors());
        }
    }

    @Test
    void aReplyCutShortByTheUpstreamClosingNeverReachesTheClientInPart() throws Exception {
        try (LogCapture log = LogCapture.start();
             RawUpstream upstream = new RawUpstream((socket, index) -> {
                 if (index == 0) {
                     RawUpstream.answerHellos(socket);
                     return;
                 }
                 byte[] request = RawUpstream.readFrame(socket.getInputStream());
                 byte[] reply = ScriptedMongodWire.buildOpMsg(9002, ScriptedMongodWire.requestId(request), 0,
                         new BsonDocument("n", new BsonInt32(42)).append("ok", new BsonDouble(1.0)), null);
                 socket.getOutputStream().write(reply, 0, reply.length - 10);
                 socket.getOutputStream().flush();
                 // returning closes the socket 10 bytes short of the reply's end
             });
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded("mongodb://" + upstream.address() + "/"))) {
            try (RawClient client = RawClient.connect(proxy.members().get(0).advertised())) {
                client.send(hello(4));
                assertEquals(0, client.awaitClosedByPeer(TIMEOUT).length, "only whole messages are forwarded");
            }
            log.awaitContaining(TIMEOUT, "upstream " + upstream.address() + " for client ", " closed in the middle of a message (10 bytes missing)");
        }
    }

    @Test
    void closingTheProxyClosesBothSidesOfEveryPair() throws Exception {
        try (ScriptedMongod upstream = ScriptedMongod.start()) {
            ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(replicaSetUri(upstream.address())));
            Member member = proxy.members().get(0);
            try (RawClient first = RawClient.connect(member.advertised()); RawClient second = RawClient.connect(member.advertised())) {
                first.roundTrip(hello(1));
                second.roundTrip(hello(2));
                Await.until(TIMEOUT, "two paired upstream connections", () -> upstream.openConnections() == 2);
                proxy.close();
                assertEquals(0, first.awaitClosedByPeer(TIMEOUT).length);
                assertEquals(0, second.awaitClosedByPeer(TIMEOUT).length);
            }
            Await.until(TIMEOUT, () -> "the upstream connections to close, " + upstream.openConnections() + " open",
                    () -> upstream.openConnections() == 0);
        }
    }

    // ------------------------------------------------------------------ a malformed reply

    @Test
    void aMalformedMessageFromTheUpstreamClosesBothSides() throws Exception {
        AtomicReference<Boolean> upstreamSawEnd = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(1);
        try (LogCapture log = LogCapture.start();
             RawUpstream upstream = new RawUpstream((socket, index) -> {
                 if (index == 0) {
                     RawUpstream.answerHellos(socket);
                     return;
                 }
                 byte[] request = RawUpstream.readFrame(socket.getInputStream());
                 ByteBuffer bad = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN)
                         .putInt(16).putInt(1).putInt(ScriptedMongodWire.requestId(request)).putInt(9999);
                 socket.getOutputStream().write(bad.array());
                 socket.getOutputStream().flush();
                 upstreamSawEnd.set(socket.getInputStream().read() < 0);
                 done.countDown();
             });
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded("mongodb://" + upstream.address() + "/"))) {
            try (RawClient client = RawClient.connect(proxy.members().get(0).advertised())) {
                client.send(hello(3));
                assertEquals(0, client.awaitClosedByPeer(TIMEOUT).length, "the malformed reply is not forwarded");
            }
            assertTrue(done.await(TIMEOUT.toSeconds(), TimeUnit.SECONDS));
            assertEquals(Boolean.TRUE, upstreamSawEnd.get(), "the proxy closed the upstream connection too");
            log.awaitContaining(TIMEOUT, "upstream " + upstream.address(), "unknown opcode 9999");
        }
    }

    // ------------------------------------------------------------------ backpressure

    private static final int FRAME_SIZE = 1024 * 1024;
    private static final int FRAMES = 128; // 128 MiB: four times the bound, so buffering without limit would show
    private static final long TOTAL = (long) FRAME_SIZE * FRAMES;
    private static final long BOUND = 32L * 1024 * 1024;
    private static final int CHUNK = 64 * 1024;

    /**
     * A valid OP_MSG of exactly FRAME_SIZE bytes whose body is {@code fields} + {seq: int32, pad:
     * binary}; {@link #stamp} sets the requestID and seq of each copy.
     */
    private record Template(byte[] bytes, int seqOffset, int padOffset) {
        static Template of(BsonDocument fields) {
            byte[] probe = build(fields, 0);
            int padLength = FRAME_SIZE - probe.length;
            byte[] bytes = build(fields, padLength);
            if (bytes.length != FRAME_SIZE) {
                throw new IllegalStateException("template is " + bytes.length + " bytes");
            }
            int seq = ScriptedMongodWire.indexOf(bytes, new byte[] {0x10, 's', 'e', 'q', 0}) + 5;
            int pad = ScriptedMongodWire.indexOf(bytes, new byte[] {0x05, 'p', 'a', 'd', 0}) + 5 + 4 + 1;
            return new Template(bytes, seq, pad);
        }

        private static byte[] build(BsonDocument fields, int padLength) {
            byte[] pad = new byte[padLength];
            for (int i = 0; i < padLength; i++) {
                pad[i] = (byte) (i * 31 + 7);
            }
            BsonDocument body = fields.clone().append("seq", new BsonInt32(0)).append("pad", new BsonBinary(pad));
            return ScriptedMongodWire.buildOpMsg(0, 0, 0, body, null);
        }

        void stampInto(byte[] frame, int seq) {
            ScriptedMongodWire.putIntLE(frame, 4, seq + 1); // requestID
            ScriptedMongodWire.putIntLE(frame, seqOffset, seq);
        }

        /** Fails unless {@code frame} is copy number {@code seq}, byte for byte. */
        void check(byte[] frame, int seq) {
            assertEquals(FRAME_SIZE, ScriptedMongodWire.intLE(frame, 0), "length of frame " + seq);
            assertEquals(seq + 1, ScriptedMongodWire.requestId(frame), "requestID of frame " + seq);
            assertEquals(seq, ScriptedMongodWire.intLE(frame, seqOffset), "seq of frame " + seq);
            if (Arrays.mismatch(frame, padOffset, FRAME_SIZE, bytes, padOffset, FRAME_SIZE) >= 0) {
                throw new AssertionError("payload of frame " + seq + " differs from what was sent");
            }
        }
    }

    /** Writes FRAMES stamped copies in CHUNK pieces, counting what each write() let through. */
    private static void stream(OutputStream out, Template template, AtomicLong written) throws IOException {
        byte[] frame = template.bytes().clone();
        for (int seq = 0; seq < FRAMES; seq++) {
            template.stampInto(frame, seq);
            for (int off = 0; off < FRAME_SIZE; off += CHUNK) {
                out.write(frame, off, CHUNK); // blocks once every buffer on the way is full
                written.addAndGet(CHUNK);
            }
        }
        out.flush();
    }

    private static void readAndCheck(InputStream in, Template template) throws IOException {
        byte[] frame = new byte[FRAME_SIZE];
        for (int seq = 0; seq < FRAMES; seq++) {
            readFully(in, frame, seq);
            template.check(frame, seq);
        }
    }

    private static double proxied(ProxyServer proxy, String direction) {
        return proxy.registry().get("blackpipe.bytes").tag("direction", direction).counter().count();
    }

    @Test
    void aClientThatDoesNotReadStopsTheProxyReadingFromTheUpstream() throws Exception {
        Template template = Template.of(new BsonDocument("ok", new BsonDouble(1.0)));
        assertEquals(new BsonInt32(0), body(template.bytes()).get("seq"), "the template is valid BSON");
        AtomicLong written = new AtomicLong();
        AtomicReference<Throwable> writerFailure = new AtomicReference<>();
        CountDownLatch writerDone = new CountDownLatch(1);
        try (RawUpstream upstream = new RawUpstream((socket, index) -> {
            if (index == 0) {
                RawUpstream.answerHellos(socket);
                return;
            }
            try {
                stream(socket.getOutputStream(), template, written);
                socket.shutdownOutput();
                socket.getInputStream().read(); // until the proxy closes its side
            } catch (Throwable t) {
                writerFailure.set(t);
            } finally {
                writerDone.countDown();
            }
        }); ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded("mongodb://" + upstream.address() + "/"))) {
            Member member = proxy.members().get(0);
            try (RawClient client = RawClient.connect(member.advertised())) {
                // The client sends nothing and reads nothing; the upstream streams as fast as it is let.
                long stalledAt = awaitStall(written::get, Duration.ofSeconds(15), Duration.ofMillis(1000));
                System.out.printf("[backpressure] upstream wrote %.1f MB of %.1f MB before blocking; the proxy read %.1f MB%n",
                        stalledAt / 1e6, TOTAL / 1e6, proxied(proxy, "upstream_to_client") / 1e6);
                assertTrue(stalledAt > 0, "the upstream started streaming");
                assertTrue(stalledAt < BOUND, "the upstream could write " + stalledAt + " bytes to a client that reads nothing;"
                        + " the proxy must stop reading (bound " + BOUND + ")");
                assertEquals(1, writerDone.getCount(), "the upstream writer is blocked, not finished");

                // Now the client reads everything: every frame, whole and in order.
                client.socket.setSoTimeout(30_000);
                InputStream in = client.socket.getInputStream();
                readAndCheck(in, template);
                assertEquals(-1, in.read(), "the upstream finished, so the proxy closes the client after the last byte");
            }
            assertTrue(writerDone.await(TIMEOUT.toSeconds(), TimeUnit.SECONDS));
            assertNull(writerFailure.get(), () -> "the upstream writer failed: " + writerFailure.get());
            assertEquals(TOTAL, written.get());
            assertEquals((double) TOTAL, proxied(proxy, "upstream_to_client"));
            assertEquals(List.of(), upstream.errors());
        }
    }

    @Test
    void anUpstreamThatDoesNotReadStopsTheProxyReadingFromTheClient() throws Exception {
        Template template = Template.of(new BsonDocument("insert", new BsonString("c")).append("$db", new BsonString("test")));
        CountDownLatch startReading = new CountDownLatch(1);
        AtomicReference<Throwable> readerFailure = new AtomicReference<>();
        CountDownLatch readerDone = new CountDownLatch(1);
        try (RawUpstream upstream = new RawUpstream((socket, index) -> {
            if (index == 0) {
                RawUpstream.answerHellos(socket);
                return;
            }
            try {
                if (!startReading.await(60, TimeUnit.SECONDS)) {
                    throw new AssertionError("never told to read");
                }
                InputStream in = socket.getInputStream();
                readAndCheck(in, template);
                if (in.read() != -1) {
                    throw new AssertionError("more than " + FRAMES + " frames arrived");
                }
            } catch (Throwable t) {
                readerFailure.set(t);
            } finally {
                readerDone.countDown();
            }
        }); ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded("mongodb://" + upstream.address() + "/"))) {
            AtomicLong written = new AtomicLong();
            AtomicReference<Throwable> writerFailure = new AtomicReference<>();
            try (RawClient client = RawClient.connect(proxy.members().get(0).advertised())) {
                Thread writer = new Thread(() -> {
                    try {
                        stream(client.socket.getOutputStream(), template, written);
                    } catch (Throwable t) {
                        writerFailure.set(t);
                    }
                }, "backpressure-client-writer");
                writer.setDaemon(true);
                writer.start();

                long stalledAt = awaitStall(written::get, Duration.ofSeconds(15), Duration.ofMillis(1000));
                System.out.printf("[backpressure] client wrote %.1f MB of %.1f MB before blocking; the proxy read %.1f MB%n",
                        stalledAt / 1e6, TOTAL / 1e6, proxied(proxy, "client_to_upstream") / 1e6);
                assertTrue(stalledAt > 0, "the client started writing");
                assertTrue(stalledAt < BOUND, "the client could write " + stalledAt + " bytes towards an upstream that reads"
                        + " nothing; the proxy must stop reading (bound " + BOUND + ")");
                assertTrue(writer.isAlive(), "the client writer is blocked, not finished");

                startReading.countDown();
                writer.join(TimeUnit.SECONDS.toMillis(180));
                assertNull(writerFailure.get(), () -> "the client writer failed: " + writerFailure.get());
                assertEquals(TOTAL, written.get());
            } // closing the client ends the upstream connection after the last byte
            assertTrue(readerDone.await(60, TimeUnit.SECONDS), "the upstream read everything");
            assertNull(readerFailure.get(), () -> "the upstream reader failed: " + readerFailure.get());
            assertEquals((double) TOTAL, proxied(proxy, "client_to_upstream"));
            assertEquals(List.of(), upstream.errors());
        }
    }

    /**
     * A member's connection whose last writes cannot be flushed (the member reads nothing) is told to close
     * once they are, when its client goes. The proxy's close() must end it anyway, even on event loops busy as
     * their shutdown begins: Netty's shutdown with no quiet period then stops a loop without closing its
     * channels, which left the socket open and the unflushed requests' buffers unreleased.
     */
    @Test
    void closingTheProxyEndsAMemberConnectionStuckFlushingEvenOnBusyLoops() throws Exception {
        Template template = Template.of(new BsonDocument("insert", new BsonString("c")).append("$db", new BsonString("test")));
        CountDownLatch proxyClosed = new CountDownLatch(1);
        AtomicReference<String> memberSaw = new AtomicReference<>();
        CountDownLatch memberDone = new CountDownLatch(1);
        try (RawUpstream upstream = new RawUpstream((socket, index) -> {
            if (index == 0) {
                RawUpstream.answerHellos(socket);
                return;
            }
            try {
                proxyClosed.await(); // reads nothing until then: the proxy's writes pile up unflushed
                socket.setSoTimeout((int) TIMEOUT.toMillis());
                InputStream in = socket.getInputStream();
                byte[] drain = new byte[64 * 1024];
                while (in.read(drain) >= 0) {
                    // what the kernel already holds, then the end of the stream
                }
                memberSaw.set("closed");
            } catch (java.net.SocketTimeoutException e) {
                memberSaw.set("still open " + TIMEOUT + " after the proxy closed");
            } finally {
                memberDone.countDown();
            }
        })) {
            ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded("mongodb://" + upstream.address() + "/"));
            Member member = proxy.members().get(0);
            try (RawClient client = RawClient.connect(member.advertised())) {
                AtomicLong written = new AtomicLong();
                Thread writer = new Thread(() -> {
                    try {
                        stream(client.socket.getOutputStream(), template, written);
                    } catch (IOException expected) {
                        // the proxy closes the client below
                    }
                }, "stuck-flush-client-writer");
                writer.setDaemon(true);
                writer.start();
                awaitStall(written::get, Duration.ofSeconds(15), Duration.ofMillis(500));
                Set<EventLoop> loops = proxy.listener(member.upstream()).connections().eventLoops();
                CountDownLatch busy = new CountDownLatch(loops.size());
                for (EventLoop loop : loops) {
                    loop.execute(() -> busyUntilShutdownBegins(loop, busy));
                }
                assertTrue(busy.await(TIMEOUT.toSeconds(), TimeUnit.SECONDS), "every loop busy before the proxy closes");
                proxy.close();
                proxyClosed.countDown();
                assertTrue(memberDone.await(2 * TIMEOUT.toSeconds(), TimeUnit.SECONDS), "the member's reader ended");
                assertEquals("closed", memberSaw.get(), "the proxy's connection to the member");
            }
        }
        assertEquals(List.of(), NettyLeakCheck.detectLeaks(), "the unflushed requests' buffers are released");
    }

    /** Keeps {@code loop} running this task until its shutdown has begun and set its quiet period (its fields follow its state). */
    private static void busyUntilShutdownBegins(EventLoop loop, CountDownLatch busy) {
        busy.countDown();
        long giveUp = System.nanoTime() + TIMEOUT.toNanos();
        while (!loop.isShuttingDown() && System.nanoTime() < giveUp) {
            Thread.onSpinWait();
        }
        try {
            Thread.sleep(100);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Waits until {@code progress} has not moved for {@code quiet}; returns its value then. */
    private static long awaitStall(Supplier<Long> progress, Duration timeout, Duration quiet) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        long last = progress.get();
        long lastChange = System.nanoTime();
        while (System.nanoTime() < deadline) {
            Thread.sleep(50);
            long now = progress.get();
            if (now != last) {
                last = now;
                lastChange = System.nanoTime();
            } else if (now > 0 && System.nanoTime() - lastChange >= quiet.toNanos()) {
                return now;
            }
            if (now >= TOTAL) {
                return now; // it never blocked: the caller's bound check fails with the number
            }
        }
        throw new AssertionError("the upstream's writes neither finished nor stopped within " + timeout + " (at " + last + " bytes)");
    }

    private static void readFully(InputStream in, byte[] buffer, int seq) throws IOException {
        int off = 0;
        while (off < buffer.length) {
            int n = in.read(buffer, off, buffer.length - off);
            if (n < 0) {
                throw new EOFException("the connection ended inside frame " + seq + " after " + off + " bytes");
            }
            off += n;
        }
    }
}
