package io.blackpipe.bench;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.Date;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonObjectId;
import org.bson.BsonString;

/**
 * One client connection of the {@link WireResponder}: frames in, the few commands the benchmark's
 * driver sends answered straight into pooled buffers, flushed once per read.
 */
final class ResponderConnection extends ChannelInboundHandlerAdapter {
    private static final int OP_REPLY = 1;
    private static final int OP_QUERY = 2004;
    private static final int OP_MSG = 2013;
    private static final int FLAG_CHECKSUM = 1;
    private static final int FLAG_MORE_TO_COME = 1 << 1;
    private static final int FLAG_EXHAUST_ALLOWED = 1 << 16;
    private static final Set<String> HELLOS = Set.of("hello", "isMaster", "ismaster");

    private final WireResponder responder;
    private final int connectionId;
    private ScheduledFuture<?> pendingHello;

    ResponderConnection(WireResponder responder, int connectionId) {
        this.responder = responder;
        this.connectionId = connectionId;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        responder.open.incrementAndGet();
        ctx.fireChannelActive();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        responder.open.decrementAndGet();
        if (pendingHello != null) {
            pendingHello.cancel(false);
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf frame = (ByteBuf) msg;
        try {
            responder.requests.increment();
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
        ResponderRequest command = new ResponderRequest(frame, wrapped[0] >= 0 ? wrapped[0] : doc);
        byte[] body;
        if (ns.endsWith(".$cmd") && HELLOS.contains(command.name)) {
            body = WireResponder.encode(hello(command));
        } else {
            body = WireResponder.encode(error(352, "UnsupportedOpQueryCommand", "Unsupported OP_QUERY command: " + command.name));
        }
        ByteBuf out = ctx.alloc().ioBuffer(36 + body.length);
        out.writeIntLE(36 + body.length).writeIntLE(responder.requestIds.incrementAndGet()).writeIntLE(requestId).writeIntLE(OP_REPLY);
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
        ResponderRequest command = new ResponderRequest(frame, body);
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
                    (responder.cursors.remove(id) != null ? killed : notFound).add(new BsonInt64(id));
                }
                sendDocument(ctx, requestId, 0, new BsonDocument("cursorsKilled", killed).append("cursorsNotFound", notFound)
                        .append("cursorsAlive", new BsonArray()).append("cursorsUnknown", new BsonArray())
                        .append("ok", new BsonDouble(1.0)));
            }
            case "buildInfo", "buildinfo" -> sendDocument(ctx, requestId, 0, new BsonDocument("version", new BsonString("7.0.0"))
                    .append("versionArray", new BsonArray(List.of(new BsonInt32(7), new BsonInt32(0),
                            new BsonInt32(0), new BsonInt32(0))))
                    .append("maxBsonObjectSize", new BsonInt32(16 * 1024 * 1024)).append("ok", new BsonDouble(1.0)));
            case "ping", "endSessions", "drop", "createIndexes", "delete" -> sendOk(ctx, requestId);
            default -> sendDocument(ctx, requestId, 0,
                    error(59, "CommandNotFound", "no such command: '" + command.name + "' (blackpipe bench responder)"));
        }
    }

    private void onHello(ChannelHandlerContext ctx, int requestId, int flags, ResponderRequest command) {
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

    private void onFind(ChannelHandlerContext ctx, int requestId, ResponderRequest command) {
        String ns = command.db + "." + command.collection;
        if (command.collection.equals(WireResponder.BIG)) {
            int batch = command.batchSize < 0 ? 101 : command.batchSize == 0 ? 0 : command.batchSize;
            int to = Math.min(batch, responder.bigDocs());
            long id = 0;
            if (to < responder.bigDocs() && !command.singleBatch) {
                id = responder.cursorIds.incrementAndGet();
                responder.cursors.put(id, new WireResponder.Cursor(ns, to));
            }
            sendBatch(ctx, requestId, "firstBatch", id, ns, 0, to);
            return;
        }
        ByteBuf out = beginMsg(ctx, requestId, 0, 160);
        int doc = Bson.begin(out);
        int cursor = Bson.beginDocument(out, "cursor");
        int batch = Bson.beginArray(out, "firstBatch");
        if (command.hasFilterId && command.filterId >= 0 && command.filterId < responder.users.length) {
            Bson.indexKey(out, Bson.DOCUMENT, 0);
            out.writeBytes(responder.users[(int) command.filterId]);
        }
        Bson.end(out, batch);
        Bson.int64(out, "id", 0);
        Bson.string(out, "ns", ns);
        Bson.end(out, cursor);
        Bson.dbl(out, "ok", 1.0);
        Bson.end(out, doc);
        send(ctx, out);
    }

    private void onGetMore(ChannelHandlerContext ctx, int requestId, ResponderRequest command) {
        WireResponder.Cursor cursor = responder.cursors.get(command.cursorId);
        if (cursor == null) {
            sendDocument(ctx, requestId, 0, error(43, "CursorNotFound", "cursor id " + command.cursorId + " not found"));
            return;
        }
        int from;
        int to;
        synchronized (cursor) {
            from = cursor.next;
            to = command.batchSize > 0 ? Math.min(from + command.batchSize, responder.bigDocs()) : responder.bigDocs();
            cursor.next = to;
        }
        long id = command.cursorId;
        if (to >= responder.bigDocs()) {
            responder.cursors.remove(id);
            id = 0;
        }
        sendBatch(ctx, requestId, "nextBatch", id, cursor.ns, from, to);
    }

    private void sendBatch(ChannelHandlerContext ctx, int requestId, String field, long id, String ns, int from, int to) {
        ByteBuf out = beginMsg(ctx, requestId, 0, 128 + responder.bigOffsets[to] - responder.bigOffsets[from] + (to - from) * 6);
        int doc = Bson.begin(out);
        int cursor = Bson.beginDocument(out, "cursor");
        int batch = Bson.beginArray(out, field);
        for (int i = from; i < to; i++) {
            Bson.indexKey(out, Bson.DOCUMENT, i - from);
            out.writeBytes(responder.bigData, responder.bigOffsets[i], responder.bigOffsets[i + 1] - responder.bigOffsets[i]);
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
        byte[] body = WireResponder.encode(document);
        ByteBuf out = beginMsg(ctx, responseTo, flags, 21 + body.length);
        out.writeBytes(body);
        int id = out.getIntLE(4);
        send(ctx, out);
        return id;
    }

    private ByteBuf beginMsg(ChannelHandlerContext ctx, int responseTo, int flags, int sizeHint) {
        ByteBuf out = ctx.alloc().ioBuffer(sizeHint);
        out.writeIntLE(0).writeIntLE(responder.requestIds.incrementAndGet()).writeIntLE(responseTo).writeIntLE(OP_MSG);
        out.writeIntLE(flags).writeByte(0);
        return out;
    }

    private void send(ChannelHandlerContext ctx, ByteBuf out) {
        out.setIntLE(0, out.writerIndex());
        ctx.write(out, ctx.voidPromise()); // flushed once per read (channelReadComplete)
    }

    private BsonDocument hello(ResponderRequest command) {
        BsonDocument r = new BsonDocument();
        if (command.helloOk) {
            r.append("helloOk", BsonBoolean.TRUE);
        }
        r.append("topologyVersion", new BsonDocument("processId", new BsonObjectId(responder.processId)).append("counter", new BsonInt64(0)));
        r.append(command.name.equals("hello") ? "isWritablePrimary" : "ismaster", BsonBoolean.TRUE);
        r.append("secondary", BsonBoolean.FALSE);
        r.append("setName", new BsonString(WireResponder.SET_NAME));
        r.append("setVersion", new BsonInt32(1));
        r.append("hosts", new BsonArray(List.of(new BsonString(responder.address()))));
        r.append("primary", new BsonString(responder.address()));
        r.append("me", new BsonString(responder.address()));
        r.append("electionId", new BsonObjectId(responder.electionId));
        r.append("maxBsonObjectSize", new BsonInt32(16 * 1024 * 1024));
        r.append("maxMessageSizeBytes", new BsonInt32(WireResponder.MAX_MESSAGE));
        r.append("maxWriteBatchSize", new BsonInt32(100_000));
        r.append("localTime", new BsonDateTime(new Date().getTime()));
        r.append("logicalSessionTimeoutMinutes", new BsonInt32(30));
        r.append("connectionId", new BsonInt32(connectionId));
        r.append("minWireVersion", new BsonInt32(0));
        r.append("maxWireVersion", new BsonInt32(WireResponder.MAX_WIRE_VERSION));
        r.append("readOnly", BsonBoolean.FALSE);
        r.append("ok", new BsonDouble(1.0));
        return r;
    }

    private static BsonDocument error(int code, String codeName, String message) {
        return new BsonDocument("ok", new BsonDouble(0.0)).append("errmsg", new BsonString(message))
                .append("code", new BsonInt32(code)).append("codeName", new BsonString(codeName));
    }
}
