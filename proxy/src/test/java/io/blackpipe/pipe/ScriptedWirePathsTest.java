package io.blackpipe.pipe;

import static com.mongodb.client.model.Filters.eq;
import static io.blackpipe.pipe.ScriptedProxy.advertised;
import static io.blackpipe.pipe.ScriptedProxy.awaitTrue;
import static io.blackpipe.pipe.ScriptedProxy.client;
import static io.blackpipe.pipe.ScriptedProxy.commandName;
import static io.blackpipe.pipe.ScriptedProxy.document;
import static io.blackpipe.pipe.ScriptedProxy.driverTopologyCounter;
import static io.blackpipe.pipe.ScriptedProxy.flags;
import static io.blackpipe.pipe.ScriptedProxy.isHello;
import static io.blackpipe.pipe.ScriptedProxy.port;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.event.ServerHeartbeatSucceededEvent;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.ScriptedMongodCompressor;
import io.blackpipe.testing.ScriptedMongodFrame;
import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.testing.TcpTap;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The real Java driver talks through the proxy to a {@link ScriptedMongod}, which implements the
 * wire paths jongodb lacks (compression negotiation, streaming hello, silence on moreToCome
 * requests). Each test asserts both what the driver saw and what the scripted server received.
 * Byte-for-byte forwarding is in {@link ScriptedWireBytesTest}; raw-socket paths (exhaust
 * getMore, checksums) in {@link ScriptedWireRawTest}.
 */
class ScriptedWirePathsTest {

    // ============================================================ 1. compression is steered off

    @ParameterizedTest(name = "compressors={0}")
    @ValueSource(strings = {"snappy", "zlib", "zstd"})
    void compressionIsSteeredOffWhileTheDriverKeepsWorking(String name) throws Exception {
        ScriptedMongodCompressor compressor = ScriptedMongodCompressor.byName(name);
        String payload = "compressible ".repeat(400);
        try (ScriptedMongod scripted = ScriptedMongod.start();
             ProxyServer proxy = ScriptedProxy.start(scripted);
             TcpTap front = new TcpTap("127.0.0.1", port(proxy))) {
            // The application's replica-set URI, straight to the proxy.
            try (MongoClient client = client(proxy.connectionString() + "&compressors=" + name, null)) {
                MongoCollection<Document> coll = client.getDatabase("test").getCollection("things");
                coll.insertOne(new Document("_id", 1).append("payload", payload));
                assertEquals(payload, coll.find(eq("_id", 1)).into(new ArrayList<>()).get(0).getString("payload"));
            }
            // A direct connection through a tap in front of the proxy, to see the driver's own bytes.
            // (A replicaSet URI would leave the tap: the proxy's hello names the proxy, not the tap.)
            try (MongoClient client = client("mongodb://127.0.0.1:" + front.port()
                    + "/?directConnection=true&compressors=" + name, null)) {
                MongoCollection<Document> coll = client.getDatabase("test").getCollection("things");
                coll.insertOne(new Document("_id", 2).append("payload", payload));
                assertEquals(payload, coll.find(eq("_id", 2)).into(new ArrayList<>()).get(0).getString("payload"));
            }
            assertEquals(List.of(1, 2), scripted.documents("test", "things").stream()
                    .map(d -> d.getInt32("_id").getValue()).toList());

            // The driver asked for the compressor in its handshake ...
            List<byte[]> driverClientFrames = ScriptedProxy.clientFrames(front);
            List<byte[]> asking = driverClientFrames.stream()
                    .filter(f -> document(f) != null && document(f).containsKey("compression")).toList();
            assertFalse(asking.isEmpty(), "the driver's pooled handshake lists its compressor");
            for (byte[] handshake : asking) {
                assertEquals(ScriptedMongodWire.OP_QUERY, ScriptedMongodWire.opCode(handshake));
                BsonDocument sent = document(handshake);
                assertEquals(new BsonArray(List.of(new BsonString(name))), sent.getArray("compression"));
                // ... and the scripted server received that very handshake without the list.
                List<ScriptedMongodFrame> arrived = scripted.framesReceived(f -> f.opCode() == ScriptedMongodWire.OP_QUERY
                        && f.requestId() == ScriptedMongodWire.requestId(handshake));
                assertEquals(1, arrived.size(), "the handshake reached the server once");
                BsonDocument expected = sent.clone();
                expected.remove("compression");
                assertEquals(expected, arrived.get(0).document());
                // The answer the driver got names no compressor.
                List<byte[]> answers = ScriptedProxy.serverFrames(front).stream()
                        .filter(f -> ScriptedMongodWire.responseTo(f) == ScriptedMongodWire.requestId(handshake)).toList();
                assertEquals(1, answers.size());
                assertFalse(document(answers.get(0)).containsKey("compression"));
            }
            // No handshake that reached the server listed compression; the server agreed to none.
            List<ScriptedMongodFrame> handshakes = scripted.framesReceived(f -> f.document() != null
                    && f.document().containsKey("client"));
            assertTrue(handshakes.size() >= asking.size() + 1, "both clients' handshakes arrived: " + handshakes.size());
            handshakes.forEach(h -> assertFalse(h.document().containsKey("compression"), h.toString()));
            scripted.framesSent(f -> isHello(f.commandName()))
                    .forEach(r -> assertFalse(r.document().containsKey("compression"), r.toString()));

            // Not one OP_COMPRESSED frame, on either side of the proxy, in either direction.
            for (ScriptedMongodCompressor c : ScriptedMongodCompressor.values()) {
                assertEquals(0, scripted.compressedFramesReceived(c), c + " frames received");
                assertEquals(0, scripted.compressedFramesSent(c), c + " frames sent");
            }
            assertTrue(scripted.framesReceived().stream().noneMatch(ScriptedMongodFrame::compressed));
            assertTrue(scripted.framesSent().stream().noneMatch(ScriptedMongodFrame::compressed));
            assertTrue(driverClientFrames.stream().noneMatch(f -> ScriptedMongodWire.opCode(f) == ScriptedMongodWire.OP_COMPRESSED));
            assertTrue(ScriptedProxy.serverFrames(front).stream()
                    .noneMatch(f -> ScriptedMongodWire.opCode(f) == ScriptedMongodWire.OP_COMPRESSED));
            assertTrue(driverClientFrames.stream().anyMatch(f -> "insert".equals(commandName(f))),
                    "the tapped client's insert went through the tap uncompressed");
            assertEquals(List.of(), scripted.errors());

            // Sanity: the same server, without the proxy, does compress with this compressor.
            try (MongoClient direct = client(scripted.uri("directConnection=true&compressors=" + name), null)) {
                direct.getDatabase("test").getCollection("things").insertOne(new Document("_id", 3));
            }
            assertTrue(scripted.compressedFramesReceived(compressor) > 0 && scripted.compressedFramesSent(compressor) > 0,
                    "a direct client gets " + name + " compression from the same server");
        }
    }

    // ============================================================ 2. streaming and polled hello

    @Test
    void streamedHelloRepliesAreForwardedAndRewrittenOneByOne() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted)) {
            ScriptedProxy.Heartbeats heartbeats = new ScriptedProxy.Heartbeats();
            try (MongoClient client = client(proxy.connectionString()
                    + "&serverMonitoringMode=stream&heartbeatFrequencyMS=500", heartbeats)) {
                client.getDatabase("admin").runCommand(new Document("ping", 1));
                awaitTrue("3 moreToCome hello replies from the server", () -> scripted.moreToComeRepliesSent() >= 3);
                long streamed = scripted.moreToComeRepliesSent();
                // Every streamed reply reached the driver as its own awaited heartbeat.
                awaitTrue("an awaited heartbeat per streamed reply", () -> heartbeats.awaited().size() >= streamed);

                ScriptedMongodFrame request = scripted.framesReceived(ScriptedMongodFrame::exhaustAllowed).get(0);
                assertTrue(isHello(request.commandName()), request.toString());
                List<ScriptedMongodFrame> stream = scripted.framesSent(f -> f.moreToCome()
                        && f.connectionId() == request.connectionId());
                assertTrue(stream.size() >= 3, "one streaming connection carried the replies: " + stream.size()
                        + " of " + streamed + " (a reply the driver rejected would have restarted the stream)");
                assertEquals(request.requestId(), stream.get(0).responseTo());
                for (ScriptedMongodFrame reply : stream) {
                    assertTrue(isHello(reply.commandName()));
                    assertEquals(List.of(scripted.address()), strings(reply.document().getArray("hosts")),
                            "the server itself names its own address");
                }
                for (ServerHeartbeatSucceededEvent event : heartbeats.events) {
                    assertNamesOnlyTheProxy(event.getReply(), advertised(proxy), scripted.address());
                }

                // Each bump is answered at once by a streamed reply; the driver's topologyVersion follows.
                for (long bump = 1; bump <= 2; bump++) {
                    long counter = bump;
                    scripted.bumpTopologyVersion();
                    awaitTrue("the driver holds counter " + counter, () -> driverTopologyCounter(client) == counter);
                    awaitTrue(() -> "an awaited heartbeat with counter " + counter + "; " + describe(heartbeats, scripted),
                            () -> heartbeats.awaited().stream().anyMatch(e -> counter(e) == counter));
                    ServerHeartbeatSucceededEvent carrying = heartbeats.awaited().stream()
                            .filter(e -> counter(e) == counter).findFirst().orElseThrow();
                    assertNamesOnlyTheProxy(carrying.getReply(), advertised(proxy), scripted.address());
                    assertTrue(scripted.framesSent(f -> f.moreToCome() && f.document()
                            .getDocument("topologyVersion").getInt64("counter").getValue() == counter).size() >= 1,
                            "counter " + counter + " travelled in a moreToCome reply");
                }
                System.out.println("[stream] " + describe(heartbeats, scripted));
                assertEquals(scripted.topologyVersion().getObjectId("processId").getValue(),
                        client.getClusterDescription().getServerDescriptions().get(0).getTopologyVersion().getProcessId());
                assertEquals(List.of(advertised(proxy)), client.getClusterDescription().getServerDescriptions().stream()
                        .map(d -> d.getAddress().toString()).toList());
            }
            assertEquals(List.of(), scripted.errors());
        }
    }

    @Test
    void polledHelloRepliesAreRewrittenWithoutAnyMoreToCome() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted)) {
            ScriptedProxy.Heartbeats heartbeats = new ScriptedProxy.Heartbeats();
            try (MongoClient client = client(proxy.connectionString()
                    + "&serverMonitoringMode=poll&heartbeatFrequencyMS=500", heartbeats)) {
                client.getDatabase("admin").runCommand(new Document("ping", 1));
                awaitTrue("4 polled heartbeats", () -> heartbeats.events.size() >= 4);
                for (ServerHeartbeatSucceededEvent event : heartbeats.events) {
                    assertFalse(event.isAwaited(), "polling never awaits");
                    assertNamesOnlyTheProxy(event.getReply(), advertised(proxy), scripted.address());
                }
            }
            assertEquals(0, scripted.moreToComeRepliesSent());
            assertTrue(scripted.framesReceived().stream().noneMatch(ScriptedMongodFrame::exhaustAllowed));
            assertTrue(scripted.framesSent(f -> isHello(f.commandName())).size() >= 4, "the polls reached the server");
            assertEquals(List.of(), scripted.errors());
        }
    }

    // ============================================================ 3. w:0 (moreToCome request)

    @Test
    void unacknowledgedInsertGetsNoReplyAndTheSameConnectionKeepsWorking() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted);
             TcpTap front = new TcpTap("127.0.0.1", port(proxy));
             MongoClient client = client("mongodb://127.0.0.1:" + front.port() + "/?directConnection=true&maxPoolSize=1", null)) {
            MongoCollection<Document> coll = client.getDatabase("test").getCollection("w0");
            coll.withWriteConcern(WriteConcern.UNACKNOWLEDGED).insertOne(new Document("_id", "fire-and-forget"));
            assertEquals(List.of("fire-and-forget"), coll.find(eq("_id", "fire-and-forget")).into(new ArrayList<>())
                    .stream().map(d -> d.getString("_id")).toList(), "an acknowledged find right after the w:0 insert");
            coll.insertOne(new Document("_id", "acknowledged"));
            assertEquals(List.of("fire-and-forget", "acknowledged"), scripted.documents("test", "w0").stream()
                    .map(d -> d.getString("_id").getValue()).toList());

            // The server got the insert with moreToCome, exactly as the driver sent it, and stayed silent.
            ScriptedMongodFrame w0 = scripted.commandsReceived("insert").get(0);
            assertTrue(w0.moreToCome(), w0.toString());
            assertEquals(0, w0.document().getDocument("writeConcern").getNumber("w").intValue());
            assertTrue(scripted.framesSent(f -> f.responseTo() == w0.requestId()).isEmpty(), "the server sent no reply");
            ScriptedMongodFrame find = scripted.commandsReceived("find").get(0);
            assertEquals(w0.connectionId(), find.connectionId(), "the find used the same pooled connection");
            assertEquals(1, scripted.framesSent(f -> f.responseTo() == find.requestId()).size());

            // In front of the proxy: the driver sent those bytes, and no frame answered them.
            List<TcpTap.Recording> carrying = front.recordings().stream().filter(r -> r.clientFrames().stream()
                    .anyMatch(f -> ScriptedMongodWire.requestId(f) == w0.requestId())).toList();
            assertEquals(1, carrying.size());
            List<byte[]> requests = carrying.get(0).clientFrames();
            byte[] sent = requests.stream().filter(f -> ScriptedMongodWire.requestId(f) == w0.requestId()).findFirst().orElseThrow();
            assertArrayEquals(sent, w0.raw(), "the proxy forwarded the w:0 insert as the same bytes");
            assertTrue((flags(sent) & ScriptedMongodWire.FLAG_MORE_TO_COME) != 0);
            assertTrue(ScriptedProxy.serverFrames(front).stream().noneMatch(f -> ScriptedMongodWire.responseTo(f) == w0.requestId()),
                    "no frame reached the driver in answer to the w:0 insert");
            assertTrue(requests.stream().anyMatch(f -> ScriptedMongodWire.requestId(f) == find.requestId()),
                    "the find followed on the same tapped connection");
            assertEquals(1, carrying.get(0).serverFrames().stream()
                    .filter(f -> ScriptedMongodWire.responseTo(f) == find.requestId()).count());
            assertEquals(List.of(), scripted.errors());
        }
    }

    // ============================================================ 4. appName

    @Test
    void theHandshakeCarriesTheApplicationNameToTheServer() throws Exception {
        String appName = "wire-paths-app";
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted)) {
            try (MongoClient client = client(proxy.connectionString() + "&appName=" + appName, null)) {
                client.getDatabase("admin").runCommand(new Document("ping", 1));
            }
            List<ScriptedMongodFrame> handshakes = scripted.framesReceived(f -> isHello(f.commandName())
                    && f.document().containsKey("client"));
            assertTrue(handshakes.size() >= 2, "monitor and pooled handshakes: " + handshakes);
            for (ScriptedMongodFrame handshake : handshakes) {
                assertEquals(appName, handshake.document().getDocument("client").getDocument("application")
                        .getString("name").getValue(), handshake.toString());
            }
            assertEquals(1, scripted.commandsReceived("ping").size());
            assertEquals(List.of(), scripted.errors());
        }
    }

    // ============================================================ helpers

    private static void assertNamesOnlyTheProxy(BsonDocument reply, String proxyAddress, String upstreamAddress) {
        assertEquals(proxyAddress, reply.getString("me").getValue(), "me");
        assertEquals(proxyAddress, reply.getString("primary").getValue(), "primary");
        assertEquals(List.of(proxyAddress), strings(reply.getArray("hosts")), "hosts");
        assertFalse(reply.toJson().contains(upstreamAddress), "the upstream address leaked: " + reply.toJson());
        assertFalse(reply.containsKey("compression"));
    }

    private static long counter(ServerHeartbeatSucceededEvent event) {
        return event.getReply().getDocument("topologyVersion").getInt64("counter").getValue();
    }

    private static String describe(ScriptedProxy.Heartbeats heartbeats, ScriptedMongod scripted) {
        return "heartbeats " + heartbeats.events.stream().map(e -> (e.isAwaited() ? "A" : "-")
                + e.getConnectionId().getLocalValue() + "/" + counter(e)).toList()
                + " failed " + heartbeats.failures.stream().map(e -> e.getThrowable().toString()).toList()
                + " exhaust requests " + scripted.framesReceived(ScriptedMongodFrame::exhaustAllowed)
                + " accepted " + scripted.connectionsAccepted();
    }

    private static List<String> strings(BsonArray array) {
        return array.stream().map(v -> v.asString().getValue()).toList();
    }
}
