package io.blackpipe.pipe;

import io.blackpipe.observe.ConnectionMeters;
import io.blackpipe.topology.Discovery;
import io.blackpipe.topology.HelloRewriter;
import io.blackpipe.topology.Member;
import io.blackpipe.topology.MemberAddress;
import io.blackpipe.topology.MemberMap;
import io.blackpipe.wire.FrameDecoder;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * A running proxy: one listener per upstream member, each accepted connection paired with its
 * own upstream connection. Members that appear later (in hello replies) get listeners on the fly.
 */
public final class ProxyServer implements AutoCloseable {
    /** Bounds what one side may queue for a slow peer before reading from the other side pauses. */
    private static final WriteBufferWaterMark WATER_MARK = new WriteBufferWaterMark(256 * 1024, 1024 * 1024);

    private final ProxyConfig config;
    private final EventLoopGroup acceptors = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final EventLoopGroup workers = new MultiThreadIoEventLoopGroup(NioIoHandler.newFactory());
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final ProxyLog log = new ProxyLog();
    private final Map<MemberAddress, Channel> listeners = new ConcurrentHashMap<>();
    private final Discovery.Deployment deployment;
    private final MemberMap members;
    private final PipeContext context;

    private ProxyServer(ProxyConfig config) {
        this.config = config;
        this.deployment = Discovery.discover(config.upstream(), config.connectTimeoutMillis());
        this.members = new MemberMap(config.effectiveAdvertiseHost(), config.port(), config.memberPorts(),
                deployment.dialAliases(), this::listen);
        HelloRewriter rewriter = new HelloRewriter(members, deployment.isReplicaSet(), log::warn);
        this.context = new PipeContext(new ConnectionMeters.Registry(registry), rewriter, log, config.connectTimeoutMillis());
    }

    /** Discovers the deployment and opens a listener for each member; fails if any cannot be opened. */
    public static ProxyServer start(ProxyConfig config) {
        ProxyServer server = null;
        try {
            server = new ProxyServer(config);
            for (MemberAddress member : server.deployment.members()) {
                server.members.ensure(member);
            }
            return server;
        } catch (RuntimeException e) {
            if (server != null) {
                server.close();
            }
            throw e;
        }
    }

    private int listen(MemberAddress upstream, int port) throws InterruptedException {
        Channel channel = new ServerBootstrap()
                .group(acceptors, workers)
                .channel(NioServerSocketChannel.class)
                .option(ChannelOption.SO_BACKLOG, 1024)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.AUTO_READ, false) // until the upstream connection is up
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, WATER_MARK)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new FrameDecoder(), new ClientConnection(members.byUpstream(upstream), context));
                    }
                })
                .bind(config.bindHost(), port).sync().channel();
        listeners.put(upstream, channel);
        context.meters().forMember(upstream.toString()); // so /metrics lists the member before its first connection
        int bound = ((InetSocketAddress) channel.localAddress()).getPort();
        log.info("listening on " + config.bindHost() + ":" + bound + " for member " + upstream);
        return bound;
    }

    public Discovery.Deployment deployment() {
        return deployment;
    }

    public List<Member> members() {
        return members.members();
    }

    public PrometheusMeterRegistry registry() {
        return registry;
    }

    public int openConnections(MemberAddress upstream) {
        return context.meters().openConnections(upstream.toString());
    }

    /** The connection string an application should use to go through the proxy. */
    public String connectionString() {
        String hosts = members.members().stream().map(m -> m.advertised().toString()).collect(Collectors.joining(","));
        if (deployment.isReplicaSet()) {
            return "mongodb://" + hosts + "/?replicaSet=" + deployment.setName();
        }
        return "mongodb://" + hosts + "/";
    }

    @Override
    public void close() {
        listeners.values().forEach(Channel::close);
        acceptors.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        workers.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        registry.close();
    }
}
