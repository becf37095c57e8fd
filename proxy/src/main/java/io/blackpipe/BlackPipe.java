package io.blackpipe;

import io.blackpipe.admin.AdminServer;
import io.blackpipe.fault.Bandwidth;
import io.blackpipe.fault.BundledScenarios;
import io.blackpipe.fault.Direction;
import io.blackpipe.fault.FaultLabels;
import io.blackpipe.fault.IdleTimeout;
import io.blackpipe.fault.JsonDocuments;
import io.blackpipe.fault.Latency;
import io.blackpipe.fault.ScenarioException;
import io.blackpipe.observe.CounterLabels;
import io.blackpipe.observe.HistoryEntry;
import io.blackpipe.observe.Outcome;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.bson.BsonDocument;

/**
 * blackpipe inside a test JVM: a proxy in front of an upstream deployment, on loopback and free
 * ports (nothing to pre-allocate), with its rules and counters at hand. Close it (try-with-resources)
 * and every listener is gone.
 *
 * <pre>{@code
 * try (BlackPipe blackPipe = BlackPipe.start("mongodb://localhost:27017/?replicaSet=rs0")) {
 *     blackPipe.fail("insert").times(1).with(Fault.RESET);
 *     MongoClient client = MongoClients.create(blackPipe.connectionString());
 *     client.getDatabase("app").getCollection("orders").insertOne(new Document("x", 1)); // retried
 *     assertEquals(1, blackPipe.retries("insert"));
 * }
 * }</pre>
 *
 * <p>Counters are read from the proxy's Micrometer registry, summed over the labels not given; {@link #resetCounters()}
 * records a baseline later reads subtract, so /metrics stays monotonic, as Prometheus's must.
 */
public final class BlackPipe implements AutoCloseable {
    private final ProxyServer proxy;
    private final AdminServer admin;
    private final CounterView counters;
    final BlackPipeRules rules; // ManagedBlackPipe's giveBackRules starts their ids over too
    private final AtomicBoolean closed = new AtomicBoolean();
    /** Who closes this instance when it is {@link ManagedBlackPipe} (its own close() then refuses); null: whoever holds it. */
    private final String closedBy;
    /** System.nanoTime() of the last reset(): history() shows what was recorded since; null: everything. */
    private volatile Long historySince;

    private BlackPipe(ProxyServer proxy, AdminServer admin, String closedBy) {
        this.proxy = proxy;
        this.admin = admin;
        this.closedBy = closedBy;
        this.counters = new CounterView(proxy.registry());
        this.rules = new BlackPipeRules(proxy);
    }

    /** Starts a proxy in front of {@code upstreamUri} (a mongodb:// or mongodb+srv:// URI), with defaults. */
    public static BlackPipe start(String upstreamUri) {
        return builder().upstream(upstreamUri).start();
    }

    public static BlackPipeBuilder builder() {
        return new BlackPipeBuilder();
    }

    /** @param closedBy null, or who alone closes it (a {@link ManagedBlackPipe} one) */
    static BlackPipe start(ProxyConfig config, String closedBy) {
        ProxyServer proxy = ProxyServer.start(config);
        try {
            AdminServer admin = config.adminPort() < 0 ? null : AdminServer.start(proxy, config.adminHost(), config.adminPort());
            return new BlackPipe(proxy, admin, closedBy);
        } catch (RuntimeException e) {
            proxy.close();
            throw e;
        }
    }

    /** The connection string the application under test should use, e.g. mongodb://127.0.0.1:41234,.../?replicaSet=rs0. */
    public String connectionString() {
        return proxy.connectionString();
    }

    /** http://127.0.0.1:PORT of the admin API, when the builder enabled it (adminPort 0 or a port). */
    public String adminUrl() {
        if (admin == null) {
            throw new IllegalStateException("the admin server is off; start with BlackPipe.builder().adminPort(0) or @BlackPipeTest(adminPort = 0)");
        }
        return "http://127.0.0.1:" + admin.port();
    }

    // ---- rules ----

    /** Adds a failCommand document as a rule; its id is the document's "id" field, else a new one. Returns the id. */
    public String rule(String failCommandJson) {
        ensureOpen();
        BsonDocument document = Arguments.failCommand(failCommandJson);
        return rule(document.isString("id") ? document.getString("id").getValue() : null, document);
    }

    /** Adds (or replaces) the rule {@code id}; the document's own id, if any, must be the same. Returns the id. */
    public String rule(String id, String failCommandJson) {
        ensureOpen();
        return rule(Arguments.ruleId(id), Arguments.failCommand(failCommandJson));
    }

    /** {@code id} null: a new one. */
    String rule(String id, BsonDocument document) {
        ensureOpen();
        return rules.add(id, document);
    }

    /** A rule on {@code commands}, built fluently: {@code fail("insert").times(1).with(Fault.RESET)}. */
    public FailRule fail(String... commands) {
        ensureOpen();
        return new FailRule(this::rule, commands);
    }

    /**
     * A rule on every command (failCommand's failAllCommands), hellos included except for a reply's fate (a delay, a
     * trickle, a dropped, truncated or canned reply). A {@code times(n)} or {@code skip(n)} counts the hellos it matches,
     * and hellos are no attempts nor history lines: {@code failAll().times(1).error(...)} may be spent on a driver's
     * handshake; {@code onNamespace("shop")} keeps it to the app's commands on shop.
     */
    public FailRule failAll() {
        ensureOpen();
        return FailRule.onAllCommands(this::rule);
    }

    public boolean removeRule(String id) {
        ensureOpen();
        return proxy.rules().remove(Arguments.required(id, "id"));
    }

    public void clearRules() {
        ensureOpen();
        proxy.rules().clear();
    }

    /** Commands the rule {@code id} has faulted (0: never seen), past its replacement and removal; {@link #reset()} zeroes it. */
    public long fired(String id) {
        return proxy.rules().fired(Arguments.required(id, "id"));
    }

    /**
     * The active rules as failCommand JSON, each with its "id" (one added without, by the admin API, a scenario or an
     * app's configureFailPoint, too); an Int64 as {"$numberLong": "N"}, so that the JSON added again is the same rule.
     */
    public List<String> rules() {
        return proxy.rules().rules().stream().map(rule -> JsonDocuments.typedJson(rule.document())).toList();
    }

    // ---- counters ----

    /**
     * Attempts of {@code command} (first attempts and retries) since start or the last {@link #resetCounters()}, named
     * as the server knows it ({@code findandmodify} reads {@code findAndModify}'s); "other" counts unknown commands.
     *
     * @throws IllegalArgumentException for a name counted under "other" (a typo), which would read 0 forever
     */
    public long attempts(String command) {
        return counters.sum("blackpipe.command.attempts", "command", CounterLabels.command(command));
    }

    /** Attempts of {@code command} the proxy recognised as retries; {@code command} as for {@link #attempts}. */
    public long retries(String command) {
        return counters.sum("blackpipe.command.retries", "command", CounterLabels.command(command));
    }

    /** Attempts of {@code command} (as {@link #attempts} takes it) that ended in {@code outcome}: ok, error, network_error or no_reply. */
    public long outcomes(String command, String outcome) {
        return counters.sum("blackpipe.command.outcomes", "command", CounterLabels.command(command),
                "outcome", CounterLabels.outcome(outcome));
    }

    public long outcomes(String command, Outcome outcome) {
        return outcomes(command, Arguments.required(outcome, "outcome").label());
    }

    /** Faults injected under {@code fault} (resetConnection, errorReply, outage, ...), all commands; another label is refused. */
    public long faultsInjected(String fault) {
        return counters.sum("blackpipe.faults.injected", "fault", FaultLabels.check(fault));
    }

    public long faultsInjected(Fault fault) {
        return faultsInjected(Arguments.required(fault, "fault").label());
    }

    /** Counts from zero again, as this object reports them; the registry and /metrics are untouched. */
    public void resetCounters() {
        counters.reset();
    }

    /** The meter registry, for what the above do not cover (resetCounters leaves it); not the round-trip histogram: see /metrics. */
    public MeterRegistry registry() {
        return proxy.registry();
    }

    // ---- scenarios and deployment faults ----

    /** Loads a scenario file (checked whole first) and starts it, stopping one still running. */
    public void runScenario(Path file) {
        ensureOpen();
        try {
            proxy.scenarios().start(loader -> loader.load(Arguments.scenarioFile(file)));
        } catch (IOException e) {
            throw Arguments.cannotReadScenario(file, e);
        } catch (ScenarioException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    /** Starts a scenario shipped in blackpipe's jar by name ("transient-blip"); an unknown name's exception lists them. */
    public void runBundledScenario(String name) {
        ensureOpen();
        proxy.scenarios().start(loader -> BundledScenarios.load(loader, Arguments.scenarioName(name)));
    }

    /** Stops the running scenario: its pending steps are cancelled, its rules removed, its member faults still in force ended. */
    public void stopScenario() {
        ensureOpen();
        proxy.scenarios().stop();
    }

    /** Moves the primary role to another member: a real stepDown, or the simulated set's next member ({@link #reset()} puts it back). */
    public void failover() {
        failover(Duration.ZERO);
    }

    /**
     * {@link #failover()}, a simulated set first having no primary for {@code election}, as while a real set elects.
     *
     * @throws IllegalStateException on a real set (its election takes the time it takes), or during an election
     */
    public void failover(Duration election) {
        ensureOpen();
        proxy.failover(Arguments.electionMillis(election));
    }

    /**
     * {@link #failover(Duration)}, and the old primary had not replicated its last {@code rollback} (up to 60 s): what
     * its writes with a write concern below majority (w: 1) did in that time is rolled back, as mongod rolls back what a
     * majority lacked (the documents they inserted removed, those they changed or deleted put back). Returns when the
     * server holds what the new primary would.
     *
     * @return how many documents the rollback removed or put back
     * @throws IllegalStateException on a real set (its members roll back what they must), or during an election
     */
    public long failover(Duration election, Duration rollback) {
        ensureOpen();
        return proxy.failover(Arguments.failover(election, rollback));
    }

    /**
     * {@code member} (primary, secondary, all or host:port) refuses connections for {@code duration} (zero: until restored).
     *
     * @throws IllegalArgumentException naming the known members, when {@code member} names none (a typo, or "secondary" where none can be)
     * @throws IllegalStateException    when no member has that role now (primary, while a simulated set elects)
     */
    public void outage(String member, Duration duration) {
        ensureOpen();
        proxy.outage(Arguments.member(member), Arguments.millis(duration));
    }

    /** {@code member} accepts connections but nothing passes for {@code duration} (zero: until restored); a member as {@link #outage}. */
    public void blackhole(String member, Duration duration) {
        ensureOpen();
        proxy.blackhole(Arguments.member(member), Arguments.millis(duration));
    }

    /** {@link #latency(String, Duration, Duration, Duration)} without a jitter. */
    public void latency(String member, Duration delay, Duration duration) {
        latency(member, delay, Duration.ZERO, duration);
    }

    /** {@link #latency(String, Duration, Duration, Direction, Duration)} on what {@code member} sends its clients. */
    public void latency(String member, Duration delay, Duration jitter, Duration duration) {
        latency(member, delay, jitter, Latency.DEFAULT_DIRECTION, duration);
    }

    /**
     * What goes {@code direction}: {@code REPLIES} (all {@code member} sends its clients: replies, hellos, errors, a
     * connection's end), {@code REQUESTS} (all they send it) or {@code BOTH}, arrives late, in order, each message by a
     * time drawn evenly from delay ± jitter (never below 0), for {@code duration} (zero: until restored).
     *
     * @throws IllegalArgumentException for a member as {@link #outage} refuses it, or a delay or jitter that is not zero or
     *                                  whole milliseconds up to a day (both zero: no latency)
     */
    public void latency(String member, Duration delay, Duration jitter, Direction direction, Duration duration) {
        ensureOpen();
        proxy.latency(Arguments.member(member), Arguments.latency(delay, jitter, direction), Arguments.millis(duration));
    }

    /** {@link #bandwidth(String, long, Direction, Duration)} each way. */
    public void bandwidth(String member, long bytesPerSecond, Duration duration) {
        bandwidth(member, bytesPerSecond, Bandwidth.DEFAULT_DIRECTION, duration);
    }

    /**
     * Each connection from {@code member} (as {@link #outage} takes it) to its clients carries at most {@code bytesPerSecond}
     * (1 to 1 GiB) {@code direction}: {@code BOTH} ways, {@code REPLIES} (to the clients) or {@code REQUESTS} (to the
     * member), so a large reply or insert arrives spread over time, for {@code duration}.
     */
    public void bandwidth(String member, long bytesPerSecond, Direction direction, Duration duration) {
        ensureOpen();
        proxy.bandwidth(Arguments.member(member), new Bandwidth(bytesPerSecond, direction), Arguments.millis(duration));
    }

    /**
     * A middlebox on {@code member}'s links (as {@link #outage} takes it) forgets each connection idle for {@code after}
     * (whole milliseconds up to a day), and {@code then} drops or resets what its client sends later, for {@code duration}.
     */
    public void idleTimeout(String member, Duration after, IdleTimeout.Then then, Duration duration) {
        ensureOpen();
        IdleTimeout idle = new IdleTimeout(Arguments.positiveMillis(after, "after"), then);
        proxy.idleTimeout(Arguments.member(member), idle, Arguments.millis(duration));
    }

    /**
     * Restarts {@code member} (as {@link #outage} takes it) cleanly ({@link io.blackpipe.fault.Restart}): a primary steps
     * down first; it quiesces for {@code quiesce} (zero: none), exits and is down for {@code down}. Returns at once.
     */
    public void restart(String member, Duration quiesce, Duration down) {
        ensureOpen();
        proxy.restart(Arguments.member(member), Arguments.restart(quiesce, down));
    }

    /** Ends an outage, blackhole, latency, bandwidth, idle timeout or restart of {@code member} (as {@link #outage} takes it) now. */
    public void restore(String member) {
        ensureOpen();
        proxy.restore(Arguments.member(member));
    }

    /**
     * Resets (TCP RST) every open client connection of {@code member} (as {@link #outage} takes it, and refuses) now,
     * and returns how many once they are reset, as the CLI's {@code connections reset}. The listener stays open.
     */
    public int resetConnections(String member) {
        ensureOpen();
        return proxy.resetConnectionsOfSome(Arguments.member(member));
    }

    /** The latest application commands (up to 10,000), oldest first, since start or the last {@link #reset()}: the file keeps all. */
    public List<HistoryEntry> history() {
        Long since = historySince;
        return since == null ? proxy.history().recent() : proxy.history().recentSince(since);
    }

    /**
     * Back to a clean slate between tests: scenario stopped, rules cleared (fired counts zeroed, ids from rule-1 again),
     * members restored, a simulated set's first member primary again (a real set's failover stays), counters reset,
     * history() emptied, the sessions seen forgotten (a test's first command is no retry of the last test's).
     */
    public void reset() {
        ensureOpen();
        proxy.reset();
        rules.startIdsOver();
        counters.reset();
        historySince = System.nanoTime();
    }

    /** The underlying proxy, for what this facade does not offer. */
    public ProxyServer server() {
        return proxy;
    }

    /** A change to a closed proxy (rule, fault, scenario, reset) would do nothing: say so. Reads and resetCounters() stay allowed. */
    private void ensureOpen() {
        if (closed.get()) {
            throw new IllegalStateException("this BlackPipe is closed (its listeners are gone): start a new one");
        }
    }

    /**
     * Stops the admin server and every listener; open client connections are closed. Idempotent. Counters, rules,
     * fired counts and history can still be read; a method that would change the proxy is an IllegalStateException.
     *
     * @throws IllegalStateException for a {@link ManagedBlackPipe} one, which only its handle closes (the {@code @BlackPipeTest}
     *                               extension's, after the class's tests), saying so
     */
    @Override
    public void close() {
        if (closedBy != null) {
            throw new IllegalStateException("close(): this BlackPipe is closed by " + closedBy);
        }
        shutDown();
    }

    void shutDown() {
        if (closed.compareAndSet(false, true)) {
            if (admin != null) {
                admin.close();
            }
            proxy.close();
        }
    }
}
