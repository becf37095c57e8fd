package io.blackpipe.pipe;

import io.blackpipe.fault.RuleParser;
import io.blackpipe.fault.RuleSet;
import io.blackpipe.observe.CommandObserver;
import io.blackpipe.observe.ConnectionMeters;
import io.blackpipe.observe.History;
import io.blackpipe.observe.RetryTracker;
import io.blackpipe.topology.Discovery;
import io.blackpipe.topology.HelloRewriter;
import io.blackpipe.topology.Member;
import io.blackpipe.topology.MemberAddress;
import io.blackpipe.topology.MemberMap;
import io.blackpipe.topology.MemberStates;
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
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/**
 * A running proxy: one listener per upstream member, each accepted connection paired with its
 * own upstream connection. Members that appear later (in hello replies) get listeners on the fly.
 */
public final class ProxyServer implements AutoCloseable {
    /** Bounds what one side may queue for a slow peer before reading from the other side pauses. */
    static final WriteBufferWaterMark WATER_MARK = new WriteBufferWaterMark(256 * 1024, 1024 * 1024);

    private final ProxyConfig config;
    private final EventLoopGroup acceptors = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final EventLoopGroup workers = new MultiThreadIoEventLoopGroup(NioIoHandler.newFactory());
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final ProxyLog log = new ProxyLog();
    private final Map<MemberAddress, Channel> listeners = new ConcurrentHashMap<>();
    private final Discovery.Deployment deployment;
    private final MemberMap members;
    private final PipeContext context;
    private final History history;
    private final RuleSet rules;
    private final RuleParser ruleParser;

    /** Sessions the retry tracker remembers at most, and how long an idle one is kept (the server's session timeout). */
    private static final int SESSIONS_TRACKED = 100_000;
    private static final long SESSION_IDLE_NANOS = TimeUnit.MINUTES.toNanos(30);

    private ProxyServer(ProxyConfig config, Discovery.Deployment deployment) {
        this.config = config;
        this.deployment = deployment;
        this.members = new MemberMap(config.effectiveAdvertiseHost(), config.port(), config.memberPorts(),
                deployment.dialAliases(), this::listen);
        HelloRewriter rewriter = new HelloRewriter(members, deployment.isReplicaSet(), log::warn);
        this.history = openHistory(config.historyFile());
        this.rules = new RuleSet();
        this.ruleParser = new RuleParser(config.seed());
        CommandObserver observer = new CommandObserver(registry, new RetryTracker(SESSIONS_TRACKED, SESSION_IDLE_NANOS), history);
        this.context = new PipeContext(new ConnectionMeters.Registry(registry), observer, rules, ruleParser,
                config.forwardFailPoints(), rewriter, new MemberStates(), log, config.connectTimeoutMillis(), new AtomicInteger());
    }

    /** Discovers the deployment and opens a listener for each member; fails if any cannot be opened. */
    public static ProxyServer start(ProxyConfig config) {
        ProxyServer server = null;
        try {
            Discovery.Deployment deployment = Discovery.discover(config.upstream(), config.connectTimeoutMillis());
            server = new ProxyServer(config, deployment);
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

    private static History openHistory(Path file) {
        try {
            return file == null ? History.inMemory(10_000) : new History(10_000, file);
        } catch (IOException e) {
            throw new IllegalStateException("cannot open the history file " + file + ": " + e.getMessage(), e);
        }
    }

    /** The active fault rules; changes apply to the next command. */
    public RuleSet rules() {
        return rules;
    }

    public RuleParser ruleParser() {
        return ruleParser;
    }

    public History history() {
        return history;
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
        history.close();
        registry.close();
    }
}
