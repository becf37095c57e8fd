package io.blackpipe.wire;

import java.io.IOException;
import java.io.InputStream;
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
    private final Tls.Client tls;
    /** How long a reply is waited for: the connect timeout, until {@link #readTimeout} changes it. */
    private int timeoutMillis;
    private int nextRequestId = 1;
    private ReplyInProgress reply = new ReplyInProgress();

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
        this.tls = tls;
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
        timeoutMillis = millis;
    }

    /** Runs one command against {@code database} and returns the reply body (ok:0 replies included). */
    public BsonDocument run(String database, BsonDocument command) throws IOException {
        BsonDocument body = command.clone();
        body.put("$db", new org.bson.BsonString(database));
        byte[] bson = BsonIo.encode(body);
        ByteBuffer out = request(OpCode.OP_MSG, 4 + 1 + bson.length);
        out.putInt(0).put((byte) 0).put(bson, 0, bson.length);
        ByteBuffer r = exchange(out, OpCode.OP_MSG, 5);
        r.getInt(); // flagBits
        if (r.get() != 0) {
            throw new IOException("reply does not start with a body section");
        }
        return decode(r);
    }

    /** A reply to a legacy OP_QUERY: its responseFlags, and its first document (null when it has none). */
    public record LegacyReply(int responseFlags, BsonDocument first) {
    }

    /**
     * Sends a legacy OP_QUERY find of {@code namespace} (an empty query, one document at most) and reads its OP_REPLY: to
     * ask a member how it answers the opcode, which MongoDB 5.1 removed for all but the handshake.
     */
    public LegacyReply legacyFind(String namespace) throws IOException {
        byte[] name = namespace.getBytes(StandardCharsets.UTF_8);
        byte[] query = BsonIo.encode(new BsonDocument());
        ByteBuffer out = request(OpCode.OP_QUERY, 4 + name.length + 1 + 8 + query.length);
        out.putInt(0).put(name).put((byte) 0).putInt(0).putInt(-1).put(query);
        ByteBuffer r = exchange(out, OpCode.OP_REPLY, 20);
        int responseFlags = r.getInt();
        r.position(20); // past cursorID, startingFrom and numberReturned
        return new LegacyReply(responseFlags, r.hasRemaining() ? decode(r) : null);
    }

    /** A request of {@code opCode} with room for {@code bodyLength} bytes after its header, which is written. */
    private ByteBuffer request(int opCode, int bodyLength) {
        int length = HEADER_LENGTH + bodyLength;
        return ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN).putInt(length).putInt(nextRequestId++).putInt(0).putInt(opCode);
    }

    /** Sends {@code request} and reads its reply, which must be of {@code opCode} and at least {@code minBody} bytes past the header. */
    private ByteBuffer exchange(ByteBuffer request, int opCode, int minBody) throws IOException {
        try {
            return sendAndRead(request, opCode, minBody);
        } catch (IOException e) {
            throw tls.explained(e, socket); // a member's refusal may come only now, after the TLS handshake
        }
    }

    /**
     * Sends {@code request} and reads replies until its own. A reply to an earlier request, which came after its wait ran
     * out, is passed over: read as this one's, it answered the wrong question (the clean-up a probe sends after a
     * question timed out took the late answer to that question as its own).
     */
    private ByteBuffer sendAndRead(ByteBuffer request, int opCode, int minBody) throws IOException {
        OutputStream os = socket.getOutputStream();
        os.write(request.array());
        os.flush();

        int requestId = request.getInt(4);
        InputStream in = socket.getInputStream();
        while (true) {
            byte[] body = reply.readFrom(in);
            ByteBuffer h = ByteBuffer.wrap(reply.header).order(ByteOrder.LITTLE_ENDIAN);
            reply = new ReplyInProgress();
            int responseTo = h.getInt(8);
            if (responseTo > 0 && responseTo < requestId) {
                continue; // a late reply to a request whose wait ran out
            }
            if (h.getInt(0) < HEADER_LENGTH + minBody) {
                throw new IOException(notAMongoDbReply(h.array(), h.getInt(0)));
            }
            if (h.getInt(12) != opCode) {
                throw new IOException("expected an " + OpCode.name(opCode) + " reply, got opcode " + h.getInt(12));
            }
            if (responseTo != requestId) {
                throw new IOException("its reply answers request " + responseTo + ", not request " + requestId);
            }
            return ByteBuffer.wrap(body).order(ByteOrder.LITTLE_ENDIAN);
        }
    }

    /**
     * The reply being read. A wait that runs out in the middle of one keeps what was read, and the next request's read
     * goes on from there: begun again at the cut, it read the rest of that reply as a header.
     */
    private final class ReplyInProgress {
        final byte[] header = new byte[HEADER_LENGTH];
        private int headerRead;
        private byte[] body;
        private int bodyRead;

        byte[] readFrom(InputStream in) throws IOException {
            while (headerRead < HEADER_LENGTH) {
                headerRead += readSome(in, header, headerRead);
            }
            if (body == null) {
                int length = ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN).getInt(0);
                if (length < HEADER_LENGTH || length > Frames.MAX_MESSAGE_SIZE) {
                    throw new IOException(notAMongoDbReply(header, length));
                }
                body = new byte[length - HEADER_LENGTH];
            }
            while (bodyRead < body.length) {
                bodyRead += readSome(in, body, bodyRead);
            }
            return body;
        }
    }

    /** Reads what has come of {@code into} from {@code offset}, saying in words what an end of stream or a read timeout means here. */
    private int readSome(InputStream in, byte[] into, int offset) throws IOException {
        int read;
        try {
            read = in.read(into, offset, into.length - offset);
        } catch (SocketTimeoutException e) {
            throw new SocketTimeoutException("no reply within " + timeoutMillis + " ms");
        }
        if (read < 0) { // EOFException's message is null: the caller would print "(null)"
            throw new ClosedWithoutReplyException("it closed the connection without replying");
        }
        return read;
    }

    private static BsonDocument decode(ByteBuffer from) {
        try (BsonBinaryReader reader = new BsonBinaryReader(from.slice().order(ByteOrder.LITTLE_ENDIAN))) {
            return new BsonDocumentCodec().decode(reader, DecoderContext.builder().build());
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
