package io.blackpipe.pipe;

import io.blackpipe.observe.ConnectionMeters;
import io.blackpipe.topology.HelloExchange;
import io.blackpipe.topology.Member;
import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.FrameDecoder;
import io.blackpipe.wire.Header;
import io.blackpipe.wire.MalformedMessageException;
import io.blackpipe.wire.OpCode;
import io.blackpipe.wire.OpMsg;
import io.blackpipe.wire.OpQuery;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;

/**
 * The client side of one client<->upstream pair. It opens its own upstream connection (1:1, on
 * the same event loop, so the pair needs no locks), reads requests only once that connection
 * exists, and forwards every request as received unless the hello handshake must be steered.
 */
final class ClientConnection extends ChannelInboundHandlerAdapter {
    private final Member member;
    private final PipeContext context;
    private final ConnectionMeters meters;
    private final HelloExchange hellos;
    private Channel client;
    private Channel upstream;

    ClientConnection(Member member, PipeContext context) {
        this.member = member;
        this.context = context;
        this.meters = context.meters().forMember(member.upstream().toString());
        this.hellos = new HelloExchange(context.rewriter());
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        client = ctx.channel();
        meters.opened();
        Bootstrap bootstrap = new Bootstrap()
                .group(client.eventLoop())
                .channel(NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, context.connectTimeoutMillis())
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new FrameDecoder(), new UpstreamConnection(ClientConnection.this));
                    }
                });
        ChannelFuture connect = bootstrap.connect(member.dial().host(), member.dial().port());
        upstream = connect.channel();
        connect.addListener(f -> {
            if (f.isSuccess()) {
                client.config().setAutoRead(true);
            } else {
                // The driver must see what a down member looks like: the connection just closes.
                context.log().info("upstream " + member.upstream() + " unreachable for client "
                        + client.remoteAddress() + ": " + f.cause().getMessage());
                client.close();
            }
        });
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf frame = (ByteBuf) msg;
        meters.fromClient(frame.readableBytes());
        ByteBuf outgoing;
        try {
            outgoing = inspect(frame);
        } catch (RuntimeException e) {
            frame.release();
            throw e;
        }
        upstream.write(outgoing, upstream.voidPromise());
        if (!upstream.isWritable()) {
            client.config().setAutoRead(false); // resumed by UpstreamConnection when it drains
        }
    }

    private ByteBuf inspect(ByteBuf frame) {
        switch (Header.opCode(frame)) {
            case OpCode.OP_MSG: {
                OpMsg msg = OpMsg.parse(frame);
                return hellos.onRequest(client.alloc(), frame, CommandFacts.ofOpMsg(frame, msg), msg, null);
            }
            case OpCode.OP_QUERY: {
                OpQuery query = OpQuery.parse(frame);
                return hellos.onRequest(client.alloc(), frame, CommandFacts.ofOpQuery(frame, query), null, query);
            }
            case OpCode.OP_COMPRESSED:
                return frame; // never negotiated through the proxy; a client that insists is passed through as is
            default:
                throw new MalformedMessageException("clients do not send " + OpCode.name(Header.opCode(frame)));
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        upstream.flush();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (client.isWritable() && upstream.isActive()) {
            upstream.config().setAutoRead(true);
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        meters.closed();
        Channels.closeOnFlush(upstream);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
        if (event instanceof FrameDecoder.TruncatedFrame truncated) {
            context.log().info("client " + client.remoteAddress() + " closed in the middle of a message ("
                    + describeMissing(truncated) + ")");
        }
        ctx.fireUserEventTriggered(event);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        context.log().connectionFailed("client " + ctx.channel().remoteAddress() + " on member " + member.upstream(), cause);
        ctx.close();
        Channels.closeOnFlush(upstream);
    }

    static String describeMissing(FrameDecoder.TruncatedFrame truncated) {
        return truncated.missingBytes() < 0 ? "header incomplete" : truncated.missingBytes() + " bytes missing";
    }

    // --- called by UpstreamConnection, on the same event loop ---

    void onReply(ByteBuf frame) {
        meters.fromUpstream(frame.readableBytes());
        ByteBuf outgoing;
        try {
            outgoing = hellos.onReply(client.alloc(), frame);
        } catch (RuntimeException e) {
            frame.release();
            throw e;
        }
        client.write(outgoing, client.voidPromise());
        if (!client.isWritable()) {
            upstream.config().setAutoRead(false); // resumed in channelWritabilityChanged
        }
    }

    void onUpstreamReadComplete() {
        client.flush();
    }

    void onUpstreamWritable() {
        if (client.isActive()) {
            client.config().setAutoRead(true);
        }
    }

    void onUpstreamClosed() {
        Channels.closeOnFlush(client);
    }

    Member member() {
        return member;
    }

    PipeContext context() {
        return context;
    }
}
