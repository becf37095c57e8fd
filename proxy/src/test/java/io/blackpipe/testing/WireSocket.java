package io.blackpipe.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import org.bson.BsonDocument;

/**
 * A bare socket speaking the wire protocol (with ScriptedMongodWire's independent framing), for
 * the paths the Java driver never takes: exhaust getMore, checksums, moreToCome requests.
 */
public final class WireSocket implements AutoCloseable {
    private static final int MAX_MESSAGE = 64 * 1024 * 1024;

    private final Socket socket;
    private final InputStream in;
    private final int timeoutMillis;
    private int nextId;

    public WireSocket(int port, int firstRequestId, int timeoutMillis) throws IOException {
        this.socket = new Socket("127.0.0.1", port);
        this.timeoutMillis = timeoutMillis;
        socket.setSoTimeout(timeoutMillis);
        socket.setTcpNoDelay(true);
        in = socket.getInputStream();
        nextId = firstRequestId;
    }

    /** Sends an OP_MSG (with a CRC-32C when flags ask for one) and returns its requestID. */
    public int sendMsg(int flags, BsonDocument body) throws IOException {
        int id = nextId++;
        sendRaw(ScriptedMongodWire.buildOpMsg(id, 0, flags, body, null));
        return id;
    }

    public void sendRaw(byte[] message) throws IOException {
        socket.getOutputStream().write(message);
        socket.getOutputStream().flush();
    }

    /** Bytes that can be read now without waiting: what the peer has sent that is not read yet. */
    public int available() throws IOException {
        return in.available();
    }

    /** The next whole message; fails if the peer closed instead. */
    public byte[] read() throws IOException {
        byte[] m = ScriptedMongodWire.readMessage(in, MAX_MESSAGE);
        assertNotNull(m, "connection closed instead of a reply");
        assertEquals(m.length, ScriptedMongodWire.messageLength(m));
        return m;
    }

    /** The body of the next message, an OP_MSG answering {@code requestId} with ok: 1. */
    public BsonDocument readOk(int requestId) throws IOException {
        byte[] message = read();
        assertEquals(requestId, ScriptedMongodWire.responseTo(message));
        BsonDocument body = ScriptedMongodWire.parseOpMsg(message).body();
        assertEquals(1.0, body.getNumber("ok").doubleValue(), body::toJson);
        return body;
    }

    /** Nothing arrives for {@code millis}. */
    public void expectSilence(int millis) throws IOException {
        socket.setSoTimeout(millis);
        try {
            int b = in.read();
            fail("expected no reply, got " + (b < 0 ? "end of stream" : "data"));
        } catch (SocketTimeoutException expected) {
            // silence, as it should be
        } finally {
            socket.setSoTimeout(timeoutMillis);
        }
    }

    /** The peer closes the connection (end of stream or reset) without sending a message. */
    public void expectClosed() throws IOException {
        try {
            assertNull(ScriptedMongodWire.readMessage(in, MAX_MESSAGE), "the connection should be closed");
        } catch (SocketException reset) {
            // a reset is a close too
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
