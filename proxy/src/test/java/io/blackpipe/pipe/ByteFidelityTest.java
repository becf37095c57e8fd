package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.RawUpstream;
import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.topology.MemberAddress;
import io.blackpipe.wire.DecoderFuzzTest;
import io.blackpipe.wire.WireFixtures;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;

/**
 * Pass-through is byte-exact: randomized valid messages of every kind go through a live proxy and
 * arrive untouched on both sides. Raw clients write random non-hello requests (OP_MSG with a body
 * and document sequences, random flags including checksum, moreToCome and exhaustAllowed; OP_QUERY
 * commands; OP_COMPRESSED) pipelined on a few connections; a raw upstream records every byte and
 * answers every request that expects a reply with a random valid reply (OP_MSG with or without
 * checksum, OP_REPLY, OP_COMPRESSED; for exhaustAllowed requests sometimes a moreToCome stream of
 * several replies). Each side hashes (CRC32C, CRC32 and length) the bytes it sent and received;
 * client-sent must equal upstream-received and upstream-sent must equal client-received.
 *
 * <p>Default 100,000 messages (requests plus replies counted together) to keep {@code mvn verify}
 * short on a small machine; {@code -Dblackpipe.fidelity.messages=1000000} runs the full 10^6.
 * The seed is printed; rerun with -Dblackpipe.fidelity.seed=N.
 */
class ByteFidelityTest {
    private static final int CONNECTIONS = 2;
    private static final int TEMPLATES = 1500;

    /** Everything one side of one connection saw, hashed. */
    static final class StreamHash {
        final CRC32C crc32c = new CRC32C();
        final CRC32 crc32 = new CRC32();
        long bytes;
        long frames;

        void add(byte[] b) {
            crc32c.update(b, 0, b.length);
            crc32.update(b, 0, b.length);
            bytes += b.length;
            frames++;
        }

        @Override
        public String toString() {
            return frames + " frames, " + bytes + " bytes, crc32c " + Long.toHexString(crc32c.getValue()) + ", crc32 "
                    + Long.toHexString(crc32.getValue());
        }
    }

    /** The upstream side of one fidelity connection, keyed by the connection's first requestID. */
    record UpstreamSide(StreamHash received, StreamHash sent) {
    }

    @Test
    void randomValidMessagesPassByteForByte() throws Exception {
        long seed = Long.getLong("blackpipe.fidelity.seed", System.nanoTime());
        int messages = Integer.getInteger("blackpipe.fidelity.messages", 100_000);
        System.out.println("ByteFidelityTest seed=" + seed + ", messages=" + messages
                + " (rerun with -Dblackpipe.fidelity.seed=" + seed + ")");
        Random master = new Random(seed);
        Templates templates = new Templates(new Random(master.nextLong()));
        long upstreamSeed = master.nextLong();
        java.util.Map<Integer, UpstreamSide> sides = new ConcurrentHashMap<>();
        try (RawUpstream upstream = new RawUpstream((socket, index) -> serve(socket, templates, upstreamSeed + index, sides));
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded("mongodb://" + upstream.address() + "/?directConnection=true"))) {
            MemberAddress address = proxy.members().get(0).advertised();
            ExecutorService pool = Executors.newFixedThreadPool(CONNECTIONS * 2);
            long started = System.nanoTime();
            try {
                int perConnection = messages / CONNECTIONS;
                List<ClientSide> clients = new ArrayList<>();
                for (int c = 0; c < CONNECTIONS; c++) {
                    ClientSide client = new ClientSide(address, templates, new Random(master.nextLong()), (c + 1) << 24, perConnection);
                    clients.add(client);
                }
                List<Future<?>> futures = new ArrayList<>();
                for (ClientSide client : clients) {
                    futures.add(pool.submit(() -> {
                        client.run(pool);
                        return null;
                    }));
                }
                for (Future<?> f : futures) {
                    f.get(15, TimeUnit.MINUTES);
                }
                long total = 0;
                for (ClientSide client : clients) {
                    UpstreamSide side = sides.get(client.firstRequestId);
                    assertTrue(side != null, "the upstream never saw connection " + client.firstRequestId);
                    awaitUntil(() -> side.received.frames == client.sent.frames);
                    synchronized (side) {
                        assertEquals(client.sent.toString(), side.received.toString(),
                                "seed " + seed + ": what the client sent must reach the upstream byte for byte");
                        assertEquals(side.sent.toString(), client.received.toString(),
                                "seed " + seed + ": what the upstream sent must reach the client byte for byte");
                    }
                    total += client.sent.frames + client.received.frames;
                    client.close();
                }
                assertTrue(total >= messages * 9L / 10, "only " + total + " messages went through");
                System.out.printf("ByteFidelityTest: %d messages (%d connections) byte-identical in %.1f s%n",
                        total, CONNECTIONS, (System.nanoTime() - started) / 1e9);
                assertTrue(upstream.errors().isEmpty(), "upstream script errors: " + upstream.errors());
            } finally {
                pool.shutdownNow();
            }
        }
    }

    private static void awaitUntil(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!condition.getAsBoolean() && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
    }

    // ---------------------------------------------------------------- client

    /** One raw client connection: a writer sends the requests pipelined, a reader takes the replies. */
    static final class ClientSide implements AutoCloseable {
        final Socket socket;
        final Templates templates;
        final Random random;
        final int firstRequestId;
        final int target;
        final StreamHash sent = new StreamHash();
        final StreamHash received = new StreamHash();
        /** Requests that expect a reply (a stream counts once), written so far; read by the reader. */
        final java.util.concurrent.Semaphore outstanding = new java.util.concurrent.Semaphore(0);
        volatile boolean writerDone;
        volatile long expected;

        ClientSide(MemberAddress address, Templates templates, Random random, int firstRequestId, int target) throws IOException {
            this.socket = new Socket(address.host(), address.port());
            socket.setTcpNoDelay(true);
            socket.setSoTimeout(30_000);
            this.templates = templates;
            this.random = random;
            this.firstRequestId = firstRequestId;
            this.target = target;
        }

        void run(ExecutorService pool) throws Exception {
            Future<?> reader = pool.submit(() -> {
                read();
                return null;
            });
            write();
            reader.get(15, TimeUnit.MINUTES);
        }

        /** Writes requests until requests plus expected replies reach the target; at most 256 unanswered. */
        private void write() throws IOException, InterruptedException {
            OutputStream out = new BufferedOutputStream(socket.getOutputStream(), 1 << 16);
            java.util.concurrent.Semaphore window = new java.util.concurrent.Semaphore(256);
            windowRef = window;
            int requestId = firstRequestId;
            long count = 0;
            long replies = 0;
            while (count < target) {
                byte[] request = templates.request(random, requestId++);
                boolean expectsReply = Templates.expectsReply(request);
                if (expectsReply && !window.tryAcquire()) {
                    out.flush();
                    window.acquire();
                }
                out.write(request);
                synchronized (sent) {
                    sent.add(request);
                }
                count++;
                if (expectsReply) {
                    replies++;
                    count++; // at least one reply comes back
                    outstanding.release();
                }
                if (random.nextInt(16) == 0) {
                    out.flush();
                }
            }
            out.flush();
            expected = replies;
            writerDone = true;
            outstanding.release(); // wakes the reader if it waits
        }

        private volatile java.util.concurrent.Semaphore windowRef;

        private void read() throws IOException, InterruptedException {
            InputStream in = new BufferedInputStream(socket.getInputStream(), 1 << 16);
            long done = 0;
            while (true) {
                if (writerDone && done >= expected) {
                    return;
                }
                byte[] frame = ScriptedMongodWire.readMessage(in, 48_000_000);
                if (frame == null) {
                    throw new IOException("the proxy closed the connection after " + done + " replies");
                }
                received.add(frame);
                if (!Templates.moreToCome(frame)) {
                    done++;
                    while (windowRef == null) {
                        Thread.onSpinWait();
                    }
                    windowRef.release();
                }
            }
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    // ---------------------------------------------------------------- upstream

    private static void serve(Socket socket, Templates templates, long seed, java.util.Map<Integer, UpstreamSide> sides)
            throws IOException {
        socket.setTcpNoDelay(true);
        InputStream in = new BufferedInputStream(socket.getInputStream(), 1 << 16);
        OutputStream out = new BufferedOutputStream(socket.getOutputStream(), 1 << 16);
        byte[] first = ScriptedMongodWire.readMessage(in, 48_000_000);
        if (first == null) {
            return;
        }
        if (Templates.isHello(first)) { // the proxy's discovery and state probes
            int replyId = 1;
            byte[] request = first;
            while (request != null) {
                out.write(ScriptedMongodWire.buildOpMsg(replyId++, ScriptedMongodWire.requestId(request), 0,
                        RawUpstream.standaloneHello(), null));
                out.flush();
                request = ScriptedMongodWire.readMessage(in, 48_000_000);
            }
            return;
        }
        Random random = new Random(seed);
        UpstreamSide side = new UpstreamSide(new StreamHash(), new StreamHash());
        sides.put(ScriptedMongodWire.requestId(first), side);
        int replyId = 1;
        byte[] request = first;
        while (request != null) {
            synchronized (side) {
                side.received.add(request);
            }
            if (Templates.expectsReply(request)) {
                int responseTo = ScriptedMongodWire.requestId(request);
                int stream = Templates.exhaustAllowed(request) && random.nextInt(4) == 0 ? 1 + random.nextInt(4) : 0;
                for (int i = stream; i >= 0; i--) {
                    int id = replyId++;
                    byte[] reply = templates.reply(random, id, responseTo, i > 0);
                    out.write(reply);
                    synchronized (side) {
                        side.sent.add(reply);
                    }
                    responseTo = id;
                }
            }
            if (in.available() == 0) {
                out.flush();
            }
            request = ScriptedMongodWire.readMessage(in, 48_000_000);
        }
        out.flush();
    }

    // ---------------------------------------------------------------- messages

    /**
     * Pre-built random messages (building BSON for each of 10^6 would dominate the run); each use
     * gets its own ids, and the checksum is recomputed over them.
     */
    static final class Templates {
        private static final String[] COMMANDS = {"insert", "find", "update", "delete", "getMore", "aggregate", "ping",
            "count", "killCursors", "listCollections", "endSessions"};
        final List<byte[]> requests = new ArrayList<>();
        final List<byte[]> replies = new ArrayList<>();

        Templates(Random random) {
            for (int i = 0; i < TEMPLATES; i++) {
                requests.add(requestTemplate(random));
                replies.add(replyTemplate(random));
            }
        }

        private static byte[] requestTemplate(Random random) {
            int kind = random.nextInt(20);
            String name = COMMANDS[random.nextInt(COMMANDS.length)];
            if (kind == 0) { // a legacy OP_QUERY command that is not a handshake
                byte[] query = WireFixtures.bson(DecoderFuzzTest.command(random, name, null, null));
                return WireFixtures.opQuery(0, 0, "db.$cmd", 0, -1, query, null);
            }
            if (kind == 1) { // OP_COMPRESSED passes as it came
                byte[] payload = new byte[random.nextInt(200)];
                random.nextBytes(payload);
                return WireFixtures.message(0, 0, WireFixtures.OP_COMPRESSED,
                        WireFixtures.concat(WireFixtures.le32(WireFixtures.OP_MSG), WireFixtures.le32(payload.length * 3), new byte[] {2}, payload));
            }
            int flags = (random.nextBoolean() ? 1 : 0) | (random.nextInt(8) == 0 ? 2 : 0) | (random.nextInt(4) == 0 ? 1 << 16 : 0);
            BsonDocument body = DecoderFuzzTest.command(random, name, "db" + random.nextInt(3), null);
            WireFixtures.OpMsgBuilder builder = WireFixtures.opMsg(0, 0, flags);
            int sequences = random.nextInt(3);
            int bodyAt = random.nextInt(sequences + 1);
            for (int s = 0; s <= sequences; s++) {
                if (s == bodyAt) {
                    builder.body(WireFixtures.bson(body));
                } else {
                    byte[][] docs = new byte[random.nextInt(4)][];
                    for (int d = 0; d < docs.length; d++) {
                        docs[d] = WireFixtures.bson(DecoderFuzzTest.randomDocument(random, 2));
                    }
                    builder.sequence("documents", docs);
                }
            }
            return builder.build();
        }

        private static byte[] replyTemplate(Random random) {
            int kind = random.nextInt(10);
            BsonDocument body = DecoderFuzzTest.randomDocument(random, 2);
            body.append("ok", random.nextInt(10) == 0 ? new BsonDouble(0) : new BsonDouble(1));
            if (body.getDouble("ok").getValue() == 0) {
                body.append("code", new BsonInt32(random.nextInt(300))).append("errmsg", new BsonString("boom"));
            }
            if (kind == 0) {
                return WireFixtures.opReply(0, 0, 8, random.nextLong(), 0, 1, WireFixtures.bson(body));
            }
            if (kind == 1) {
                byte[] payload = new byte[random.nextInt(200)];
                random.nextBytes(payload);
                return WireFixtures.message(0, 0, WireFixtures.OP_COMPRESSED,
                        WireFixtures.concat(WireFixtures.le32(WireFixtures.OP_MSG), WireFixtures.le32(payload.length * 3), new byte[] {1}, payload));
            }
            return WireFixtures.opMsg(0, 0, random.nextBoolean() ? 1 : 0).body(WireFixtures.bson(body)).build();
        }

        byte[] request(Random random, int requestId) {
            return withIds(requests.get(random.nextInt(requests.size())), requestId, 0, false);
        }

        /** A reply; {@code moreToCome} sets that flag on an OP_MSG (other kinds cannot stream, so an OP_MSG is used). */
        byte[] reply(Random random, int requestId, int responseTo, boolean moreToCome) {
            byte[] template = replies.get(random.nextInt(replies.size()));
            if (moreToCome) {
                while (opCode(template) != WireFixtures.OP_MSG) {
                    template = replies.get(random.nextInt(replies.size()));
                }
            }
            return withIds(template, requestId, responseTo, moreToCome);
        }

        private static byte[] withIds(byte[] template, int requestId, int responseTo, boolean moreToCome) {
            byte[] b = template.clone();
            ByteBuffer buffer = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
            buffer.putInt(4, requestId).putInt(8, responseTo);
            if (opCode(b) == WireFixtures.OP_MSG) {
                int flags = buffer.getInt(16);
                if (moreToCome) {
                    buffer.putInt(16, flags | 2);
                }
                if ((flags & 1) != 0) {
                    buffer.putInt(b.length - 4, WireFixtures.crc32c(b, 0, b.length - 4));
                }
            }
            return b;
        }

        static int opCode(byte[] frame) {
            return WireFixtures.readLe32(frame, 12);
        }

        static boolean moreToCome(byte[] frame) {
            return opCode(frame) == WireFixtures.OP_MSG && (WireFixtures.readLe32(frame, 16) & 2) != 0;
        }

        static boolean exhaustAllowed(byte[] frame) {
            return opCode(frame) == WireFixtures.OP_MSG && (WireFixtures.readLe32(frame, 16) & (1 << 16)) != 0;
        }

        static boolean expectsReply(byte[] request) {
            return !moreToCome(request);
        }

        /** Whether the first element of the command (OP_MSG body first, or OP_QUERY) is a hello. */
        static boolean isHello(byte[] frame) {
            int nameAt;
            if (opCode(frame) == WireFixtures.OP_MSG && frame.length > 27 && frame[20] == 0) {
                nameAt = 26;
            } else if (opCode(frame) == WireFixtures.OP_QUERY) {
                int nul = 20;
                while (nul < frame.length && frame[nul] != 0) {
                    nul++;
                }
                nameAt = nul + 1 + 8 + 4 + 1;
            } else {
                return false;
            }
            int end = nameAt;
            while (end < frame.length && frame[end] != 0) {
                end++;
            }
            String name = new String(frame, nameAt, Math.max(0, Math.min(end, frame.length) - nameAt), java.nio.charset.StandardCharsets.UTF_8);
            return name.equals("hello") || name.equals("isMaster") || name.equals("ismaster");
        }
    }
}
