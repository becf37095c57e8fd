package io.blackpipe.fault;

import java.util.List;

/**
 * Faults that act on whole members rather than on one command; the proxy implements them.
 * {@code member} is "primary", "secondary", "all", or a member's upstream or advertised host:port.
 */
public interface DeploymentFaults {
    /**
     * The member refuses new connections and resets open ones for {@code millis} (0: until restored).
     * Returns the upstream host:port of each member it took down, to restore exactly those later.
     */
    List<String> outage(String member, long millis);

    /**
     * The member accepts connections but nothing passes either way for {@code millis} (0: until
     * restored). Returns the upstream host:port of each member it blackholed.
     */
    List<String> blackhole(String member, long millis);

    /** Ends an outage or blackhole now. */
    void restore(String member);

    /** Moves the primary role to another member, as an election would. */
    void failover();

    /** Whether {@code member} names something this deployment has; used to validate scenarios up front. */
    boolean knowsMember(String member);
}
