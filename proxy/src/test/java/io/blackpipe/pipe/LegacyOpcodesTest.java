package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.RawUpstream;
import io.blackpipe.testing.ScriptedMongodWire;
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
 * the member judges them (mongod 5.1+ refuses them itself).
 */
class LegacyOpcodesTest {
    private static final int OP_GET_MORE = 2005;
    private static final int OP_KILL_CURSORS = 2007;
    private static final long CURSOR = 4242L;

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
