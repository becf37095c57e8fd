package io.blackpipe.bench;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.InetSocketAddress;
import java.nio.ByteOrder;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.bson.BsonBinaryWriter;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
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

    static final int MAX_MESSAGE = 48_000_000;

    private final EventLoopGroup group;
    private final Channel server;
    private final String host;
    private final int port;
    private final AtomicInteger connectionIds = new AtomicInteger();
    // What the connections share (ResponderConnection reads them).
    final byte[][] users;
    final byte[] bigData;
    final int[] bigOffsets;
    final ObjectId processId = new ObjectId();
    final ObjectId electionId = new ObjectId();
    final AtomicInteger requestIds = new AtomicInteger();
    final AtomicLong cursorIds = new AtomicLong(ThreadLocalRandom.current().nextLong(1L << 40, 1L << 50));
    final Map<Long, Cursor> cursors = new ConcurrentHashMap<>();
    final LongAdder requests = new LongAdder();
    final AtomicInteger open = new AtomicInteger();

    /** An open cursor on the large collection: the next document it returns. */
    static final class Cursor {
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
                                new ResponderConnection(WireResponder.this, connectionIds.incrementAndGet()));
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

    static byte[] encode(BsonDocument document) {
        BasicOutputBuffer out = new BasicOutputBuffer(256);
        try (BsonBinaryWriter writer = new BsonBinaryWriter(out)) {
            new BsonDocumentCodec().encode(writer, document, EncoderContext.builder().build());
        }
        return out.toByteArray();
    }
}
