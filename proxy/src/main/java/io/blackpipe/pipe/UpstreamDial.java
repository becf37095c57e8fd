package io.blackpipe.pipe;

import io.blackpipe.topology.Member;
import io.blackpipe.wire.FrameDecoder;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;

/**
 * Dials a client connection's own upstream connection (1:1): on the client's event loop, so that the pair needs no
 * locks, with the proxy's allocator and write water mark, the connect timeout, and TLS where the upstream asks for it.
 */
final class UpstreamDial {
    private UpstreamDial() {
    }

    static ChannelFuture connect(Channel client, PipeContext context, Member member, ClientConnection connection) {
        Bootstrap bootstrap = new Bootstrap()
                .group(client.eventLoop())
                .channel(NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.ALLOCATOR, ProxyServer.ALLOCATOR)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, context.connectTimeoutMillis())
                .option(ChannelOption.WRITE_BUFFER_WATER_MARK, ProxyServer.WATER_MARK)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        if (context.upstreamTls().enabled()) {
                            ch.pipeline().addLast(context.upstreamTls().newHandler(ch.alloc(), member.dial().host(), member.dial().port()));
                        }
                        ch.pipeline().addLast(new FrameDecoder(), new UpstreamConnection(connection));
                    }
                });
        ChannelFuture connect = bootstrap.connect(member.dial().host(), member.dial().port());
        connect.addListener(f -> { // ahead of the client's own listener; its failures are told there, with the client
            if (f.isSuccess()) {
                context.log().upstreamReached(member);
            }
        });
        return connect;
    }
}
