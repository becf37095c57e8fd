package io.blackpipe.fault;

import java.util.List;

/**
 * Faults that act on whole members rather than on one command; the proxy implements them.
 * {@code member} is "primary", "secondary", "all", or a member's upstream or advertised host:port.
 */
public interface DeploymentFaults {
    /*
     * The fault labels (history "fault", blackpipe_faults_injected_total{fault}) of the commands these
     * faults break, beside the rules' own (resetConnection, errorReply, ...).
     */
    /** A command cut by its member's outage: reset with its connection, or read as the member went down. */
    String OUTAGE = "outage";
    /** A command sent into a blackholed member. */
    String BLACKHOLE = "blackhole";
    /** A member's latency: it breaks no command, and labels none; it names the fault to end ({@link #endIfStill}). */
    String LATENCY = "latency";
    /** A member's bandwidth: as a latency, it breaks no command and labels none; it names the fault to end. */
    String BANDWIDTH = "bandwidth";
    /**
     * A command in flight on a connection a member's idle timeout forgot (its member connection closed); the
     * connections it forgets count in blackpipe_connections_idle_timeouts_total.
     */
    String IDLE_TIMEOUT = "idleTimeout";
    /**
     * A member's restart: a hello answered ShutdownInProgress while it quiesces, a command cut as it exits (its
     * connection closed) or read while it is down.
     */
    String RESTART = "restart";
    /** A command cut by a reset of its member's connections (the API's and CLI's connections reset). */
    String CONNECTIONS_RESET = "connectionsReset";

    /**
     * One fault begun on one member: its upstream host:port, its kind ({@link #OUTAGE}, {@link #BLACKHOLE}, {@link #LATENCY},
     * {@link #BANDWIDTH}, {@link #IDLE_TIMEOUT} or {@link #RESTART}) and its mark there, to end exactly this fault later ({@link #endIfStill}).
     */
    record Begun(String upstream, String fault, long mark) {
    }

    /**
     * The member refuses new connections and resets open ones for {@code millis} (0: until restored).
     * Returns the outage begun on each member it took down.
     */
    List<Begun> outage(String member, long millis);

    /**
     * The member accepts connections but nothing passes either way for {@code millis} (0: until
     * restored). Returns the blackhole begun on each member.
     */
    List<Begun> blackhole(String member, long millis);

    /**
     * Everything the member sends its clients arrives {@code latency} late, for {@code millis} (0: until restored).
     * Returns the latency begun on each member.
     */
    List<Begun> latency(String member, Latency latency, long millis);

    /**
     * Each connection from the member to its clients carries at most {@code bandwidth} each way, for {@code millis} (0: until
     * restored). Returns the bandwidth begun on each member.
     */
    List<Begun> bandwidth(String member, Bandwidth bandwidth, long millis);

    /**
     * A middlebox on the member's links to its clients forgets each connection idle for {@code idleTimeout}'s time,
     * for {@code millis} (0: until restored). Returns the idle timeout begun on each member.
     */
    List<Begun> idleTimeout(String member, IdleTimeout idleTimeout, long millis);

    /**
     * The member shuts down cleanly and starts again ({@link Restart}): a primary steps down first (if another member
     * can take over); then it quiesces, answering every hello with ShutdownInProgress while commands go on; then it
     * exits (what still awaits its reply is answered InterruptedAtShutdown, its connections close, its listener too)
     * and is down for a while. Returns the restart begun on each member.
     */
    List<Begun> restart(String member, Restart restart);

    /**
     * The members in the order a rolling restart takes them now, as a maintenance window does: each secondary (its
     * upstream host:port), then those in no other role (one that never answered, an arbiter), then the primary (each
     * router of a sharded cluster), which steps down as it restarts.
     */
    RollingOrder rollingRestartOrder();

    /** Every member by its upstream host:port, the primaries last; {@code primaries}: those primary now. */
    record RollingOrder(List<String> members, List<String> primaries) {
    }

    /**
     * Resets (TCP RST) every open client connection of the members {@code member} names now, as a load balancer or a
     * firewall that drops its flows does; returns how many, once they are reset. The listeners stay open.
     */
    int resetConnections(String member);

    /** Ends every outage, blackhole, latency, bandwidth, idle timeout and restart of the member now. */
    void restore(String member);

    /**
     * Ends the fault {@code begun} unless it ended already: restored, over, or followed by another fault of its
     * kind there, which is not this one to end (nor is a fault of the other kind).
     */
    void endIfStill(Begun begun);

    /** Moves the primary role to another member, as an election would. */
    default void failover() {
        failover(Failover.AT_ONCE);
    }

    /**
     * The same, with a simulated set's election and rollback ({@link Failover}; refused for a real set, whose election
     * takes the time it takes).
     *
     * @return how many documents the rollback removed or put back
     */
    long failover(Failover failover);

    /** Whether {@code member} names something this deployment has; used to validate scenarios up front. */
    boolean knowsMember(String member);
}
