package io.blackpipe.testing;

import static com.mongodb.client.model.Filters.eq;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoWriteException;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoCursor;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.result.UpdateResult;
import io.blackpipe.testing.ScriptedMongodWire.OpMsg;
import io.blackpipe.testing.ScriptedMongodWire.OpReply;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import java.util.function.IntFunction;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Proves {@link ScriptedMongod} with the real MongoDB Java driver talking to it directly (no
 * proxy), plus raw-socket checks of the paths the driver cannot exercise (checksums, exhaust
 * getMore, noop compression, malformed input).
 */
class ScriptedMongodTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    // ============================================================ (a) compression

    @ParameterizedTest(name = "compressors={0}")
    @ValueSource(strings = {"snappy", "zlib", "zstd"})
    void driverNegotiatesAndUsesEachCompressorBothWays(String name) throws Exception {
        ScriptedMongodCompressor compressor = ScriptedMongodCompressor.byName(name);
        try (ScriptedMongod server = ScriptedMongod.start();
             MongoClient client = MongoClients.create(server.uri("directConnection=true&compressors=" + name))) {
            MongoCollection<Document> coll = client.getDatabase("test").getCollection("things");
            String payload = "compressible ".repeat(400); // ~5 KB that any compressor shrinks a lot
            coll.insertOne(new Document("_id", 1).append("name", "a").append("payload", payload));
            coll.insertMany(List.of(new Document("_id", 2).append("name", "b"),
                    new Document("_id", 3).append("name", "a")));

            List<Document> found = coll.find(eq("name", "a")).into(new ArrayList<>());
            assertEquals(List.of(1, 3), found.stream().map(d -> d.getInteger("_id")).toList());
            assertEquals(payload, found.get(0).getString("payload"));
            assertEquals(3, server.documents("test", "things").size());

            // The pooled connection's handshake asked for the compressor and the server agreed to
            // exactly it. (The driver's monitoring connections do not ask for compression at all.)
            List<ScriptedMongodFrame> asking = server.framesReceived(f -> f.document() != null
                    && f.document().containsKey("compression"));
            assertFalse(asking.isEmpty(), "a handshake listed compression");
            for (ScriptedMongodFrame handshake : asking) {
                assertEquals(ScriptedMongodWire.OP_QUERY, handshake.opCode(), "the handshake is the legacy hello");
                assertEquals(new BsonArray(List.of(new BsonString(name))), handshake.document().getArray("compression"));
                ScriptedMongodFrame reply = server.framesSent(f -> f.responseTo() == handshake.requestId()
                        && f.connectionId() == handshake.connectionId()).get(0);
                assertEquals(ScriptedMongodWire.OP_REPLY, reply.opCode());
                assertEquals(new BsonArray(List.of(new BsonString(name))), reply.document().getArray("compression"));
            }
            for (ScriptedMongodFrame helloReply : server.framesSent(f -> isHello(f.commandName()))) {
                assertFalse(helloReply.compressed(), "hello replies are never compressed: " + helloReply);
            }

            // Requests arrived compressed with it, replies went back compressed with it.
            assertTrue(server.compressedFramesReceived(compressor) > 0, "compressed frames received");
            assertTrue(server.compressedFramesSent(compressor) > 0, "compressed frames sent");
            for (ScriptedMongodCompressor other : ScriptedMongodCompressor.values()) {
                if (other != compressor) {
                    assertEquals(0, server.compressedFramesReceived(other), other + " received");
                    assertEquals(0, server.compressedFramesSent(other), other + " sent");
                }
            }
            ScriptedMongodFrame firstInsert = server.commandsReceived("insert").get(0);
            assertEquals(ScriptedMongodWire.OP_COMPRESSED, firstInsert.opCode());
            assertEquals(ScriptedMongodWire.OP_MSG, firstInsert.originalOpCode());
            assertEquals(compressor, firstInsert.compressor());
            assertTrue(firstInsert.raw().length < payload.length() / 2,
                    "the insert really was compressed: " + firstInsert.raw().length + " bytes on the wire");
            ScriptedMongodFrame findReply = server.framesSent(f -> "find".equals(f.commandName())).get(0);
            assertEquals(compressor, findReply.compressor());
            assertTrue(findReply.raw().length < payload.length() / 2, "the find reply really was compressed");
            // Hello requests are never compressed by the driver either.
            assertTrue(server.framesReceived(f -> isHello(f.commandName())).stream().noneMatch(ScriptedMongodFrame::compressed));
            assertEquals(List.of(), server.errors());
        }
    }

    @Test
    void serverAgreesOnlyToItsOwnCompressorsOrNone() throws Exception {
        try (ScriptedMongod server = ScriptedMongod.builder().compressors(ScriptedMongodCompressor.ZSTD).start();
             MongoClient client = MongoClients.create(server.uri("directConnection=true&compressors=snappy,zlib,zstd"))) {
            client.getDatabase("test").getCollection("c").insertOne(new Document("x", 1));
            ScriptedMongodFrame handshakeReply = negotiationReply(server);
            assertEquals(ScriptedMongodWire.OP_REPLY, handshakeReply.opCode());
            assertEquals(new BsonArray(List.of(new BsonString("zstd"))), handshakeReply.document().getArray("compression"));
            assertTrue(server.compressedFramesReceived(ScriptedMongodCompressor.ZSTD) > 0);
            assertEquals(0, server.compressedFramesReceived(ScriptedMongodCompressor.SNAPPY));
            assertEquals(0, server.compressedFramesReceived(ScriptedMongodCompressor.ZLIB));
        }
        try (ScriptedMongod server = ScriptedMongod.builder().compressors().start();
             MongoClient client = MongoClients.create(server.uri("directConnection=true&compressors=snappy"))) {
            MongoCollection<Document> coll = client.getDatabase("test").getCollection("c");
            coll.insertOne(new Document("x", 1));
            assertEquals(1, coll.find().into(new ArrayList<>()).size());
            assertEquals(new BsonArray(), negotiationReply(server).document().getArray("compression"));
            assertTrue(server.framesReceived().stream().noneMatch(ScriptedMongodFrame::compressed));
            assertTrue(server.framesSent().stream().noneMatch(ScriptedMongodFrame::compressed));
            assertEquals(List.of(), server.errors());
        }
    }

    // ============================================================ (b) streaming hello

    @Test
    void streamModeMonitoringGetsMoreToComeHelloReplies() throws Exception {
        try (ScriptedMongod server = ScriptedMongod.start();
             MongoClient client = MongoClients.create(server.uri(
                     "replicaSet=" + ScriptedMongod.SET_NAME + "&serverMonitoringMode=stream&heartbeatFrequencyMS=500"))) {
            client.getDatabase("admin").runCommand(new Document("ping", 1));
            awaitTrue("3 moreToCome hello replies", () -> server.moreToComeRepliesSent() >= 3);

            List<ScriptedMongodFrame> awaitable = server.framesReceived(ScriptedMongodFrame::exhaustAllowed);
            assertFalse(awaitable.isEmpty());
            ScriptedMongodFrame request = awaitable.get(0);
            assertTrue(isHello(request.commandName()), request.toString());
            assertFalse(request.moreToCome());
            BsonDocument cmd = request.document();
            assertEquals(server.topologyVersion(), cmd.getDocument("topologyVersion"));
            assertEquals(500, cmd.getNumber("maxAwaitTimeMS").longValue());
            System.out.println("[driver] streaming hello: flags=0x" + Integer.toHexString(request.flags())
                    + " opCode=" + request.opCode() + " body keys=" + cmd.keySet());

            // The stream on that connection: the first reply answers the request, every later one
            // answers the previous reply; all carry moreToCome; about maxAwaitTimeMS apart.
            List<ScriptedMongodFrame> stream = server.framesSent(f -> f.connectionId() == request.connectionId()
                    && f.moreToCome());
            assertTrue(stream.size() >= 3, "stream replies on the connection: " + stream.size());
            assertEquals(request.requestId(), stream.get(0).responseTo());
            for (int i = 1; i < stream.size(); i++) {
                assertEquals(stream.get(i - 1).requestId(), stream.get(i).responseTo(), "chained responseTo");
                long gapMs = (stream.get(i).nanoTime() - stream.get(i - 1).nanoTime()) / 1_000_000;
                assertTrue(gapMs >= 400, "replies wait maxAwaitTimeMS, gap was " + gapMs + " ms");
            }
            for (ScriptedMongodFrame f : stream) {
                assertEquals(1.0, f.document().getNumber("ok").doubleValue());
                assertFalse(f.compressed());
            }
            // The streaming connection never sent anything after its awaitable hello.
            assertEquals(List.of(), server.framesReceived(f -> f.connectionId() == request.connectionId()
                    && f.nanoTime() > request.nanoTime()));
            // The driver is still happy with the member (the cluster still sees a primary).
            client.getDatabase("admin").runCommand(new Document("ping", 1));
            // Closing the client ends the stream: the server notices and drops every connection.
            client.close();
            awaitTrue("all connections closed", () -> server.openConnections() == 0);
            long streamed = server.moreToComeRepliesSent();
            Thread.sleep(700);
            assertEquals(streamed, server.moreToComeRepliesSent(), "no stream replies after the client left");
            assertEquals(List.of(), server.errors());
        }
    }

    @Test
    void pollModeMonitoringGetsNoMoreToComeReplies() throws Exception {
        try (ScriptedMongod server = ScriptedMongod.start();
             MongoClient client = MongoClients.create(server.uri(
                     "directConnection=true&serverMonitoringMode=poll&heartbeatFrequencyMS=500"))) {
            client.getDatabase("admin").runCommand(new Document("ping", 1));
            long start = System.nanoTime();
            // Polling at 500 ms: wait for several monitor hellos after the handshakes.
            awaitTrue("5 hellos", () -> server.framesReceived(f -> isHello(f.commandName())).size() >= 5);
            Thread.sleep(Math.max(0, 2000 - (System.nanoTime() - start) / 1_000_000));
            assertEquals(0, server.moreToComeRepliesSent());
            assertTrue(server.framesReceived().stream().noneMatch(ScriptedMongodFrame::exhaustAllowed));
            assertTrue(server.framesReceived().stream().noneMatch(f -> f.document() != null
                    && f.document().containsKey("maxAwaitTimeMS")));
            assertTrue(server.framesSent().stream().noneMatch(ScriptedMongodFrame::moreToCome));
            assertEquals(List.of(), server.errors());
        }
    }

    @Test
    void bumpingTopologyVersionAnswersAWaitingStreamingHelloAtOnce() throws Exception {
        try (ScriptedMongod server = ScriptedMongod.start();
             MongoClient client = MongoClients.create(server.uri(
                     "directConnection=true&serverMonitoringMode=stream&heartbeatFrequencyMS=20000"))) {
            client.getDatabase("admin").runCommand(new Document("ping", 1));
            awaitTrue("an awaitable hello", () -> !server.framesReceived(ScriptedMongodFrame::exhaustAllowed).isEmpty());
            Thread.sleep(300);
            assertEquals(0, server.moreToComeRepliesSent(), "nothing before maxAwaitTimeMS (20 s)");
            long bumpedAt = System.nanoTime();
            server.bumpTopologyVersion();
            awaitTrue("a moreToCome reply after the bump", () -> server.moreToComeRepliesSent() >= 1);
            ScriptedMongodFrame reply = server.framesSent(ScriptedMongodFrame::moreToCome).get(0);
            assertTrue((reply.nanoTime() - bumpedAt) / 1_000_000 < 2000, "answered at once");
            assertEquals(1, reply.document().getDocument("topologyVersion").getInt64("counter").getValue());
            Thread.sleep(1000);
            assertEquals(1, server.moreToComeRepliesSent(), "the next one waits maxAwaitTimeMS again");
            assertEquals(List.of(), server.errors());
        }
    }

    @Test
    void awaitableHelloWithoutExhaustAllowedIsAnsweredOnceWithoutMoreToCome() throws Exception {
        try (ScriptedMongod server = ScriptedMongod.start(); WireSocket raw = new WireSocket(server.port(), 1, 5000)) {
            BsonDocument tv = server.topologyVersion();
            BsonDocument hello = new BsonDocument("hello", new BsonInt32(1)).append("topologyVersion", tv)
                    .append("maxAwaitTimeMS", new BsonInt64(300)).append("$db", new BsonString("admin"));
            long t0 = System.nanoTime();
            int id = raw.sendMsg(0, hello);
            byte[] reply = raw.read();
            long waitedMs = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(waitedMs >= 250, "waited maxAwaitTimeMS, was " + waitedMs);
            assertEquals(id, ScriptedMongodWire.responseTo(reply));
            OpMsg m = ScriptedMongodWire.parseOpMsg(reply);
            assertFalse(m.moreToCome());
            assertTrue(m.body().getBoolean("isWritablePrimary").getValue());
            raw.expectSilence(800);

            // A stale topologyVersion (other processId) is answered at once.
            BsonDocument stale = new BsonDocument("processId", new org.bson.BsonObjectId(new org.bson.types.ObjectId()))
                    .append("counter", new BsonInt64(0));
            t0 = System.nanoTime();
            raw.sendMsg(0, hello.clone().append("topologyVersion", stale).append("maxAwaitTimeMS", new BsonInt64(5000)));
            raw.read();
            assertTrue((System.nanoTime() - t0) / 1_000_000 < 2000, "a different topologyVersion is answered at once");
        }
    }

    // ============================================================ (c) w:0

    @Test
    void unacknowledgedInsertGetsNoReplyAndTheConnectionStaysUsable() throws Exception {
        try (ScriptedMongod server = ScriptedMongod.start();
             MongoClient client = MongoClients.create(server.uri("directConnection=true&maxPoolSize=1"))) {
            MongoCollection<Document> coll = client.getDatabase("test").getCollection("w0");
            coll.withWriteConcern(WriteConcern.UNACKNOWLEDGED).insertOne(new Document("_id", "fire-and-forget"));
            awaitTrue("the w:0 insert stored", () -> server.documents("test", "w0").size() == 1);

            ScriptedMongodFrame w0 = server.commandsReceived("insert").get(0);
            assertTrue(w0.moreToCome(), "w:0 arrives with moreToCome: " + w0);
            assertEquals(0, w0.document().getDocument("writeConcern").getNumber("w").intValue());
            System.out.println("[driver] w:0 insert: flags=0x" + Integer.toHexString(w0.flags())
                    + " body keys=" + w0.document().keySet());

            // Acknowledged work on the same client (and, with maxPoolSize=1, the same connection).
            coll.insertOne(new Document("_id", "acknowledged"));
            assertEquals(2, coll.countDocuments());
            assertEquals(List.of("fire-and-forget", "acknowledged"),
                    coll.find().into(new ArrayList<>()).stream().map(d -> d.getString("_id")).toList());
            ScriptedMongodFrame acked = server.commandsReceived("insert").get(1);
            assertFalse(acked.moreToCome());
            assertEquals(w0.connectionId(), acked.connectionId(), "same pooled connection");

            assertTrue(server.framesSent(f -> f.responseTo() == w0.requestId()).isEmpty(), "no reply to the w:0 insert");
            assertEquals(1, server.framesSent(f -> f.responseTo() == acked.requestId()).size());
            assertEquals(List.of(), server.errors());
        }
    }

    // ============================================================ (d) getMore

    @Test
    void smallBatchSizeCursorReadsBackThroughGetMore() throws Exception {
        try (ScriptedMongod server = ScriptedMongod.start();
             MongoClient client = MongoClients.create(server.uri("directConnection=true"))) {
            MongoCollection<Document> coll = client.getDatabase("test").getCollection("many");
            coll.insertMany(IntStream.range(0, 10).mapToObj(i -> new Document("_id", i).append("group", i % 2)).toList());

            List<Integer> ids = new ArrayList<>();
            coll.find().batchSize(3).forEach(d -> ids.add(d.getInteger("_id")));
            assertEquals(IntStream.range(0, 10).boxed().toList(), ids);

            assertEquals(3, server.commandsReceived("find").get(0).document().getNumber("batchSize").intValue());
            List<ScriptedMongodFrame> getMoreReplies = server.framesSent(f -> "getMore".equals(f.commandName()));
            assertEquals(List.of(3, 3, 1), getMoreReplies.stream()
                    .map(f -> f.document().getDocument("cursor").getArray("nextBatch").size()).toList());
            assertEquals(0, getMoreReplies.get(2).document().getDocument("cursor").getInt64("id").getValue());
            assertEquals(3, server.commandsReceived("getMore").size());
            assertTrue(server.openCursorIds().isEmpty());

            // Equality filter plus getMore; closing a cursor early kills it on the server.
            List<Integer> even = new ArrayList<>();
            coll.find(eq("group", 0)).batchSize(2).forEach(d -> even.add(d.getInteger("_id")));
            assertEquals(List.of(0, 2, 4, 6, 8), even);
            try (MongoCursor<Document> cursor = coll.find().batchSize(4).iterator()) {
                assertEquals(0, cursor.next().getInteger("_id"));
                assertEquals(1, server.openCursorIds().size());
            }
            assertEquals(1, server.commandsReceived("killCursors").size());
            assertTrue(server.openCursorIds().isEmpty());
            assertEquals(List.of(), server.errors());
        }
    }

    // ============================================================ raw wire paths the driver does not take

    @Test
    void exhaustGetMoreStreamsBatchesWithMoreToCome() throws Exception {
        try (ScriptedMongod server = ScriptedMongod.start(); WireSocket raw = new WireSocket(server.port(), 1, 5000)) {
            server.insertDocuments("test", "ex", IntStream.range(0, 7)
                    .mapToObj(i -> new BsonDocument("_id", new BsonInt32(i))).toList());
            raw.sendMsg(0, new BsonDocument("find", new BsonString("ex")).append("batchSize", new BsonInt32(2))
                    .append("$db", new BsonString("test")));
            BsonDocument cursor = ScriptedMongodWire.parseOpMsg(raw.read()).body().getDocument("cursor");
            assertEquals(2, cursor.getArray("firstBatch").size());
            long cursorId = cursor.getInt64("id").getValue();
            assertNotEquals(0, cursorId);

            int getMoreId = raw.sendMsg(ScriptedMongodWire.FLAG_EXHAUST_ALLOWED,
                    new BsonDocument("getMore", new BsonInt64(cursorId)).append("collection", new BsonString("ex"))
                            .append("batchSize", new BsonInt32(2)).append("$db", new BsonString("test")));
            List<Integer> batchSizes = new ArrayList<>();
            List<Boolean> moreToCome = new ArrayList<>();
            int expectedResponseTo = getMoreId;
            long lastId = -1;
            while (lastId != 0) {
                byte[] reply = raw.read();
                assertEquals(expectedResponseTo, ScriptedMongodWire.responseTo(reply));
                expectedResponseTo = ScriptedMongodWire.requestId(reply);
                OpMsg m = ScriptedMongodWire.parseOpMsg(reply);
                batchSizes.add(m.body().getDocument("cursor").getArray("nextBatch").size());
                moreToCome.add(m.moreToCome());
                lastId = m.body().getDocument("cursor").getInt64("id").getValue();
            }
            assertEquals(List.of(2, 2, 1), batchSizes);
            assertEquals(List.of(true, true, false), moreToCome);
            assertEquals(2, server.moreToComeRepliesSent());
            raw.expectSilence(300);
        }
    }

    @Test
    void checksumIsVerifiedAndEchoed() throws Exception {
        // CRC-32C check value from RFC 3720 / the Castagnoli polynomial's standard test vector.
        assertEquals(0xE3069283, ScriptedMongodWire.crc32c("123456789".getBytes(StandardCharsets.US_ASCII), 0, 9));
        try (ScriptedMongod server = ScriptedMongod.start()) {
            try (WireSocket raw = new WireSocket(server.port(), 1, 5000)) {
                int id = raw.sendMsg(ScriptedMongodWire.FLAG_CHECKSUM_PRESENT, ping());
                byte[] reply = raw.read();
                assertEquals(id, ScriptedMongodWire.responseTo(reply));
                OpMsg m = ScriptedMongodWire.parseOpMsg(reply); // throws unless the CRC is right
                assertTrue(m.checksumPresent());
                assertTrue(ScriptedMongodWire.checksumValid(reply));
                assertEquals(1.0, m.body().getNumber("ok").doubleValue());

                raw.sendMsg(0, ping());
                assertFalse(ScriptedMongodWire.parseOpMsg(raw.read()).checksumPresent(), "no checksum when none was sent");
            }
            try (WireSocket raw = new WireSocket(server.port(), 1, 5000)) {
                byte[] corrupt = ScriptedMongodWire.buildOpMsg(7, 0, ScriptedMongodWire.FLAG_CHECKSUM_PRESENT, ping(), null);
                corrupt[corrupt.length - 1] ^= 0x5A;
                raw.sendRaw(corrupt);
                raw.expectClosed();
                awaitTrue("the checksum error recorded", () -> server.errors().stream()
                        .anyMatch(e -> e.getMessage().contains("checksum mismatch")));
            }
        }
    }

    @Test
    void compressedRequestsAreAnsweredWithTheSameCompressorExceptHello() throws Exception {
        try (ScriptedMongod server = ScriptedMongod.start(); WireSocket raw = new WireSocket(server.port(), 1, 5000)) {
            for (ScriptedMongodCompressor c : ScriptedMongodCompressor.values()) {
                byte[] plain = ScriptedMongodWire.buildOpMsg(100 + c.id(), 0, 0, ping(), null);
                raw.sendRaw(ScriptedMongodWire.compress(plain, c));
                byte[] reply = raw.read();
                assertEquals(ScriptedMongodWire.OP_COMPRESSED, ScriptedMongodWire.opCode(reply), c.toString());
                assertEquals(c.id(), ScriptedMongodWire.compressorId(reply));
                byte[] inner = ScriptedMongodWire.decompress(reply, c);
                assertEquals(100 + c.id(), ScriptedMongodWire.responseTo(inner));
                assertEquals(1.0, ScriptedMongodWire.parseOpMsg(inner).body().getNumber("ok").doubleValue());
            }
            byte[] hello = ScriptedMongodWire.buildOpMsg(200, 0, 0, new BsonDocument("hello", new BsonInt32(1))
                    .append("$db", new BsonString("admin")), null);
            raw.sendRaw(ScriptedMongodWire.compress(hello, ScriptedMongodCompressor.ZLIB));
            byte[] reply = raw.read();
            assertEquals(ScriptedMongodWire.OP_MSG, ScriptedMongodWire.opCode(reply), "hello replies are never compressed");
            assertEquals(200, ScriptedMongodWire.responseTo(reply));
            // noop is always accepted, as mongod does; it is counted like the others.
            assertEquals(1, server.compressedFramesReceived(ScriptedMongodCompressor.NOOP));
            assertEquals(1, server.compressedFramesSent(ScriptedMongodCompressor.NOOP));
            assertEquals(2, server.compressedFramesReceived(ScriptedMongodCompressor.ZLIB));
            assertEquals(1, server.compressedFramesSent(ScriptedMongodCompressor.ZLIB));
        }
        try (ScriptedMongod server = ScriptedMongod.builder().compressors(ScriptedMongodCompressor.SNAPPY).start();
             WireSocket raw = new WireSocket(server.port(), 1, 5000)) {
            raw.sendRaw(ScriptedMongodWire.compress(ScriptedMongodWire.buildOpMsg(1, 0, 0, ping(), null),
                    ScriptedMongodCompressor.ZSTD));
            raw.expectClosed();
            awaitTrue("error recorded", () -> !server.errors().isEmpty());
        }
    }

    @Test
    void moreToComeRequestIsProcessedSilently() throws Exception {
        try (ScriptedMongod server = ScriptedMongod.start(); WireSocket raw = new WireSocket(server.port(), 1, 5000)) {
            BsonDocument insert = new BsonDocument("insert", new BsonString("c")).append("$db", new BsonString("test"))
                    .append("writeConcern", new BsonDocument("w", new BsonInt32(0)));
            byte[] m = ScriptedMongodWire.buildOpMsg(1, 0, ScriptedMongodWire.FLAG_MORE_TO_COME, insert,
                    Map.of("documents", List.of(new BsonDocument("_id", new BsonInt32(1)))));
            raw.sendRaw(m);
            raw.expectSilence(300);
            assertEquals(1, server.documents("test", "c").size());
            int pingId = raw.sendMsg(0, ping());
            assertEquals(pingId, ScriptedMongodWire.responseTo(raw.read()));
        }
    }

    /**
     * As mongod's config.transactions: a session's latest retryable write is answered again, not applied
     * again; an older txnNumber is TransactionTooOld; only the latest is kept, so a long run's memory
     * grows with its sessions, not its writes.
     */
    @Test
    void aSessionsLatestRetryableWriteIsAnsweredAgainAndAnOlderOneIsTooOld() throws Exception {
        try (ScriptedMongod server = ScriptedMongod.start(); WireSocket raw = new WireSocket(server.port(), 1, 5000)) {
            BsonDocument lsid = new BsonDocument("id", new BsonBinary(UUID.randomUUID()));
            IntFunction<BsonDocument> insert = txnNumber -> new BsonDocument("insert", new BsonString("c"))
                    .append("documents", new BsonArray(List.of(new BsonDocument("_id", new BsonInt32(txnNumber)))))
                    .append("lsid", lsid).append("txnNumber", new BsonInt64(txnNumber)).append("$db", new BsonString("test"));

            raw.sendMsg(0, insert.apply(1));
            assertEquals(1, ScriptedMongodWire.parseOpMsg(raw.read()).body().getInt32("n").getValue());
            raw.sendMsg(0, insert.apply(1));
            assertEquals(1, ScriptedMongodWire.parseOpMsg(raw.read()).body().getInt32("n").getValue(), "the retry, answered");
            raw.sendMsg(0, insert.apply(2));
            raw.read();
            raw.sendMsg(0, insert.apply(1));
            BsonDocument tooOld = ScriptedMongodWire.parseOpMsg(raw.read()).body();
            assertEquals(225, tooOld.getInt32("code").getValue(), tooOld::toJson);
            raw.sendMsg(0, insert.apply(2));
            assertEquals(1, ScriptedMongodWire.parseOpMsg(raw.read()).body().getInt32("n").getValue());
            assertEquals(2, server.documents("test", "c").size(), "each write applied once");
        }
    }

    /** The update operators the report's counter needs, with the driver: upsert, $inc, $addToSet, $pull, multi, and refusals. */
    @Test
    void updatesApplyTheirOperatorsAndRefuseTheRest() throws Exception {
        try (ScriptedMongod server = ScriptedMongod.builder().standalone().start();
             MongoClient client = MongoClients.create(server.uri("directConnection=true"))) {
            MongoCollection<Document> counters = client.getDatabase("test").getCollection("counters");
            UpdateOptions upsert = new UpdateOptions().upsert(true);
            assertEquals("day", counters.updateOne(eq("_id", "day"), Updates.inc("counter", 1), upsert).getUpsertedId()
                    .asString().getValue());
            UpdateResult second = counters.updateOne(eq("_id", "day"), Updates.inc("counter", 1), upsert);
            assertEquals(1, second.getMatchedCount());
            assertEquals(1, second.getModifiedCount());
            counters.updateOne(eq("_id", "day"), Updates.addToSet("pending", "t1"));
            assertEquals(0, counters.updateOne(eq("_id", "day"), Updates.addToSet("pending", "t1")).getModifiedCount(),
                    "already in the set");
            counters.updateOne(Filters.and(eq("_id", "day"), eq("pending", "t1")),
                    Updates.combine(Updates.inc("counter", 1), Updates.pull("pending", "t1")));
            assertEquals(0, counters.updateOne(Filters.and(eq("_id", "day"), eq("pending", "t1")),
                    Updates.inc("counter", 1)).getMatchedCount(), "the token is gone: the repeat matches nothing");
            assertEquals(new Document("_id", "day").append("counter", 3).append("pending", List.of()),
                    counters.find(eq("_id", "day")).first());

            counters.updateOne(Filters.and(eq("_id", "and"), eq("kind", "k")), Updates.inc("counter", 1), upsert);
            assertEquals(new Document("_id", "and").append("kind", "k").append("counter", 1), counters.find(eq("_id", "and")).first(),
                    "an upsert under $and takes the equalities, not a field named $and");
            counters.deleteOne(eq("_id", "and"));
            counters.insertOne(new Document("_id", "other"));
            assertEquals(2, counters.updateMany(Filters.empty(), Updates.set("touched", true)).getModifiedCount());
            counters.updateMany(Filters.empty(), Updates.unset("touched"));
            assertFalse(counters.find().into(new ArrayList<>()).stream().anyMatch(d -> d.containsKey("touched")));

            MongoCommandException refused = org.junit.jupiter.api.Assertions.assertThrows(MongoCommandException.class,
                    () -> counters.updateOne(eq("_id", "day"), Updates.mul("counter", 2)));
            assertEquals(2, refused.getErrorCode(), refused.getMessage());
            MongoWriteException wrongType = org.junit.jupiter.api.Assertions.assertThrows(MongoWriteException.class,
                    () -> {
                        counters.updateOne(eq("_id", "other"), Updates.set("s", "x"));
                        counters.updateOne(eq("_id", "other"), Updates.inc("s", 1));
                    });
            assertEquals(14, wrongType.getCode(), wrongType.getMessage());
        }
    }

    @Test
    void legacyHandshakeAndErrors() throws Exception {
        try (ScriptedMongod server = ScriptedMongod.builder().hosts(List.of("a.example:1", "b.example:2"))
                .me("a.example:1").primary("a.example:1").start();
             WireSocket raw = new WireSocket(server.port(), 1, 5000)) {
            BsonDocument isMaster = new BsonDocument("isMaster", new BsonInt32(1)).append("helloOk", org.bson.BsonBoolean.TRUE)
                    .append("compression", new BsonArray(List.of(new BsonString("zstd"), new BsonString("lz4"),
                            new BsonString("snappy"))));
            raw.sendRaw(ScriptedMongodWire.buildOpQuery(5, 0, "admin.$cmd", 0, -1, isMaster));
            byte[] reply = raw.read();
            assertEquals(ScriptedMongodWire.OP_REPLY, ScriptedMongodWire.opCode(reply));
            assertEquals(5, ScriptedMongodWire.responseTo(reply));
            OpReply r = ScriptedMongodWire.parseOpReply(reply);
            assertEquals(ScriptedMongodWire.REPLY_AWAIT_CAPABLE, r.responseFlags());
            BsonDocument doc = r.documents().get(0);
            assertTrue(doc.getBoolean("ismaster").getValue());
            assertTrue(doc.getBoolean("helloOk").getValue());
            assertEquals(List.of("zstd", "snappy"), strings(doc.getArray("compression")));
            assertEquals(List.of("a.example:1", "b.example:2"), strings(doc.getArray("hosts")));
            assertEquals("a.example:1", doc.getString("me").getValue());
            assertEquals(ScriptedMongod.SET_NAME, doc.getString("setName").getValue());
            assertEquals(21, doc.getInt32("maxWireVersion").getValue());
            assertEquals(1, doc.getInt32("connectionId").getValue());

            raw.sendRaw(ScriptedMongodWire.buildOpQuery(6, 0, "admin.$cmd", 0, -1,
                    new BsonDocument("ping", new BsonInt32(1))));
            assertEquals(352, ScriptedMongodWire.parseOpReply(raw.read()).documents().get(0).getInt32("code").getValue());

            raw.sendMsg(0, new BsonDocument("frobnicate", new BsonInt32(1)).append("$db", new BsonString("admin")));
            BsonDocument err = ScriptedMongodWire.parseOpMsg(raw.read()).body();
            assertEquals(0.0, err.getNumber("ok").doubleValue());
            assertEquals(59, err.getInt32("code").getValue());
            assertEquals("CommandNotFound", err.getString("codeName").getValue());
            assertEquals("no such command: 'frobnicate'", err.getString("errmsg").getValue());

            raw.sendMsg(0, new BsonDocument("buildInfo", new BsonInt32(1)).append("$db", new BsonString("admin")));
            assertEquals("7.0.0", ScriptedMongodWire.parseOpMsg(raw.read()).body().getString("version").getValue());

            // Unknown required flag bit: the connection is closed.
            raw.sendRaw(ScriptedMongodWire.buildOpMsg(9, 0, 1 << 4, ping(), null));
            raw.expectClosed();
        }
    }

    // ============================================================ helpers

    private static boolean isHello(String name) {
        return "hello".equals(name) || "isMaster".equals(name) || "ismaster".equals(name);
    }

    /** The reply to the first handshake that listed compression. */
    private static ScriptedMongodFrame negotiationReply(ScriptedMongod server) {
        ScriptedMongodFrame asking = server.framesReceived(f -> f.document() != null
                && f.document().containsKey("compression")).get(0);
        return server.framesSent(f -> f.connectionId() == asking.connectionId()
                && f.responseTo() == asking.requestId()).get(0);
    }

    private static List<String> strings(BsonArray a) {
        return a.stream().map(v -> v.asString().getValue()).collect(Collectors.toList());
    }

    private static BsonDocument ping() {
        return new BsonDocument("ping", new BsonInt32(1)).append("$db", new BsonString("admin"));
    }

    private static void awaitTrue(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("timed out after " + WAIT + " waiting for: " + what);
            }
            Thread.sleep(20);
        }
    }

}
