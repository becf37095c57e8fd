package io.blackpipe.pipe;

import io.blackpipe.topology.MemberAddress;
import io.blackpipe.wire.FrameDecoder;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.socket.SocketChannel;

/**
 * What a member's listener gives each client connection it accepts: a place among the proxy's open connections (so
 * that closing the proxy closes it), admission under --max-connections, then, from the socket in: the slow link (which
 * delays TLS records too), TLS, the framing and the connection that pairs it with one to the member.
 */
final class ClientPipeline extends ChannelInitializer<SocketChannel> {
    private final ChannelGroup openConnections;
    /** Null: unlimited. */
    private final ConnectionLimit connectionLimit;
    /** Null: plaintext. */
    private final TlsListener listenerTls;
    private final PipeContext context;
    private final MemberAddress upstream;
    /** Set before the listener binds, so before any connection comes. */
    private volatile MemberListener listener;

    ClientPipeline(ChannelGroup openConnections, ConnectionLimit connectionLimit, TlsListener listenerTls, PipeContext context,
                   MemberAddress upstream) {
        this.openConnections = openConnections;
        this.connectionLimit = connectionLimit;
        this.listenerTls = listenerTls;
        this.context = context;
        this.upstream = upstream;
    }

    ServerBootstrap bootstrap(EventLoopGroup acceptors, EventLoopGroup workers) {
        return new ServerBootstrap()
                .group(acceptors, workers) // the channels' family is the bind host's (see ListeningSockets, ProxyServer)
                .option(ChannelOption.SO_BACKLOG, 1024)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.ALLOCATOR, ProxyServer.ALLOCATOR)
                .childOption(ChannelOption.AUTO_READ, false) // until the upstream connection is up
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, ProxyServer.WATER_MARK)
                .handler(new AcceptFailures(context.log()))
                .childHandler(this);
    }

    /** The listener whose connections these are: its record is complete only once its port is known. */
    void servedBy(MemberListener listener) {
        this.listener = listener;
    }

    @Override
    protected void initChannel(SocketChannel ch) {
        openConnections.add(ch); // closes it when the proxy is closing: it gets no handlers then
        if (!ch.isOpen() || connectionLimit != null && !connectionLimit.admit(ch, upstream, context.meters().forMember(upstream.toString()))) {
            return; // closed: the proxy is closing, or over --max-connections
        }
        ClientLink link = new ClientLink(listener);
        ch.pipeline().addLast(link); // next to the socket: it delays TLS records too
        if (listenerTls != null) {
            listenerTls.addTo(ch, listener);
        }
        ch.pipeline().addLast(FrameDecoder.forRequests(), new ClientConnection(listener, link, context));
    }
}
