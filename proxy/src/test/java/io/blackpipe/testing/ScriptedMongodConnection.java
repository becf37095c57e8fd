package io.blackpipe.testing;

import static io.blackpipe.testing.ScriptedMongodWire.FLAG_CHECKSUM_PRESENT;
import static io.blackpipe.testing.ScriptedMongodWire.FLAG_MORE_TO_COME;
import static io.blackpipe.testing.ScriptedMongodWire.OP_COMPRESSED;
import static io.blackpipe.testing.ScriptedMongodWire.OP_MSG;
import static io.blackpipe.testing.ScriptedMongodWire.OP_QUERY;
import static io.blackpipe.testing.ScriptedMongodWire.OP_REPLY;

import io.blackpipe.testing.ScriptedMongodFrame.Direction;
import io.blackpipe.testing.ScriptedMongodWire.OpMsg;
import io.blackpipe.testing.ScriptedMongodWire.OpQuery;
import io.blackpipe.testing.ScriptedMongodWire.ProtocolException;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PushbackInputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.BSONException;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;

/** One client connection of a {@link ScriptedMongod}: a thread that reads, dispatches and replies. */
final class ScriptedMongodConnection implements Runnable {
    static final Set<String> HELLO_NAMES = Set.of("hello", "isMaster", "ismaster");
    /** Commands whose replies mongod never compresses (and drivers never compress either). */
    static final Set<String> NEVER_COMPRESSED = Set.of("hello", "isMaster", "ismaster", "saslStart",
            "saslContinue", "getnonce", "authenticate", "createUser", "updateUser");
    private static final int MAX_WIRE_MESSAGE = ScriptedMongod.MAX_MESSAGE_SIZE_BYTES + 64 * 1024;
    /** OP_REPLY's responseFlags bit for a query that failed: its one document is the error. */
    private static final int QUERY_FAILURE = 2;

    private final ScriptedMongod server;
    private final Socket socket;
    private final int id;
    private final Thread thread;
    private PushbackInputStream in;
    private OutputStream out;
    private boolean pendingInput;
    private List<ScriptedMongodCompressor> negotiated; // null until a handshake listed compression
    /** This connection's authentication state; null when the server has no access control. */
    private final ScriptedScramServer.Session auth;

    ScriptedMongodConnection(ScriptedMongod server, Socket socket, int id) {
        this.server = server;
        this.socket = socket;
        this.id = id;
        this.auth = server.scram() == null ? null : server.scram().newSession();
        this.thread = new Thread(this, "scripted-mongod-conn-" + id);
        this.thread.setDaemon(true);
    }

    int id() {
        return id;
    }

    ScriptedScramServer.Session auth() {
        return auth;
    }

    /** Whether mongod --auth would run {@code name} on this connection now. */
    private boolean allowed(String name) {
        return auth == null || auth.authenticated() || ScriptedScramServer.OPEN_COMMANDS.contains(name);
    }

    void start() {
        thread.start();
    }

    void close() {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        thread.interrupt();
    }

    @Override
    public void run() {
        try {
            in = new PushbackInputStream(new BufferedInputStream(socket.getInputStream(), 64 * 1024), 1);
            out = new BufferedOutputStream(socket.getOutputStream(), 64 * 1024);
            while (!server.isClosed()) {
                if (in.available() == 0) {
                    out.flush(); // replies held back for those behind them (sendPipelinedRepliesTogether) go before a wait
                }
                byte[] raw = ScriptedMongodWire.readMessage(in, MAX_WIRE_MESSAGE);
                pendingInput = false;
                if (raw == null) {
                    break;
                }
                handle(raw);
            }
        } catch (ProtocolException e) {
            server.recordError(new ProtocolException("connection " + id + ": " + e.getMessage(), e));
        } catch (IOException e) {
            // the peer closed or reset the connection, or the server is closing: what a server sees daily
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            if (!server.isClosed()) {
                server.recordError(e);
            }
        } finally {
            close();
            server.connectionClosed(this);
        }
    }

    /**
     * The compression the hello reply announces, or null to leave the field out (the client did
     * not ask). As mongod: the intersection with the enabled compressors in the client's order; a
     * later hello on a connection that already negotiated gets the earlier answer.
     */
    List<ScriptedMongodCompressor> negotiateCompression(BsonDocument request) {
        if (!request.isArray("compression")) {
            return null;
        }
        if (negotiated != null && !negotiated.isEmpty()) {
            return negotiated;
        }
        List<ScriptedMongodCompressor> result = new ArrayList<>();
        for (BsonValue v : request.getArray("compression")) {
            if (!v.isString()) {
                continue;
            }
            ScriptedMongodCompressor c = ScriptedMongodCompressor.byName(v.asString().getValue());
            if (c != null && c != ScriptedMongodCompressor.NOOP && server.isCompressorEnabled(c) && !result.contains(c)) {
                result.add(c);
            }
        }
        negotiated = List.copyOf(result);
        return negotiated;
    }

    // ---------------------------------------------------------------- dispatch

    private void handle(byte[] raw) throws IOException, InterruptedException {
        ScriptedMongodCompressor compressor = null;
        byte[] msg = raw;
        if (ScriptedMongodWire.opCode(raw) == OP_COMPRESSED) {
            int cid = ScriptedMongodWire.compressorId(raw);
            compressor = ScriptedMongodCompressor.byId(cid);
            if (compressor == null || !server.isCompressorEnabled(compressor)) {
                recordReceived(raw, raw.length >= 20 ? ScriptedMongodWire.intLE(raw, 16) : OP_COMPRESSED, null, 0, null, null);
                throw new ProtocolException("OP_COMPRESSED with compressor id " + cid + ", which is not enabled");
            }
            try {
                msg = ScriptedMongodWire.decompress(raw, compressor);
            } catch (ProtocolException e) {
                recordReceived(raw, ScriptedMongodWire.intLE(raw, 16), compressor, 0, null, null);
                throw e;
            }
        }
        switch (ScriptedMongodWire.opCode(msg)) {
            case OP_MSG -> handleMsg(raw, msg, compressor);
            case OP_QUERY -> handleQuery(raw, msg, compressor);
            default -> {
                recordReceived(raw, ScriptedMongodWire.opCode(msg), compressor, 0, null, null);
                throw new ProtocolException("unsupported opcode " + ScriptedMongodWire.opCode(msg));
            }
        }
    }

    private void handleMsg(byte[] raw, byte[] msg, ScriptedMongodCompressor compressor)
            throws IOException, InterruptedException {
        OpMsg m;
        try {
            m = ScriptedMongodWire.parseOpMsg(msg);
        } catch (ProtocolException e) {
            recordReceived(raw, OP_MSG, compressor, msg.length >= 20 ? ScriptedMongodWire.intLE(msg, 16) : 0, null, null);
            throw e;
        } catch (BSONException unreadable) {
            // a document that frames right but does not read (an unknown element type): mongod answers that parse
            // error and keeps the connection, as it does for every error outside ConnectionFatalMessageParseError
            int flags = ScriptedMongodWire.intLE(msg, 16);
            recordReceived(raw, OP_MSG, compressor, flags, null, null);
            if ((flags & FLAG_MORE_TO_COME) == 0) { // a request sent with moreToCome gets no answer, this one neither
                new Reply(ScriptedMongodWire.requestId(msg), compressor, 0, null)
                        .send(ScriptedMongodCommands.error(22, "InvalidBSON", unreadable.getMessage()), 0);
            }
            return;
        }
        BsonDocument cmd = m.body().clone();
        for (Map.Entry<String, List<BsonDocument>> seq : m.sequences().entrySet()) {
            cmd.put(seq.getKey(), new BsonArray(new ArrayList<>(seq.getValue())));
        }
        String name = cmd.isEmpty() ? "" : cmd.getFirstKey();
        recordReceived(raw, OP_MSG, compressor, m.flags(), name, cmd);

        Reply reply = new Reply(ScriptedMongodWire.requestId(msg), compressor,
                m.checksumPresent() ? FLAG_CHECKSUM_PRESENT : 0, name);
        if (m.moreToCome() && !server.answersUnaskedRequests()) {
            // The client expects no reply (w:0). Do the work, send nothing.
            if (cmd.containsKey("$db") && !HELLO_NAMES.contains(name) && allowed(name)) {
                server.commands().run(name, cmd);
            }
            return;
        }
        if (!cmd.isString("$db")) {
            reply.send(ScriptedMongodCommands.error(40571, "Location40571",
                    "OP_MSG requests require a $db argument"), 0);
            return;
        }
        BsonDocument scripted;
        BsonDocument jongodbsRefusal = server.jongodbsRefusal(cmd);
        if (jongodbsRefusal != null) {
            server.awaitReplyDelay(name);
            reply.send(jongodbsRefusal, 0);
        } else if (HELLO_NAMES.contains(name)) {
            handleHello(m, cmd, name, reply);
        } else if (!allowed(name)) {
            BsonDocument refused = ScriptedMongodCommands.error(13, "Unauthorized", "Command " + name + " requires authentication");
            server.appendClusterTime(refused);
            reply.send(refused, 0);
        } else if ((scripted = server.takeScriptedReply(name)) != null) {
            server.awaitReplyDelay(name);
            reply.send(scripted, 0);
        } else if (auth != null && ScriptedScramServer.AUTH_COMMANDS.contains(name)) {
            BsonDocument answer = auth.run(name, cmd);
            server.appendClusterTime(answer);
            reply.send(answer, 0);
        } else if (name.equals("replSetStepDown")) {
            BsonDocument answer = server.stepDown(this);
            server.appendClusterTime(answer);
            reply.send(answer, 0);
        } else if (ScriptedMongodStatus.handles(name)) {
            BsonDocument answer = ScriptedMongodStatus.run(server, name, cmd, this);
            server.appendClusterTime(answer);
            reply.send(answer, 0);
        } else if (name.equals("getMore") && m.exhaustAllowed()) {
            exhaustGetMore(cmd, reply);
        } else {
            BsonDocument answer = server.commands().run(name, cmd);
            server.awaitReplyDelay(name);
            reply.send(answer, 0);
        }
    }

    private void handleHello(OpMsg m, BsonDocument cmd, String name, Reply reply)
            throws IOException, InterruptedException {
        boolean hasTv = cmd.containsKey("topologyVersion");
        boolean hasMax = cmd.containsKey("maxAwaitTimeMS");
        if (hasTv != hasMax) {
            reply.send(ScriptedMongodCommands.error(31368, "Location31368",
                    "A request with a 'topologyVersion' must include 'maxAwaitTimeMS'"), 0);
            return;
        }
        if (!hasTv) {
            reply.send(server.helloReply(name, cmd, this), 0);
            return;
        }
        if (!cmd.isDocument("topologyVersion") || !cmd.get("maxAwaitTimeMS").isNumber()
                || cmd.getNumber("maxAwaitTimeMS").longValue() < 0) {
            reply.send(ScriptedMongodCommands.error(14, "TypeMismatch",
                    "topologyVersion must be a document and maxAwaitTimeMS a non-negative number"), 0);
            return;
        }
        long maxAwaitMs = cmd.getNumber("maxAwaitTimeMS").longValue();
        BsonDocument known = cmd.getDocument("topologyVersion");
        boolean streaming = m.exhaustAllowed();
        while (true) {
            if (!server.awaitTopologyChange(known, maxAwaitMs, this::peerStillThere)) {
                return;
            }
            BsonDocument hello = server.helloReply(name, cmd, this);
            if (!streaming) {
                reply.send(hello, 0);
                return;
            }
            reply.send(hello, FLAG_MORE_TO_COME);
            known = hello.getDocument("topologyVersion");
        }
    }

    /** Exhaust getMore (mongod 4.2+): keep sending batches with moreToCome until the cursor is done. */
    private void exhaustGetMore(BsonDocument cmd, Reply reply) throws IOException {
        while (true) {
            BsonDocument r = server.commands().run("getMore", cmd);
            boolean more = ScriptedMongodCommands.isOk(r) && r.isDocument("cursor")
                    && r.getDocument("cursor").getNumber("id").longValue() != 0;
            reply.send(r, more ? FLAG_MORE_TO_COME : 0);
            if (!more) {
                return;
            }
        }
    }

    private void handleQuery(byte[] raw, byte[] msg, ScriptedMongodCompressor compressor) throws IOException {
        OpQuery q;
        try {
            q = ScriptedMongodWire.parseOpQuery(msg);
        } catch (ProtocolException e) {
            recordReceived(raw, OP_QUERY, compressor, 0, null, null);
            throw e;
        }
        BsonDocument cmd = q.query();
        if (cmd.isDocument("$query")) {
            cmd = cmd.getDocument("$query"); // legacy wrapping of a command with $readPreference
        }
        String name = cmd.isEmpty() ? "" : cmd.getFirstKey();
        recordReceived(raw, OP_QUERY, compressor, q.flags(), name, q.query());
        BsonDocument reply = server.jongodbsRefusal(q.query());
        if (reply != null) {
            server.appendClusterTime(reply);
        } else if (q.fullCollectionName().endsWith(".$cmd") && HELLO_NAMES.contains(name)) {
            reply = server.helloReply(name, cmd, this);
        } else if (!q.fullCollectionName().endsWith(".$cmd")) { // a legacy find: refused before it is read, as mongod 5.1+ does
            BsonDocument refused = new BsonDocument("$err", new BsonString("OP_QUERY is no longer supported. The client driver may"
                    + " require an upgrade. For more details see https://dochub.mongodb.org/core/legacy-opcode-removal"))
                    .append("code", new BsonInt32(5739101)).append("ok", new BsonDouble(0));
            byte[] plain = ScriptedMongodWire.buildOpReply(server.nextRequestId(), ScriptedMongodWire.requestId(msg), QUERY_FAILURE, 0L, refused);
            write(plain, OP_REPLY, compressor, name, QUERY_FAILURE, refused);
            return;
        } else {
            reply = ScriptedMongodCommands.error(352, "UnsupportedOpQueryCommand",
                    "Unsupported OP_QUERY command: " + name + ". The client driver may require an upgrade. "
                            + "For more details see https://dochub.mongodb.org/core/legacy-opcode-removal");
            server.appendClusterTime(reply);
        }
        int requestId = server.nextRequestId();
        byte[] plain = ScriptedMongodWire.buildOpReply(requestId, ScriptedMongodWire.requestId(msg),
                ScriptedMongodWire.REPLY_AWAIT_CAPABLE, 0L, reply);
        write(plain, OP_REPLY, compressor, name, ScriptedMongodWire.REPLY_AWAIT_CAPABLE, reply);
    }

    // ---------------------------------------------------------------- replies

    /**
     * The reply side of one request: knows what to answer (responseTo, chained for moreToCome
     * streams), whether to compress and whether to append a checksum.
     */
    private final class Reply {
        private int responseTo;
        private final ScriptedMongodCompressor compressor;
        private final int checksumFlag;
        private final String commandName;

        Reply(int responseTo, ScriptedMongodCompressor compressor, int checksumFlag, String commandName) {
            this.responseTo = responseTo;
            this.compressor = compressor;
            this.checksumFlag = checksumFlag;
            this.commandName = commandName;
        }

        void send(BsonDocument body, int flags) throws IOException {
            int requestId = server.nextRequestId();
            int allFlags = flags | checksumFlag;
            byte[] plain = ScriptedMongodWire.buildOpMsg(requestId, responseTo, allFlags, body, null);
            write(plain, OP_MSG, compressor, commandName, allFlags, body);
            responseTo = requestId; // the next reply of a moreToCome stream answers this one
        }
    }

    private void write(byte[] plain, int opCode, ScriptedMongodCompressor requestCompressor, String commandName,
                       int flags, BsonDocument body) throws IOException {
        ScriptedMongodCompressor c = requestCompressor != null && !NEVER_COMPRESSED.contains(commandName)
                ? requestCompressor : null;
        byte[] wire = c == null ? plain : ScriptedMongodWire.compress(plain, c);
        server.recordSent(new ScriptedMongodFrame(Direction.SENT, id, ScriptedMongodWire.requestId(wire),
                ScriptedMongodWire.responseTo(wire), ScriptedMongodWire.opCode(wire), opCode, c, flags, commandName,
                body, wire, System.nanoTime()));
        out.write(wire);
        if (!server.sendsPipelinedRepliesTogether() || in.available() == 0) {
            out.flush();
        }
    }

    private void recordReceived(byte[] raw, int originalOpCode, ScriptedMongodCompressor compressor, int flags,
                                String name, BsonDocument doc) {
        server.recordReceived(new ScriptedMongodFrame(Direction.RECEIVED, id, ScriptedMongodWire.requestId(raw),
                ScriptedMongodWire.responseTo(raw), ScriptedMongodWire.opCode(raw), originalOpCode, compressor, flags,
                name, doc, raw, System.nanoTime()));
    }

    /**
     * While a moreToCome stream waits, probes whether the client has gone (end of stream), so a
     * closed monitor connection ends the stream promptly. Bytes the client sends are kept for
     * the read loop.
     */
    private boolean peerStillThere() {
        if (socket.isClosed()) {
            return false;
        }
        if (pendingInput) {
            return true;
        }
        try {
            socket.setSoTimeout(1);
            int b = in.read();
            if (b < 0) {
                return false;
            }
            in.unread(b);
            pendingInput = true;
            return true;
        } catch (SocketTimeoutException e) {
            return true;
        } catch (IOException e) {
            return false;
        } finally {
            try {
                if (!socket.isClosed()) {
                    socket.setSoTimeout(0);
                }
            } catch (IOException ignored) {
                // the next read will tell
            }
        }
    }
}
