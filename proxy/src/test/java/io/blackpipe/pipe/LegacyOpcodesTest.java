package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.RawUpstream;
import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.testing.ScriptedMongodWire.OpReply;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.testing.WireSocket;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.junit.jupiter.api.Test;

/**
 * The legacy opcodes servers before 5.1 still take: PyMongo 3.x reads {@code find_raw_batches}
 * with an OP_QUERY find, then OP_GET_MORE, whatever the server, and sends OP_KILL_CURSORS for a
 * {@code MongoClient.kill_cursors} without a namespace.
 * Through the proxy they reach the member as they came and its replies come back, as without it;
 * the member judges them (mongod 5.1+ refuses them itself), unless it would answer them as an
 * unknown command (jongodb): the proxy refuses them then, as mongod 5.1+ does.
 */
class LegacyOpcodesTest {
    private static final int OP_GET_MORE = 2005;
    private static final int OP_KILL_CURSORS = 2007;
    private static final long CURSOR = 4242L;
    private static final int QUERY_FAILURE = 2;
    private static final int WIRE_VERSION_5_1 = 14;

    /** What the member received other than hellos, byte for byte, and the replies it sent to them. */
    private final List<byte[]> received = new CopyOnWriteArrayList<>();
    private final List<byte[]> sent = new CopyOnWriteArrayList<>();

    @Test
    void getMoreAndKillCursorsReachTheMemberAndItsReplyComesBack() throws Exception {
        try (RawUpstream member = new RawUpstream((socket, index) -> serve(socket));
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded("mongodb://" + member.address() + "/?directConnection=true"));
             WireSocket client = new WireSocket(proxy.members().get(0).advertised().port(), 200, 5_000)) {
            byte[] getMore = getMore(100, "db.items", CURSOR);
            client.sendRaw(getMore);
            byte[] reply = client.read();
            assertEquals(1, ScriptedMongodWire.opCode(reply), "an OP_REPLY");
            assertEquals(100, ScriptedMongodWire.responseTo(reply));
            assertArrayEquals(sent.get(0), reply, "the member's reply, as it sent it");

            byte[] killCursors = killCursors(101, CURSOR);
            client.sendRaw(killCursors); // no reply, as ever
            client.sendMsg(0, new BsonDocument("ping", new BsonInt32(1)).append("$db", new org.bson.BsonString("admin")));
            byte[] pong = client.read();
            assertEquals(2013, ScriptedMongodWire.opCode(pong), "the connection still serves commands");

            assertEquals(2, received.size(), "the member got both legacy messages");
            assertArrayEquals(getMore, received.get(0));
            assertArrayEquals(killCursors, received.get(1));
            assertTrue(member.errors().isEmpty(), member.errors().toString());
        }
    }

    /**
     * A legacy OP_QUERY find and OP_GET_MORE through the proxy on the lane: mongod 5.1+ refuses them (QueryFailure, code
     * 5739101), and a command over OP_QUERY other than the handshake's (UnsupportedOpQueryCommand); and so does the proxy in the place of a member that answers them as an unknown command though its wire
     * version says 5.1 (jongodb, whose error PyMongo 3's exhaust cursors and raw batches read as the one document found).
     */
    @Test
    void aLegacyFindGetMoreAndCommandAreRefusedAsMongod51RefusesThemOnTheLane() throws Exception {
        int wireVersion = UpstreamLane.directHello().getNumber("maxWireVersion").intValue();
        try (LogCapture log = LogCapture.start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()));
             WireSocket client = new WireSocket(proxy.members().get(0).advertised().port(), 300, 5_000)) {
            client.sendRaw(ScriptedMongodWire.buildOpQuery(300, 0, "legacy.items", 0, 0, new BsonDocument()));
            byte[] findReply = client.read();
            client.sendRaw(getMore(301, "legacy.items", CURSOR));
            byte[] getMoreReply = client.read();
            assertEquals(300, ScriptedMongodWire.responseTo(findReply));
            assertEquals(301, ScriptedMongodWire.responseTo(getMoreReply));
            OpReply find = ScriptedMongodWire.parseOpReply(findReply);
            OpReply more = ScriptedMongodWire.parseOpReply(getMoreReply);
            if (wireVersion < WIRE_VERSION_5_1) { // a server before 5.1 takes them: the query finds nothing, the cursor is unknown
                assertEquals(0, find.responseFlags() & QUERY_FAILURE, () -> UpstreamLane.name() + ": " + find);
                assertEquals(List.of(), find.documents(), () -> UpstreamLane.name() + ": " + find);
            } else {
                assertRefused("OP_QUERY", find);
                assertRefused("OP_GET_MORE", more);
            }
            if (UpstreamLane.isJongodb()) {
                assertTrue(log.toldOfAMember("answers a legacy OP_QUERY find or OP_GET_MORE as an unknown command", "legacyQueriesAsCommands"),
                        () -> String.join("\n", log.messages()));
            }
            String database = UpstreamLane.freshDatabaseName("legacy");
            BsonDocument insert = BsonDocument.parse("{insert: 'items', documents: [{_id: 1}]}");
            client.sendRaw(ScriptedMongodWire.buildOpQuery(302, 0, database + ".$cmd", 0, -1, insert));
            OpReply inserted = ScriptedMongodWire.parseOpReply(client.read());
            if (wireVersion >= WIRE_VERSION_5_1) { // a command over OP_QUERY other than the handshake's is refused, and not run
                assertEquals(0, inserted.responseFlags() & QUERY_FAILURE, inserted::toString);
                BsonDocument error = inserted.documents().get(0);
                assertEquals(352, error.getNumber("code").intValue(), error::toJson);
                assertEquals("UnsupportedOpQueryCommand", error.getString("codeName").getValue(), error::toJson);
                assertTrue(error.getString("errmsg").getValue().startsWith("Unsupported OP_QUERY command: insert. The client driver"
                        + " may require an upgrade."), error::toJson);
                try (MongoClient direct = UpstreamLane.directClient()) {
                    assertEquals(0, direct.getDatabase(database).getCollection("items").countDocuments(), "on " + UpstreamLane.name());
                }
            }
            client.sendMsg(0, new BsonDocument("ping", new BsonInt32(1)).append("$db", new org.bson.BsonString("admin")));
            assertEquals(2013, ScriptedMongodWire.opCode(client.read()), "the connection still serves commands");
        }
    }

    private static void assertRefused(String opcode, OpReply reply) {
        assertEquals(QUERY_FAILURE, reply.responseFlags() & QUERY_FAILURE, () -> UpstreamLane.name() + ": " + reply);
        assertEquals(1, reply.documents().size(), reply::toString);
        BsonDocument error = reply.documents().get(0);
        assertTrue(error.getString("$err").getValue().startsWith(opcode + " is no longer supported. The client driver may require"
                + " an upgrade."), error::toJson);
        assertEquals(5739101, error.getNumber("code").intValue(), error::toJson);
        assertEquals(0, error.getNumber("ok").intValue(), error::toJson);
    }

    /** Answers hellos and pings as a standalone, an OP_GET_MORE with one more document; OP_KILL_CURSORS gets no reply. */
    private void serve(Socket socket) throws Exception {
        InputStream in = socket.getInputStream();
        OutputStream out = socket.getOutputStream();
        int replyId = 1;
        byte[] request;
        while ((request = RawUpstream.readFrame(in)) != null) {
            int opCode = ScriptedMongodWire.opCode(request);
            if (opCode == OP_GET_MORE || opCode == OP_KILL_CURSORS) {
                received.add(request);
            }
            if (opCode == OP_KILL_CURSORS) {
                continue;
            }
            byte[] reply = opCode == OP_GET_MORE
                    ? ScriptedMongodWire.buildOpReply(replyId++, ScriptedMongodWire.requestId(request), 0, 0L,
                            new BsonDocument("_id", new BsonInt32(3)))
                    : ScriptedMongodWire.buildOpMsg(replyId++, ScriptedMongodWire.requestId(request), 0, RawUpstream.standaloneHello(), null);
            if (opCode == OP_GET_MORE) {
                sent.add(reply);
            }
            out.write(reply);
            out.flush();
        }
    }

    private static byte[] getMore(int requestId, String namespace, long cursorId) {
        byte[] ns = namespace.getBytes(StandardCharsets.UTF_8);
        int length = 16 + 4 + ns.length + 1 + 4 + 8;
        return ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN).putInt(length).putInt(requestId).putInt(0).putInt(OP_GET_MORE)
                .putInt(0).put(ns).put((byte) 0).putInt(2).putLong(cursorId).array();
    }

    private static byte[] killCursors(int requestId, long cursorId) {
        int length = 16 + 4 + 4 + 8;
        return ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN).putInt(length).putInt(requestId).putInt(0).putInt(OP_KILL_CURSORS)
                .putInt(0).putInt(1).putLong(cursorId).array();
    }
}
