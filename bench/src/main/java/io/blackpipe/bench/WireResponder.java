package io.blackpipe.bench;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.ScheduledFuture;
import java.net.InetSocketAddress;
import java.nio.ByteOrder;
import java.util.Date;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.bson.BsonArray;
import org.bson.BsonBinaryWriter;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.codecs.EncoderContext;
import org.bson.io.BasicOutputBuffer;
import org.bson.types.ObjectId;

/**
 * A minimal in-process MongoDB wire responder: the fast upstream of the benchmark, so that what
 * the proxy costs is not hidden behind what a real server costs. It presents itself as a
 * single-node replica set (so blackpipe rewrites its hellos as for any replica set) and answers
 * exactly what the Java driver needs for the workloads:
 *
 * <ul>
 *   <li>the handshake (OP_QUERY isMaster answered with OP_REPLY; OP_MSG hello), including awaitable
 *       and streamed (exhaustAllowed, moreToCome) hellos of the driver's server monitor;
 *   <li>ping, buildInfo, endSessions;
 *   <li>insert: acknowledged {n, ok}, nothing stored;
 *   <li>find by _id on any collection but the large one: a fixed small document from a tiny map;
 *   <li>find and getMore on {@value #BIG} (generated documents, cursor ids), killCursors.
 * </ul>
 *
 * Replies are written straight into pooled buffers and flushed once per read, so it stays cheap.
 */
public final class WireResponder implements AutoCloseable {
    public static final String SET_NAME = "bench-rs";
    public static final String BIG = "big";
    public static final int MAX_WIRE_VERSION = 21;

    private static final int OP_REPLY = 1;
    private static final int OP_QUERY = 2004;
    private static final int OP_MSG = 2013;
    private static final int FLAG_CHECKSUM = 1;
    private static final int FLAG_MORE_TO_COME = 1 << 1;
    private static final int FLAG_EXHAUST_ALLOWED = 1 << 16;
    private static final int MAX_MESSAGE = 48_000_000;
    private static final Set<String> HELLOS = Set.of("hello", "isMaster", "ismaster");

    private final EventLoopGroup group;
    private final Channel server;
    private final String host;
    private final int port;
    private final byte[][] users;
    private final byte[] bigData;
    private final int[] bigOffsets;
    private final ObjectId processId = new ObjectId();
    private final ObjectId electionId = new ObjectId();
    private final AtomicInteger requestIds = new AtomicInteger();
    private final AtomicInteger connectionIds = new AtomicInteger();
    private final AtomicLong cursorIds = new AtomicLong(ThreadLocalRandom.current().nextLong(1L << 40, 1L << 50));
    private final Map<Long, Cursor> cursors = new ConcurrentHashMap<>();
    private final LongAdder requests = new LongAdder();
    private final AtomicInteger open = new AtomicInteger();

    private static final class Cursor {
        final String ns;
        int next;

        Cursor(String ns, int next) {
            this.ns = ns;
            this.next = next;
        }
    }

    private WireResponder(String host, int port, int threads, int userDocs, int bigDocs) throws InterruptedException {
        this.host = host;
        this.users = new byte[userDocs][];
        for (int i = 0; i < userDocs; i++) {
            users[i] = encode(new BsonDocument("_id", new BsonInt32(i)).append("name", new BsonString("user-" + i))
                    .append("email", new BsonString("user-" + i + "@example.com"))
                    .append("score", new BsonInt32(i * 7)).append("active", BsonBoolean.TRUE));
        }
        BasicOutputBuffer big = new BasicOutputBuffer(bigDocs * 40);
        this.bigOffsets = new int[bigDocs + 1];
        for (int i = 0; i < bigDocs; i++) {
            bigOffsets[i] = big.getPosition();
            big.writeBytes(encode(new BsonDocument("_id", new BsonInt32(i)).append("v", new BsonString("value-" + i))
                    .append("n", new BsonInt32(i))));
        }
        bigOffsets[bigDocs] = big.getPosition();
        this.bigData = big.toByteArray();
        // Named "bench-..." so the CPU meter does not count the responder as the proxy's.
        this.group = new MultiThreadIoEventLoopGroup(threads, new DefaultThreadFactory("bench-responder", true),
                NioIoHandler.newFactory());
        this.server = new ServerBootstrap()
                .group(group)
                .channel(NioServerSocketChannel.class)
                .option(ChannelOption.SO_BACKLOG, 4096)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(
                                new LengthFieldBasedFrameDecoder(ByteOrder.LITTLE_ENDIAN, MAX_MESSAGE, 0, 4, -4, 0, true),
                                new Connection(connectionIds.incrementAndGet()));
                    }
                })
                .bind(host, port).sync().channel();
        this.port = ((InetSocketAddress) server.localAddress()).getPort();
    }

    /**
     * @param port     0 for a free port
     * @param threads  event loop threads
     * @param userDocs documents findOne can find (_id 0 .. userDocs-1)
     * @param bigDocs  documents in the large collection {@value #BIG}
     */
    public static WireResponder start(String host, int port, int threads, int userDocs, int bigDocs) {
        try {
            return new WireResponder(host, port, threads, userDocs, bigDocs);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while binding the wire responder", e);
        }
    }

    public int port() {
        return port;
    }

    public String address() {
        return host + ":" + port;
    }

    /** The replica set connection string (hellos name this address as the one member). */
    public String uri() {
        return "mongodb://" + address() + "/?replicaSet=" + SET_NAME;
    }

    public String description() {
        return "in-process wire responder (Netty, single-node replica set " + SET_NAME + " at " + address()
                + ", " + users.length + " findOne docs, " + (bigOffsets.length - 1) + " docs in '" + BIG + "')";
    }

    public long requests() {
        return requests.sum();
    }

    public int openConnections() {
        return open.get();
    }

    public int bigDocs() {
        return bigOffsets.length - 1;
    }

    public int userDocs() {
        return users.length;
    }

    @Override
    public void close() {
        server.close().syncUninterruptibly();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    private static byte[] encode(BsonDocument document) {
        BasicOutputBuffer out = new BasicOutputBuffer(256);
        try (BsonBinaryWriter writer = new BsonBinaryWriter(out)) {
            new BsonDocumentCodec().encode(writer, document, EncoderContext.builder().build());
        }
        return out.toByteArray();
    }

    /** The fields of a command the responder looks at. */
    private static final class Command implements Bson.Visitor {
        private final ByteBuf in;
        String name = "";
        String db = "";
        String collection = "";
        long cursorId;
        int batchSize = -1;
        boolean singleBatch;
        boolean hasFilterId;
        long filterId;
        int documents;
        long[] killCursors = new long[0];
        boolean hasTopologyVersion;
        long maxAwaitTimeMs = -1;
        boolean helloOk;

        Command(ByteBuf in, int body) {
            this.in = in;
            Bson.forEach(in, body, this);
        }

        @Override
        public void element(byte type, String key, int at) {
            if (name.isEmpty()) {
                name = key;
                if (type == Bson.STRING) {
                    collection = Bson.string(in, at);
                } else if (Bson.isNumber(type)) {
                    cursorId = Bson.number(in, type, at);
                }
                return;
            }
            switch (key) {
                case "$db" -> db = Bson.string(in, at);
                case "collection" -> collection = Bson.string(in, at);
                case "batchSize" -> batchSize = (int) Bson.number(in, type, at);
                case "singleBatch" -> singleBatch = in.getByte(at) != 0;
                case "documents" -> documents += type == Bson.ARRAY ? Bson.count(in, at) : 0;
                case "topologyVersion" -> hasTopologyVersion = true;
                case "maxAwaitTimeMS" -> maxAwaitTimeMs = Bson.number(in, type, at);
                case "helloOk" -> helloOk = type == Bson.BOOLEAN && in.getByte(at) != 0;
                case "filter" -> {
                    if (type == Bson.DOCUMENT) {
                        Bson.forEach(in, at, (t, k, v) -> {
                            if (k.equals("_id") && Bson.isNumber(t)) {
                                hasFilterId = true;
                                filterId = Bson.number(in, t, v);
                            }
                        });
                    }
                }
                case "cursors" -> {
                    if (type == Bson.ARRAY) {
                        long[] ids = new long[Bson.count(in, at)];
                        int[] i = {0};
                        Bson.forEach(in, at, (t, k, v) -> ids[i[0]++] = Bson.isNumber(t) ? Bson.number(in, t, v) : 0);
                        killCursors = ids;
                    }
                }
                default -> {
                }
            }
        }
    }

    private final class Connection extends ChannelInboundHandlerAdapter {
        private final int connectionId;
        private ScheduledFuture<?> pendingHello;

        Connection(int connectionId) {
            this.connectionId = connectionId;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            open.incrementAndGet();
            ctx.fireChannelActive();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            open.decrementAndGet();
            if (pendingHello != null) {
                pendingHello.cancel(false);
            }
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf frame = (ByteBuf) msg;
            try {
                requests.increment();
                switch (frame.getIntLE(12)) {
                    case OP_MSG -> onMsg(ctx, frame);
                    case OP_QUERY -> onQuery(ctx, frame);
                    default -> ctx.close(); // mongod closes on opcodes it does not serve
                }
            } finally {
                frame.release();
            }
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ctx.flush();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }

        private void onQuery(ChannelHandlerContext ctx, ByteBuf frame) {
            int requestId = frame.getIntLE(4);
            String ns = Bson.cString(frame, 20);
            int doc = Bson.skipCString(frame, 20) + 8;
            int[] wrapped = {-1};
            Bson.forEach(frame, doc, (t, k, v) -> {
                if (wrapped[0] < 0 && k.equals("$query") && t == Bson.DOCUMENT) {
                    wrapped[0] = v;
                }
            });
            Command command = new Command(frame, wrapped[0] >= 0 ? wrapped[0] : doc);
            byte[] body;
            if (ns.endsWith(".$cmd") && HELLOS.contains(command.name)) {
                body = encode(hello(command));
            } else {
                body = encode(error(352, "UnsupportedOpQueryCommand", "Unsupported OP_QUERY command: " + command.name));
            }
            ByteBuf out = ctx.alloc().ioBuffer(36 + body.length);
            out.writeIntLE(36 + body.length).writeIntLE(requestIds.incrementAndGet()).writeIntLE(requestId).writeIntLE(OP_REPLY);
            out.writeIntLE(8).writeLongLE(0).writeIntLE(0).writeIntLE(1).writeBytes(body); // AwaitCapable, one document
            ctx.write(out, ctx.voidPromise());
        }

        private void onMsg(ChannelHandlerContext ctx, ByteBuf frame) {
            int requestId = frame.getIntLE(4);
            int flags = frame.getIntLE(16);
            int end = frame.getIntLE(0) - ((flags & FLAG_CHECKSUM) != 0 ? 4 : 0);
            int at = 20;
            int body = -1;
            int sequenced = 0;
            while (at < end) {
                byte kind = frame.getByte(at++);
                if (kind == 0) {
                    body = at;
                    at += frame.getIntLE(at);
                } else if (kind == 1) {
                    int sectionEnd = at + frame.getIntLE(at);
                    int doc = Bson.skipCString(frame, at + 4);
                    while (doc < sectionEnd) {
                        sequenced++;
                        doc += frame.getIntLE(doc);
                    }
                    at = sectionEnd;
                } else {
                    ctx.close();
                    return;
                }
            }
            if (body < 0) {
                ctx.close();
                return;
            }
            Command command = new Command(frame, body);
            command.documents += sequenced;
            if ((flags & FLAG_MORE_TO_COME) != 0) {
                return; // w:0: nothing is answered
            }
            switch (command.name) {
                case "hello", "isMaster", "ismaster" -> onHello(ctx, requestId, flags, command);
                case "find" -> onFind(ctx, requestId, command);
                case "getMore" -> onGetMore(ctx, requestId, command);
                case "insert" -> {
                    ByteBuf out = beginMsg(ctx, requestId, 0, 64);
                    int doc = Bson.begin(out);
                    Bson.int32(out, "n", command.documents);
                    Bson.dbl(out, "ok", 1.0);
                    Bson.end(out, doc);
                    send(ctx, out);
                }
                case "killCursors" -> {
                    BsonArray killed = new BsonArray();
                    BsonArray notFound = new BsonArray();
                    for (long id : command.killCursors) {
                        (cursors.remove(id) != null ? killed : notFound).add(new BsonInt64(id));
                    }
                    sendDocument(ctx, requestId, 0, new BsonDocument("cursorsKilled", killed).append("cursorsNotFound", notFound)
                            .append("cursorsAlive", new BsonArray()).append("cursorsUnknown", new BsonArray())
                            .append("ok", new BsonDouble(1.0)));
                }
                case "buildInfo", "buildinfo" -> sendDocument(ctx, requestId, 0, new BsonDocument("version", new BsonString("7.0.0"))
                        .append("versionArray", new BsonArray(java.util.List.of(new BsonInt32(7), new BsonInt32(0),
                                new BsonInt32(0), new BsonInt32(0))))
                        .append("maxBsonObjectSize", new BsonInt32(16 * 1024 * 1024)).append("ok", new BsonDouble(1.0)));
                case "ping", "endSessions", "drop", "createIndexes", "delete" -> sendOk(ctx, requestId);
                default -> sendDocument(ctx, requestId, 0,
                        error(59, "CommandNotFound", "no such command: '" + command.name + "' (blackpipe bench responder)"));
            }
        }

        private void onHello(ChannelHandlerContext ctx, int requestId, int flags, Command command) {
            if (!command.hasTopologyVersion || command.maxAwaitTimeMs < 0) {
                sendDocument(ctx, requestId, 0, hello(command));
                return;
            }
            // Awaitable hello of a server monitor: the topology never changes here, so the answer
            // comes after maxAwaitTimeMS; with exhaustAllowed it keeps coming (moreToCome), each
            // reply answering the previous one, as mongod streams it.
            boolean streaming = (flags & FLAG_EXHAUST_ALLOWED) != 0;
            long wait = Math.max(command.maxAwaitTimeMs, 1);
            int[] responseTo = {requestId};
            Runnable[] next = new Runnable[1];
            next[0] = () -> {
                if (!ctx.channel().isActive()) {
                    return;
                }
                int sent = sendDocument(ctx, responseTo[0], streaming ? FLAG_MORE_TO_COME : 0, hello(command));
                ctx.flush();
                if (streaming) {
                    responseTo[0] = sent;
                    pendingHello = ctx.executor().schedule(next[0], wait, TimeUnit.MILLISECONDS);
                } else {
                    pendingHello = null;
                }
            };
            pendingHello = ctx.executor().schedule(next[0], wait, TimeUnit.MILLISECONDS);
        }

        private void onFind(ChannelHandlerContext ctx, int requestId, Command command) {
            String ns = command.db + "." + command.collection;
            if (command.collection.equals(BIG)) {
                int batch = command.batchSize < 0 ? 101 : command.batchSize == 0 ? 0 : command.batchSize;
                int to = Math.min(batch, bigDocs());
                long id = 0;
                if (to < bigDocs() && !command.singleBatch) {
                    id = cursorIds.incrementAndGet();
                    cursors.put(id, new Cursor(ns, to));
                }
                sendBatch(ctx, requestId, "firstBatch", id, ns, 0, to);
                return;
            }
            ByteBuf out = beginMsg(ctx, requestId, 0, 160);
            int doc = Bson.begin(out);
            int cursor = Bson.beginDocument(out, "cursor");
            int batch = Bson.beginArray(out, "firstBatch");
            if (command.hasFilterId && command.filterId >= 0 && command.filterId < users.length) {
                Bson.indexKey(out, Bson.DOCUMENT, 0);
                out.writeBytes(users[(int) command.filterId]);
            }
            Bson.end(out, batch);
            Bson.int64(out, "id", 0);
            Bson.string(out, "ns", ns);
            Bson.end(out, cursor);
            Bson.dbl(out, "ok", 1.0);
            Bson.end(out, doc);
            send(ctx, out);
        }

        private void onGetMore(ChannelHandlerContext ctx, int requestId, Command command) {
            Cursor cursor = cursors.get(command.cursorId);
            if (cursor == null) {
                sendDocument(ctx, requestId, 0, error(43, "CursorNotFound", "cursor id " + command.cursorId + " not found"));
                return;
            }
            int from;
            int to;
            synchronized (cursor) {
                from = cursor.next;
                to = command.batchSize > 0 ? Math.min(from + command.batchSize, bigDocs()) : bigDocs();
                cursor.next = to;
            }
            long id = command.cursorId;
            if (to >= bigDocs()) {
                cursors.remove(id);
                id = 0;
            }
            sendBatch(ctx, requestId, "nextBatch", id, cursor.ns, from, to);
        }

        private void sendBatch(ChannelHandlerContext ctx, int requestId, String field, long id, String ns, int from, int to) {
            ByteBuf out = beginMsg(ctx, requestId, 0, 128 + bigOffsets[to] - bigOffsets[from] + (to - from) * 6);
            int doc = Bson.begin(out);
            int cursor = Bson.beginDocument(out, "cursor");
            int batch = Bson.beginArray(out, field);
            for (int i = from; i < to; i++) {
                Bson.indexKey(out, Bson.DOCUMENT, i - from);
                out.writeBytes(bigData, bigOffsets[i], bigOffsets[i + 1] - bigOffsets[i]);
            }
            Bson.end(out, batch);
            Bson.int64(out, "id", id);
            Bson.string(out, "ns", ns);
            Bson.end(out, cursor);
            Bson.dbl(out, "ok", 1.0);
            Bson.end(out, doc);
            send(ctx, out);
        }

        private void sendOk(ChannelHandlerContext ctx, int requestId) {
            ByteBuf out = beginMsg(ctx, requestId, 0, 48);
            int doc = Bson.begin(out);
            Bson.dbl(out, "ok", 1.0);
            Bson.end(out, doc);
            send(ctx, out);
        }

        /** Sends a document built the slow way (handshakes, rare commands); returns the reply's requestId. */
        private int sendDocument(ChannelHandlerContext ctx, int responseTo, int flags, BsonDocument document) {
            byte[] body = encode(document);
            ByteBuf out = beginMsg(ctx, responseTo, flags, 21 + body.length);
            out.writeBytes(body);
            int id = out.getIntLE(4);
            send(ctx, out);
            return id;
        }

        private ByteBuf beginMsg(ChannelHandlerContext ctx, int responseTo, int flags, int sizeHint) {
            ByteBuf out = ctx.alloc().ioBuffer(sizeHint);
            out.writeIntLE(0).writeIntLE(requestIds.incrementAndGet()).writeIntLE(responseTo).writeIntLE(OP_MSG);
            out.writeIntLE(flags).writeByte(0);
            return out;
        }

        private void send(ChannelHandlerContext ctx, ByteBuf out) {
            out.setIntLE(0, out.writerIndex());
            ctx.write(out, ctx.voidPromise()); // flushed once per read (channelReadComplete)
        }

        private BsonDocument hello(Command command) {
            BsonDocument r = new BsonDocument();
            if (command.helloOk) {
                r.append("helloOk", BsonBoolean.TRUE);
            }
            r.append("topologyVersion", new BsonDocument("processId", new BsonObjectId(processId)).append("counter", new BsonInt64(0)));
            r.append(command.name.equals("hello") ? "isWritablePrimary" : "ismaster", BsonBoolean.TRUE);
            r.append("secondary", BsonBoolean.FALSE);
            r.append("setName", new BsonString(SET_NAME));
            r.append("setVersion", new BsonInt32(1));
            r.append("hosts", new BsonArray(java.util.List.of(new BsonString(address()))));
            r.append("primary", new BsonString(address()));
            r.append("me", new BsonString(address()));
            r.append("electionId", new BsonObjectId(electionId));
            r.append("maxBsonObjectSize", new BsonInt32(16 * 1024 * 1024));
            r.append("maxMessageSizeBytes", new BsonInt32(MAX_MESSAGE));
            r.append("maxWriteBatchSize", new BsonInt32(100_000));
            r.append("localTime", new BsonDateTime(new Date().getTime()));
            r.append("logicalSessionTimeoutMinutes", new BsonInt32(30));
            r.append("connectionId", new BsonInt32(connectionId));
            r.append("minWireVersion", new BsonInt32(0));
            r.append("maxWireVersion", new BsonInt32(MAX_WIRE_VERSION));
            r.append("readOnly", BsonBoolean.FALSE);
            r.append("ok", new BsonDouble(1.0));
            return r;
        }
    }

    private static BsonDocument error(int code, String codeName, String message) {
        return new BsonDocument("ok", new BsonDouble(0.0)).append("errmsg", new BsonString(message))
                .append("code", new BsonInt32(code)).append("codeName", new BsonString(codeName));
    }
}
