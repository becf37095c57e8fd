package io.blackpipe.pipe;

import static com.mongodb.client.model.Filters.eq;
import static io.blackpipe.pipe.ScriptedProxy.awaitTrue;
import static io.blackpipe.pipe.ScriptedProxy.commandName;
import static io.blackpipe.pipe.ScriptedProxy.document;
import static io.blackpipe.pipe.ScriptedProxy.driverTopologyCounter;
import static io.blackpipe.pipe.ScriptedProxy.flags;
import static io.blackpipe.pipe.ScriptedProxy.isHello;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoWriteException;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoCursor;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.testing.TcpTap;
import io.blackpipe.topology.Member;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.IntStream;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * Byte for byte: taps in front of the proxy (driver side) and behind it (between the proxy and a
 * {@link ScriptedMongod}) record a mixed, uncompressed workload of the real Java driver. Every
 * client-to-server frame must be identical on both sides; every server-to-client frame too,
 * except hello replies, which may differ only in the rewritten member addresses.
 */
class ScriptedWireBytesTest {

    @Test
    void everyFrameCrossesTheProxyUnchangedExceptHelloAddresses() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start();
             TcpTap back = new TcpTap("127.0.0.1", scripted.port())) {
            // The member the proxy discovers must be the back tap, so the server names the tap.
            String backAddress = "127.0.0.1:" + back.port();
            scripted.setAdvertisedHosts(List.of(backAddress));
            scripted.setAdvertisedMe(backAddress);
            scripted.setAdvertisedPrimary(backAddress);
            try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(
                    "mongodb://" + backAddress + "/?replicaSet=" + ScriptedMongod.SET_NAME));
                 TcpTap front = new TcpTap("127.0.0.1", ScriptedProxy.port(proxy))) {
                Member member = ScriptedProxy.member(proxy);
                assertEquals(backAddress, member.upstream().toString());
                String proxyAddress = member.advertised().toString();

                runWorkload(scripted, front);
                awaitTrue("the proxy closed every upstream connection", () -> scripted.openConnections() == 0
                        && proxy.openConnections(member.upstream()) == 0);

                compare(front.recordings(), back.recordings(), backAddress, proxyAddress);
                assertEquals(List.of(), scripted.errors());
            }
        }
    }

    /**
     * Streaming monitoring with a long maxAwaitTimeMS: the streamed hello replies are produced by
     * topologyVersion bumps, so none is in flight when the client closes and both taps end equal.
     */
    private static void runWorkload(ScriptedMongod scripted, TcpTap front) throws Exception {
        ScriptedProxy.Heartbeats heartbeats = new ScriptedProxy.Heartbeats();
        try (MongoClient client = ScriptedProxy.client("mongodb://127.0.0.1:" + front.port()
                + "/?directConnection=true&serverMonitoringMode=stream&heartbeatFrequencyMS=20000", heartbeats)) {
            client.getDatabase("admin").runCommand(new Document("ping", 1));
            awaitTrue("a streaming hello", () -> !scripted.framesReceived(f -> f.exhaustAllowed()).isEmpty());
            for (long bump = 1; bump <= 2; bump++) {
                long counter = bump;
                scripted.bumpTopologyVersion();
                awaitTrue("the driver holds counter " + counter, () -> driverTopologyCounter(client) == counter);
            }
            assertTrue(heartbeats.awaited().size() >= 2, "streamed replies reached the driver");

            MongoCollection<Document> coll = client.getDatabase("test").getCollection("mixed");
            coll.insertOne(new Document("_id", 0).append("big", "b".repeat(2_000_000))); // spans many TCP reads
            coll.insertMany(IntStream.range(1, 11).mapToObj(i -> new Document("_id", i).append("g", i % 2)).toList());
            assertThrows(MongoWriteException.class, () -> coll.insertOne(new Document("_id", 1)), "duplicate key");
            coll.withWriteConcern(WriteConcern.UNACKNOWLEDGED).insertOne(new Document("_id", 11).append("g", 1));
            List<Integer> ids = new ArrayList<>();
            coll.find(eq("g", 1)).batchSize(2).forEach(d -> ids.add(d.getInteger("_id")));
            assertEquals(List.of(1, 3, 5, 7, 9, 11), ids);
            try (MongoCursor<Document> cursor = coll.find().batchSize(3).iterator()) {
                assertEquals(0, cursor.next().getInteger("_id")); // closed early: killCursors
            }
            assertEquals(12, coll.countDocuments());
            assertEquals(12, coll.estimatedDocumentCount());
            assertEquals(1, coll.deleteOne(eq("_id", 0)).getDeletedCount());
            assertThrows(MongoCommandException.class,
                    () -> client.getDatabase("admin").runCommand(new Document("frobnicate", 1)));
            assertEquals("7.0.0", client.getDatabase("admin").runCommand(new Document("buildInfo", 1)).getString("version"));
        }
        Set<String> seen = new HashSet<>();
        scripted.framesReceived().forEach(f -> seen.add(f.commandName()));
        assertTrue(seen.containsAll(List.of("isMaster", "hello", "insert", "find", "getMore", "killCursors", "aggregate",
                "count", "delete", "frobnicate", "buildInfo", "endSessions")), "workload reached the server: " + seen);
    }

    private static void compare(List<TcpTap.Recording> front, List<TcpTap.Recording> back,
                                String backAddress, String proxyAddress) {
        assertTrue(front.size() >= 3, "monitor, RTT and pooled connections: " + front.size());
        List<TcpTap.Recording> unmatched = new ArrayList<>(back);
        TreeMap<String, Integer> compared = new TreeMap<>();
        for (TcpTap.Recording f : front) {
            List<byte[]> requests = f.clientFrames();
            assertFalse(requests.isEmpty(), "every driver connection sent something");
            // Connections are paired by content, not by order (the proxy's discovery probe adds one).
            List<TcpTap.Recording> same = unmatched.stream().filter(b -> sameFrames(requests, b.clientFrames())).toList();
            assertEquals(1, same.size(), "exactly one upstream connection carried these requests: "
                    + requests.stream().map(ScriptedProxy::commandName).toList());
            TcpTap.Recording b = same.get(0);
            unmatched.remove(b);
            requests.forEach(r -> compared.merge("request " + commandName(r), 1, Integer::sum));
            compareReplies(requests, f.serverFrames(), b.serverFrames(), backAddress, proxyAddress, compared);
        }
        // What is left is the proxy's own discovery probe (HelloProbe), with no client metadata: a hello with a read
        // preference and one with w:0, both of which a mongod (and this one) takes, and an endSessions of no session
        assertEquals(1, unmatched.size(), "only the discovery probe has no driver counterpart");
        List<byte[]> probe = unmatched.get(0).clientFrames();
        assertEquals(List.of("hello", "hello", "endSessions"), probe.stream().map(ScriptedProxy::commandName).toList());
        assertTrue(document(probe.get(0)).containsKey("$readPreference"));
        assertTrue(document(probe.get(1)).containsKey("writeConcern"));
        probe.forEach(frame -> assertFalse(document(frame).containsKey("client")));

        System.out.println("[bytes] frames compared across the proxy: " + compared);
        assertTrue(compared.getOrDefault("rewritten hello reply (streamed)", 0) >= 2, compared.toString());
        assertTrue(compared.getOrDefault("rewritten hello reply (OP_REPLY)", 0) >= 3, compared.toString());
        assertTrue(compared.getOrDefault("identical reply", 0) >= 12, compared.toString());
        assertEquals(1, compared.getOrDefault("request insert", 0) - compared.getOrDefault("identical reply to insert", 0),
                "exactly one insert (w:0) had no reply on either side");
    }

    private static void compareReplies(List<byte[]> requests, List<byte[]> front, List<byte[]> back,
                                       String backAddress, String proxyAddress, TreeMap<String, Integer> compared) {
        assertEquals(back.size(), front.size(), "as many replies reached the driver as the server sent");
        Set<Integer> helloIds = new HashSet<>();
        java.util.Map<Integer, String> names = new java.util.HashMap<>();
        for (byte[] r : requests) {
            String name = commandName(r);
            names.put(ScriptedMongodWire.requestId(r), name);
            if (isHello(name)) {
                helloIds.add(ScriptedMongodWire.requestId(r));
            }
        }
        for (int i = 0; i < back.size(); i++) {
            byte[] b = back.get(i);
            byte[] f = front.get(i);
            int answered = ScriptedMongodWire.responseTo(b);
            if (!helloIds.contains(answered)) {
                assertArrayEquals(b, f, "reply #" + i + " to " + names.get(answered) + " must cross the proxy unchanged");
                compared.merge("identical reply", 1, Integer::sum);
                compared.merge("identical reply to " + names.get(answered), 1, Integer::sum);
                continue;
            }
            boolean streamed = ScriptedMongodWire.opCode(b) == ScriptedMongodWire.OP_MSG
                    && (flags(b) & ScriptedMongodWire.FLAG_MORE_TO_COME) != 0;
            if (streamed) {
                helloIds.add(ScriptedMongodWire.requestId(b)); // the next streamed reply answers this one
            }
            assertFalse(Arrays.equals(b, f), "hello reply #" + i + " was not rewritten");
            assertArrayEquals(withAddressesMapped(b, backAddress, proxyAddress), f,
                    "hello reply #" + i + " differs only in the rewritten addresses");
            assertFalse(document(f).toJson().contains(backAddress));
            compared.merge("rewritten hello reply (" + (streamed ? "streamed"
                    : ScriptedMongodWire.opCode(b) == ScriptedMongodWire.OP_REPLY ? "OP_REPLY" : "OP_MSG") + ")", 1, Integer::sum);
        }
    }

    /** The frame the proxy should send for a hello reply: same header and flags, addresses mapped. */
    private static byte[] withAddressesMapped(byte[] reply, String from, String to) {
        BsonDocument doc = document(reply).clone();
        assertEquals(from, doc.getString("me").getValue());
        for (String field : List.of("me", "primary")) {
            if (doc.isString(field) && doc.getString(field).getValue().equals(from)) {
                doc.put(field, new BsonString(to));
            }
        }
        for (String list : List.of("hosts", "passives", "arbiters")) {
            if (doc.isArray(list)) {
                BsonArray mapped = new BsonArray();
                for (BsonValue v : doc.getArray(list)) {
                    mapped.add(v.isString() && v.asString().getValue().equals(from) ? new BsonString(to) : v);
                }
                doc.put(list, mapped);
            }
        }
        int requestId = ScriptedMongodWire.requestId(reply);
        int responseTo = ScriptedMongodWire.responseTo(reply);
        if (ScriptedMongodWire.opCode(reply) == ScriptedMongodWire.OP_MSG) {
            return ScriptedMongodWire.buildOpMsg(requestId, responseTo, flags(reply), doc, null);
        }
        assertEquals(ScriptedMongodWire.OP_REPLY, ScriptedMongodWire.opCode(reply));
        long cursorId = ScriptedMongodWire.longLE(reply, ScriptedMongodWire.HEADER_SIZE + 4);
        return ScriptedMongodWire.buildOpReply(requestId, responseTo, flags(reply), cursorId, doc);
    }

    private static boolean sameFrames(List<byte[]> a, List<byte[]> b) {
        if (a.size() != b.size()) {
            return false;
        }
        for (int i = 0; i < a.size(); i++) {
            if (!Arrays.equals(a.get(i), b.get(i))) {
                return false;
            }
        }
        return true;
    }
}
