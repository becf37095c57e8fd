package io.blackpipe.bench;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.channel.uring.IoUringServerSocketChannel;
import io.netty.channel.uring.IoUringSocketChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.buffer.Unpooled;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * A diagnostic target, not one of issue 7's: the least a Netty proxy can do (bytes relayed, nothing
 * parsed, one upstream connection per client on the same event loop, a flush per read), in the
 * harness JVM as blackpipe is. Against it, blackpipe's own logic shows apart from what the
 * architecture (JVM, Netty, the transport) costs; "epoll" shows what Netty's native transport
 * would change against NIO, which blackpipe uses.
 */
final class NettyRelay implements AutoCloseable {
    private final EventLoopGroup group;
    private final Channel server;
    private final String transport;

    private NettyRelay(String transport, String upstreamHost, int upstreamPort) throws InterruptedException {
        this.transport = transport;
        IoHandlerFactory io;
        Class<? extends ServerChannel> serverChannel;
        Class<? extends Channel> clientChannel;
        switch (transport) {
            case "epoll" -> {
                if (!Epoll.isAvailable()) {
                    throw new IllegalStateException("Netty's native epoll transport is not available here: " + Epoll.unavailabilityCause());
                }
                io = EpollIoHandler.newFactory();
                serverChannel = EpollServerSocketChannel.class;
                clientChannel = EpollSocketChannel.class;
            }
            case "io_uring" -> {
                if (!IoUring.isAvailable()) {
                    throw new IllegalStateException("Netty's io_uring transport is not available here: " + IoUring.unavailabilityCause());
                }
                io = IoUringIoHandler.newFactory();
                serverChannel = IoUringServerSocketChannel.class;
                clientChannel = IoUringSocketChannel.class;
            }
            default -> {
                io = NioIoHandler.newFactory();
                serverChannel = NioServerSocketChannel.class;
                clientChannel = NioSocketChannel.class;
            }
        }
        this.group = new MultiThreadIoEventLoopGroup(io);
        this.server = new ServerBootstrap()
                .group(group)
                .channel(serverChannel)
                .option(ChannelOption.SO_BACKLOG, 1024)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.AUTO_READ, false)
                .childHandler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel client) {
                        client.pipeline().addLast(new Relay(clientChannel, upstreamHost, upstreamPort));
                    }
                })
                .bind("127.0.0.1", 0).sync().channel();
    }

    static NettyRelay start(String transport, String upstreamHost, int upstreamPort) {
        try {
            return new NettyRelay(transport, upstreamHost, upstreamPort);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    int port() {
        return ((InetSocketAddress) server.localAddress()).getPort();
    }

    String transport() {
        return transport;
    }

    /** The client side: opens the upstream connection on its own event loop, then relays both ways. */
    private static final class Relay extends ChannelInboundHandlerAdapter {
        private final Class<? extends Channel> channelClass;
        private final String host;
        private final int port;
        private Channel upstream;

        Relay(Class<? extends Channel> channelClass, String host, int port) {
            this.channelClass = channelClass;
            this.host = host;
            this.port = port;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            Channel client = ctx.channel();
            upstream = new Bootstrap().group(client.eventLoop()).channel(channelClass)
                    .option(ChannelOption.TCP_NODELAY, true)
                    .handler(new Back(client))
                    .connect(host, port)
                    .addListener((ChannelFutureListener) f -> {
                        if (f.isSuccess()) {
                            client.config().setAutoRead(true);
                        } else {
                            client.close();
                        }
                    }).channel();
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            upstream.write(msg, upstream.voidPromise());
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            upstream.flush();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            closeOnFlush(upstream);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }

    private static final class Back extends ChannelInboundHandlerAdapter {
        private final Channel client;

        Back(Channel client) {
            this.client = client;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            client.write(msg, client.voidPromise());
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            client.flush();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            closeOnFlush(client);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }

    private static void closeOnFlush(Channel channel) {
        if (channel != null && channel.isActive()) {
            channel.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
        }
    }

    @Override
    public void close() {
        server.close().syncUninterruptibly();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
