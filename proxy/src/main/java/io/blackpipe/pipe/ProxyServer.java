package io.blackpipe.pipe;

import io.blackpipe.fault.Bandwidth;
import io.blackpipe.fault.DeploymentFaults;
import io.blackpipe.fault.Failover;
import io.blackpipe.fault.IdleTimeout;
import io.blackpipe.fault.Latency;
import io.blackpipe.fault.Restart;
import io.blackpipe.fault.RuleParser;
import io.blackpipe.fault.ScenarioLoader;
import io.blackpipe.fault.ScenarioRunner;
import io.blackpipe.fault.RuleSet;
import io.blackpipe.observe.CommandObserver;
import io.blackpipe.observe.ConnectionMeters;
import io.blackpipe.observe.History;
import io.blackpipe.observe.RetryTracker;
import io.blackpipe.topology.Discovery;
import io.blackpipe.topology.HostNames;
import io.blackpipe.topology.HelloRewriter;
import io.blackpipe.topology.Member;
import io.blackpipe.topology.MemberAddress;
import io.blackpipe.topology.MemberMap;
import io.blackpipe.topology.MemberState;
import io.blackpipe.topology.MemberStates;
import io.blackpipe.topology.SimulatedReplicaSet;
import io.blackpipe.wire.Tls;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A running proxy: one listener per upstream member, each accepted connection paired with its
 * own upstream connection. Members that appear later (in hello replies) get listeners on the fly.
 */
public final class ProxyServer implements AutoCloseable, DeploymentFaults {
    /** Bounds what one side may queue for a slow peer before reading from the other side pauses. */
    static final WriteBufferWaterMark WATER_MARK = new WriteBufferWaterMark(256 * 1024, 1024 * 1024);
    /**
     * Netty's pooled allocator rather than 4.2's default adaptive one: a pooled buffer keeps its NIO
     * view, where an adaptive one makes a new one for every socket read and write (benchmark: about
     * 130 bytes allocated per relayed command less; see bench/RESULTS.md).
     */
    static final ByteBufAllocator ALLOCATOR = PooledByteBufAllocator.DEFAULT;

    private final ProxyConfig config;
    // daemon threads, as the driver's: a program that forgets to close the proxy still exits
    private final EventLoopGroup acceptors = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("blackpipe-accept", true), NioIoHandler.newFactory());
    private final EventLoopGroup workers = new MultiThreadIoEventLoopGroup(0, new DefaultThreadFactory("blackpipe-io", true), NioIoHandler.newFactory());
    /**
     * Every connection open on the workers, clients' and members': close() closes them itself, and one added after
     * that is closed as it comes (stayClosed). Netty's shutdown with no quiet period can end a loop busy as it began
     * without closing the loop's channels; a member connection told to close once a client's last request is
     * flushed (the member not reading, or still in its TLS handshake) then stayed open holding that request.
     */
    private final ChannelGroup openConnections = new DefaultChannelGroup("blackpipe-connections", GlobalEventExecutor.INSTANCE, true);
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final ProxyLog log = new ProxyLog(workers); // its held-back lines flushed on the loops: their shutdown cancels them
    private final Map<MemberAddress, MemberListener> listeners = new ConcurrentHashMap<>();
    private final MemberSelector selector;
    private final Discovery.Deployment deployment;
    private final MemberMap members;
    private final PipeContext context;
    private final History history;
    private final RetryTracker retryTracker;
    private final RuleSet rules;
    private final RuleParser ruleParser;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(new DefaultThreadFactory("blackpipe-scenario", true));
    private final ScenarioRunner scenarios;
    /** The listeners' TLS; null: plaintext. */
    private final TlsListener listenerTls;
    /** How members are dialled: plaintext or TLS, from the upstream URI. */
    private final Tls.Client upstreamTls;
    /** --max-connections; null: unlimited (nothing is counted). */
    private final ConnectionLimit connectionLimit;
    /** Who is primary, and the failovers that change it. */
    private final MemberRoles roles;

    /** Sessions the retry tracker remembers at most, and how long an idle one is kept (the server's session timeout). */
    private static final int SESSIONS_TRACKED = 100_000;
    private static final long SESSION_IDLE_NANOS = TimeUnit.MINUTES.toNanos(30);

    private ProxyServer(ProxyConfig config, Discovery.Deployment deployment, TlsListener listenerTls, Tls.Client upstreamTls) {
        try {
            this.config = config;
            this.deployment = deployment;
            this.listenerTls = listenerTls;
            this.upstreamTls = upstreamTls;
            this.connectionLimit = config.maxConnections() > 0 ? new ConnectionLimit(config.maxConnections(), log) : null;
            this.members = new MemberMap(config.effectiveAdvertiseHost(), config.port(), config.memberPorts(),
                    deployment.dialAliases(), this::listen);
            MemberStates states = new MemberStates();
            SimulatedReplicaSet simulation = config.simulateMembers() == 0 ? null
                    : new SimulatedReplicaSet(deployment.setName(), deployment.members(), members, states,
                            SimulatedReplicaSet.termAboveEarlierRuns());
            HelloRewriter rewriter = new HelloRewriter(members, deployment.isReplicaSet() && simulation == null, log::warn);
            this.history = History.open(10_000, config.historyFile());
            this.rules = new RuleSet();
            this.ruleParser = new RuleParser(config.seed(), this::unknownRuleMember); // asked once a rule comes, long after
            this.retryTracker = new RetryTracker(SESSIONS_TRACKED, SESSION_IDLE_NANOS);
            CommandObserver observer = new CommandObserver(registry, retryTracker, history);
            this.scenarios = new ScenarioRunner(rules, this, timer, log::info, ruleParser, this::scenarioLoader);
            FailoverEndedTransactions endedTransactions = new FailoverEndedTransactions();
            UnreplicatedWrites unreplicated = new UnreplicatedWrites();
            WriteRollback rollback = new WriteRollback(unreplicated, config.upstream().credential(), upstreamTls,
                    config.connectTimeoutMillis(), log, registry);
            this.roles = new MemberRoles(deployment, members, states, simulation, listeners, endedTransactions, rollback,
                    config.upstream().credential(), config.connectTimeoutMillis(), upstreamTls, timer, log);
            AtomicInteger requestIds = new AtomicInteger();
            this.context = new PipeContext(new ConnectionMeters.Registry(registry), observer, rules, ruleParser,
                    config.forwardFailPoints(), rewriter, states, log, config.connectTimeoutMillis(), requestIds, simulation,
                    upstreamTls, new ChangeStreamCursors(), openConnections, () -> roles.failover(false, Failover.AT_ONCE), endedTransactions,
                    new RetriedWrites(), CommitsAlone.sharedBy(deployment), new SupersededTransactions(states, log), unreplicated,
                    new BatchInsertReruns(config.upstream().credential(), upstreamTls, config.connectTimeoutMillis()));
            this.selector = new MemberSelector(listeners, deployment, members, context.memberStates());
        } catch (RuntimeException e) { // e.g. an unwritable history file: a start retried must not pile them up
            stopThreads();
            registry.close();
            throw e;
        }
    }

    /** Discovers the deployment and opens a listener for each member; fails if any cannot be opened. */
    public static ProxyServer start(ProxyConfig config) {
        ProxyServer server = null;
        try {
            ProxyLog startLog = new ProxyLog();
            StartupNotes.logUpstreamOptions(config.upstream(), startLog);
            TlsListener listenerTls = TlsListener.of(config.listenerTls(), startLog);
            Tls.Client upstreamTls = config.upstream().tls();
            Discovery.Deployment deployment = Discovery.discover(config.upstream(), config.connectTimeoutMillis(), startLog::warn);
            if (config.simulateMembers() > 0) {
                deployment = SimulatedReplicaSet.deployment(deployment, config.simulateMembers());
            }
            server = new ProxyServer(config, deployment, listenerTls, upstreamTls);
            for (MemberAddress member : server.deployment.members()) {
                server.members.ensure(member);
            }
            StartupNotes.warnOfPinsForNoMember(config, server.members.upstreams(), startLog);
            server.roles.observeAtStart();
            return server;
        } catch (RuntimeException e) {
            if (server != null) {
                server.close();
            }
            throw e;
        }
    }

    private int listen(MemberAddress upstream, int port) throws InterruptedException {
        ClientPipeline pipeline = new ClientPipeline(openConnections, connectionLimit, listenerTls, context, upstream);
        ServerBootstrap bootstrap = pipeline.bootstrap(acceptors, workers).channelFactory(ListeningSockets.on(config.bindHost()));
        // The member record is complete only once the port is known; the listener reads it lazily.
        MemberListener listener = new MemberListener(upstream, bootstrap, config.bindHost(), log, members, config.seed());
        pipeline.servedBy(listener);
        int bound = listener.bind(port);
        listeners.put(upstream, listener);
        context.meters().forMember(upstream.toString()); // so /metrics lists the member before its first connection
        log.info("listening on " + HostNames.withPort(config.bindHost(), bound) + (listenerTls != null ? " (TLS)" : "") + " for member " + upstream
                + (upstreamTls.enabled() ? " (dialled over TLS)" : ""));
        return bound;
    }

    /** The active fault rules; changes apply to the next command. */
    public RuleSet rules() {
        return rules;
    }

    public RuleParser ruleParser() {
        return ruleParser;
    }

    /** What a member last said about itself (role, wire version, topologyVersion). */
    public MemberState memberState(MemberAddress upstream) {
        return context.memberStates().of(upstream);
    }

    public long seed() {
        return config.seed();
    }

    public ScenarioRunner scenarios() {
        return scenarios;
    }

    /** A loader that checks scenarios against this proxy's members. */
    public ScenarioLoader scenarioLoader() {
        return new ScenarioLoader(ruleParser, this::knowsMember, this::noMember, roles::failoverRefusal);
    }

    public History history() {
        return history;
    }

    /** How retries are recognised: the sessions seen and how their latest command ended. */
    public RetryTracker retryTracker() {
        return retryTracker;
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

    /** Client connections open across all members, as --max-connections counts them (0 when unlimited). */
    public int limitedConnections() {
        return connectionLimit == null ? 0 : connectionLimit.open();
    }

    /** Whether apps must connect with TLS. */
    public boolean listenerTls() {
        return listenerTls != null;
    }

    public int openConnections(MemberAddress upstream) {
        return context.meters().openConnections(upstream.toString());
    }

    /** The listener of a member, by its upstream address; null if the proxy has none. */
    public MemberListener listener(MemberAddress upstream) {
        return listeners.get(upstream);
    }

    /** The connection string an application should use to go through the proxy. */
    public String connectionString() {
        return deployment.connectionString(members.members(), listenerTls != null);
    }

    /**
     * Asks every member for its hello directly, so roles are known before any client has
     * connected (rules and faults aimed at "primary" need them). Members that do not answer keep
     * what was known.
     */
    public void refreshMemberStates() {
        roles.refresh();
    }

    // ---- deployment-level faults ----

    @Override
    public List<Begun> outage(String member, long millis) {
        return selector.beginOnEach(member, DeploymentFaults.OUTAGE, listener -> listener.outage(millis));
    }

    @Override
    public List<Begun> blackhole(String member, long millis) {
        return selector.beginOnEach(member, DeploymentFaults.BLACKHOLE, listener -> listener.blackhole(millis));
    }

    @Override
    public List<Begun> latency(String member, Latency latency, long millis) {
        return selector.beginOnEach(member, DeploymentFaults.LATENCY, listener -> listener.latency(latency, millis));
    }

    @Override
    public List<Begun> bandwidth(String member, Bandwidth bandwidth, long millis) {
        return selector.beginOnEach(member, DeploymentFaults.BANDWIDTH, listener -> listener.bandwidth(bandwidth, millis));
    }

    @Override
    public List<Begun> idleTimeout(String member, IdleTimeout idleTimeout, long millis) {
        return selector.beginOnEach(member, DeploymentFaults.IDLE_TIMEOUT, listener -> listener.idleTimeout(idleTimeout, millis));
    }

    @Override
    public List<Begun> restart(String member, Restart restart) {
        List<MemberListener> restarting = selector.selectSome(member);
        roles.stepDownBeforeRestart(restarting);
        return restarting.stream().map(listener -> selector.beginOn(listener, DeploymentFaults.RESTART,
                on -> on.restart(restart, context.memberStates()))).toList();
    }

    @Override
    public RollingOrder rollingRestartOrder() {
        return selector.rollingRestartOrder();
    }

    @Override
    public int resetConnections(String member) {
        return selector.select(member).stream().mapToInt(MemberListener::resetConnections).sum();
    }

    /** {@link #resetConnections}, where a {@code member} that selects none is refused, naming those there are. */
    public int resetConnectionsOfSome(String member) {
        return selector.selectSome(member).stream().mapToInt(MemberListener::resetConnections).sum();
    }

    @Override
    public void restore(String member) {
        selector.restoreEach(member);
    }

    @Override
    public void endIfStill(Begun begun) {
        selector.endIfStill(begun);
    }

    /** A failover whose simulated election lasts {@code electionMillis} (see {@link #failover(Failover)}). */
    public void failover(long electionMillis) {
        failover(new Failover(electionMillis, 0));
    }

    @Override
    public long failover(Failover failover) {
        return roles.failover(true, failover);
    }

    /** A simulated set back as it started (first member primary); false when nothing moved (see MemberRoles). */
    public boolean restoreSimulatedPrimary() {
        return roles.restoreSimulatedPrimary();
    }

    /**
     * A clean slate, as BlackPipe.reset() and POST /api/v1/reset give it: scenario stopped, rules cleared and their
     * fired counts zeroed, members restored, a simulated set's first member primary again, the sessions seen forgotten
     * (so the next command is no retry of an earlier one). Counters and history stay: they only grow.
     */
    public void reset() {
        try {
            scenarios.stop();
        } catch (IllegalStateException e) {
            // a fault of the scenario's that could not be ended: restore("all") below tries every member again
        }
        rules.clear();
        rules.forgetFired();
        ruleParser.restartDraws();
        try {
            restore("all");
        } finally { // a member that cannot be restored yet leaves the rest of the clean slate to come
            restoreSimulatedPrimary();
            retryTracker.forgetAll();
        }
    }

    @Override
    public boolean knowsMember(String member) {
        return selector.knows(member);
    }

    /** Why a rule's member ("primary", "secondary" or host:port) can name none of the members; null when it can. */
    private String unknownRuleMember(String member) {
        return selector.knows(member) ? null : selector.noRuleMember(member);
    }

    /** "no member 'x' (known: ...)": why {@code member} selects no member now. */
    public String noMember(String member) {
        return selector.noMember(member);
    }

    /** The listeners a member selector names now (see {@link DeploymentFaults}). */
    public List<MemberListener> select(String member) {
        return selector.select(member);
    }

    @Override
    public void close() {
        try {
            scenarios.stop();
        } catch (IllegalStateException e) { // a fault it began that it could not end: the rest closes all the same
            log.warn(e.getMessage());
        }
        listeners.values().forEach(MemberListener::close);
        openConnections.close().awaitUninterruptibly(2, TimeUnit.SECONDS); // a busy loop runs the closes as it stops
        stopThreads();
        context.batchInserts().close(); // after the event loops, the only ones to start a rerun
        history.close();
        registry.close();
    }

    /** The timer and the event loops (a selector each), which the field initializers opened. */
    private void stopThreads() {
        timer.shutdownNow();
        acceptors.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        workers.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
