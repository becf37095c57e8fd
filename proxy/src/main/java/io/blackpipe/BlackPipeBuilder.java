package io.blackpipe;

import io.blackpipe.pipe.ProxyConfig;
import java.nio.file.Path;
import java.util.Objects;

/**
 * Options of an in-process blackpipe: {@code BlackPipe.builder().upstream(uri).simulateMembers(3).seed(42).start()}.
 * Listeners always bind loopback on free ports and advertise 127.0.0.1.
 */
public final class BlackPipeBuilder {
    private String upstream;
    private int simulateMembers;
    private long seed;
    private int adminPort = -1;
    private Path historyFile;
    private boolean forwardFailPoints;

    BlackPipeBuilder() {
    }

    /** The deployment to put the proxy in front of (mongodb://; required). */
    public BlackPipeBuilder upstream(String uri) {
        this.upstream = Objects.requireNonNull(uri, "upstream");
        return this;
    }

    /** Present a replica set of {@code members} (2-7) over a single upstream node, so failover() works; 0: off (default). */
    public BlackPipeBuilder simulateMembers(int members) {
        this.simulateMembers = members;
        return this;
    }

    /** Seed of every random decision (activationProbability); default 0, so runs repeat. */
    public BlackPipeBuilder seed(long seed) {
        this.seed = seed;
        return this;
    }

    /** The admin HTTP server: -1 off (default), 0 a free port, else that port (loopback). */
    public BlackPipeBuilder adminPort(int port) {
        this.adminPort = port;
        return this;
    }

    /** Also append the operation history to this file as JSON lines. */
    public BlackPipeBuilder historyFile(Path file) {
        this.historyFile = file;
        return this;
    }

    /** Pass configureFailPoint commands from the application on to the server instead of taking them as rules. */
    public BlackPipeBuilder forwardFailPoints(boolean forward) {
        this.forwardFailPoints = forward;
        return this;
    }

    /**
     * Discovers the upstream and opens the listeners.
     *
     * @throws IllegalStateException when no upstream member answers
     * @throws IllegalArgumentException for a bad URI or option
     */
    public BlackPipe start() {
        if (upstream == null || upstream.isBlank()) {
            throw new IllegalArgumentException("upstream: required, a mongodb:// URI");
        }
        ProxyConfig base = ProxyConfig.embedded(upstream);
        ProxyConfig config = new ProxyConfig(base.upstream(), base.bindHost(), 0, base.advertiseHost(), base.adminHost(),
                adminPort, base.memberPorts(), base.connectTimeoutMillis())
                .withHistoryFile(historyFile)
                .withFaultOptions(seed, forwardFailPoints)
                .withSimulatedMembers(simulateMembers);
        return BlackPipe.start(config);
    }
}
