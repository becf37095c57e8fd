package io.blackpipe.wire;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import org.bson.BsonBinaryReader;
import org.bson.BsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.codecs.DecoderContext;

/**
 * A minimal blocking OP_MSG client for the proxy's own control traffic (probing members at start,
 * initiating a local replica set). Application traffic never goes through here.
 */
public final class BlockingCommandClient implements AutoCloseable {
    private static final int HEADER_LENGTH = 16;

    private final Socket socket;
    private final int timeoutMillis;
    private int nextRequestId = 1;

    /** The server closed the connection before its reply was whole (one that requires TLS does so to a plain client). */
    public static final class ClosedWithoutReplyException extends IOException {
        ClosedWithoutReplyException(String message) {
            super(message);
        }
    }

    public BlockingCommandClient(String host, int port, int timeoutMillis) throws IOException {
        this(host, port, timeoutMillis, Tls.Client.OFF);
    }

    /** Connects, over TLS when {@code tls} is enabled (the handshake completes here). */
    public BlockingCommandClient(String host, int port, int timeoutMillis, Tls.Client tls) throws IOException {
        this.timeoutMillis = timeoutMillis;
        Socket plain = new Socket();
        try {
            plain.connect(new InetSocketAddress(host, port), timeoutMillis);
            plain.setSoTimeout(timeoutMillis);
            plain.setTcpNoDelay(true);
        } catch (IOException e) {
            plain.close();
            throw e;
        }
        socket = tls.enabled() ? tls.wrap(plain, host, port) : plain;
    }

    /** How long each later {@link #run} waits for its reply, from now on. */
    public void readTimeout(int millis) throws IOException {
        socket.setSoTimeout(millis);
    }

    /** Runs one command against {@code database} and returns the reply body (ok:0 replies included). */
    public BsonDocument run(String database, BsonDocument command) throws IOException {
        BsonDocument body = command.clone();
        body.put("$db", new org.bson.BsonString(database));
        byte[] bson = BsonIo.encode(body);
        int length = HEADER_LENGTH + 4 + 1 + bson.length;
        ByteBuffer out = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
        out.putInt(length).putInt(nextRequestId++).putInt(0).putInt(OpCode.OP_MSG);
        out.putInt(0).put((byte) 0).put(bson, 0, bson.length);
        OutputStream os = socket.getOutputStream();
        os.write(out.array());
        os.flush();

        DataInputStream in = new DataInputStream(socket.getInputStream());
        byte[] header = new byte[HEADER_LENGTH];
        readWhole(in, header);
        ByteBuffer h = ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN);
        int replyLength = h.getInt(0);
        int opCode = h.getInt(12);
        if (replyLength < HEADER_LENGTH + 5 || replyLength > Frames.MAX_MESSAGE_SIZE) {
            throw new IOException(notAMongoDbReply(header, replyLength));
        }
        if (opCode != OpCode.OP_MSG) {
            throw new IOException("expected an OP_MSG reply, got opcode " + opCode);
        }
        byte[] rest = new byte[replyLength - HEADER_LENGTH];
        readWhole(in, rest);
        ByteBuffer r = ByteBuffer.wrap(rest).order(ByteOrder.LITTLE_ENDIAN);
        r.getInt(); // flagBits
        if (r.get() != 0) {
            throw new IOException("reply does not start with a body section");
        }
        try (BsonBinaryReader reader = new BsonBinaryReader(r.slice().order(ByteOrder.LITTLE_ENDIAN))) {
            return new BsonDocumentCodec().decode(reader, DecoderContext.builder().build());
        }
    }

    /** Reads all of {@code into}, saying in words what an end of stream or a read timeout means here. */
    private void readWhole(DataInputStream in, byte[] into) throws IOException {
        try {
            in.readFully(into);
        } catch (EOFException e) { // its message is null: the caller would print "(null)"
            throw new ClosedWithoutReplyException("it closed the connection without replying");
        } catch (SocketTimeoutException e) {
            throw new SocketTimeoutException("no reply within " + timeoutMillis + " ms");
        }
    }

    /** A reply whose header is no MongoDB message's: another protocol on that port, most often HTTP. */
    private static String notAMongoDbReply(byte[] header, int length) {
        String start = new String(header, StandardCharsets.ISO_8859_1);
        if (start.startsWith("HTTP/")) {
            int end = start.indexOf('\r');
            return "it answered in HTTP (\"" + (end < 0 ? start + "..." : start.substring(0, end))
                    + "\"), not in MongoDB's wire protocol: is this a MongoDB server's port?";
        }
        return "its reply is no MongoDB message (the length in its header is " + length
                + "): is this a MongoDB server's port?";
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
