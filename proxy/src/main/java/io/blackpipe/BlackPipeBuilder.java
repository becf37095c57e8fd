package io.blackpipe;

import io.blackpipe.pipe.ProxyConfig;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Options of an in-process blackpipe: {@code BlackPipe.builder().upstream(uri).simulateMembers(3).seed(42).start()}.
 * Listeners always bind loopback, on free ports unless {@link #port(int)} says, and advertise 127.0.0.1. As the CLI's {@code proxy} command,
 * they can require TLS ({@link #tls(Path, Path)}, {@link #tlsClientCa(Path)}) and cap the open client
 * connections ({@link #maxConnections(int)}).
 */
public final class BlackPipeBuilder {
    private static final String UPSTREAM_REQUIRED = "upstream: required, a mongodb:// or mongodb+srv:// URI";
    private String upstream;
    private int simulateMembers;
    private long seed;
    private int adminPort = -1;
    private Path historyFile;
    private boolean forwardFailPoints;
    private Path tlsCert;
    private Path tlsKey;
    private Path tlsClientCa;
    private int maxConnections;
    private int port;

    BlackPipeBuilder() {
    }

    /** The deployment to put the proxy in front of (mongodb://; required). */
    public BlackPipeBuilder upstream(String uri) {
        if (uri == null) {
            throw new IllegalArgumentException(UPSTREAM_REQUIRED + ", got null");
        }
        this.upstream = uri;
        return this;
    }

    /**
     * Present a replica set of {@code members} (2-7) over a single upstream node, so failover() works; 0: off (default).
     * Checked here, as the options below, so that the error names this method rather than the CLI's option.
     */
    public BlackPipeBuilder simulateMembers(int members) {
        if (members != 0 && (members < 2 || members > 7)) {
            throw new IllegalArgumentException("simulateMembers: " + members + " must be from 2 to 7 (0 turns it off)");
        }
        this.simulateMembers = members;
        return this;
    }

    /** Seed of every random decision (activationProbability); default 0, so runs repeat. */
    public BlackPipeBuilder seed(long seed) {
        this.seed = seed;
        return this;
    }

    /**
     * The first member's listener port; the next members get port+1, port+2, ..., as the CLI's {@code --port}: for a
     * test that may use a few known ports only. 0: free ports (default). A port taken fails the start, naming it.
     */
    public BlackPipeBuilder port(int port) {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port: " + port + " is out of range (0 picks free ports)");
        }
        this.port = port;
        return this;
    }

    /** The admin HTTP server: -1 off (default), 0 a free port, else that port (loopback). */
    public BlackPipeBuilder adminPort(int port) {
        if (port < -1 || port > 65535) {
            throw new IllegalArgumentException("adminPort: " + port + " is out of range (-1 disables, 0 picks a free port)");
        }
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
     * TLS on the listeners (CLI {@code --tls-cert}, {@code --tls-key}): apps must connect with TLS, and
     * {@link BlackPipe#connectionString()} carries {@code tls=true}.
     *
     * @param cert PEM certificate (chain) of the listeners
     * @param key  PEM private key of {@code cert} (PKCS#8, unencrypted)
     */
    public BlackPipeBuilder tls(Path cert, Path key) {
        this.tlsCert = readable("tls: cert", cert);
        this.tlsKey = readable("tls: key", key);
        return this;
    }

    /**
     * With {@link #tls(Path, Path)}: apps must present a client certificate one of these PEM CAs
     * signed (CLI {@code --tls-client-ca}).
     */
    public BlackPipeBuilder tlsClientCa(Path ca) {
        this.tlsClientCa = readable("tlsClientCa", ca);
        return this;
    }

    /**
     * The most client connections open at once across all members; more are closed on accept
     * (CLI {@code --max-connections}). 0: unlimited (default).
     */
    public BlackPipeBuilder maxConnections(int max) {
        if (max < 0) {
            throw new IllegalArgumentException("maxConnections: " + max + " must be 0 (unlimited) or more");
        }
        this.maxConnections = max;
        return this;
    }

    // Checked here so the error names the builder method, not the CLI option start() would name.
    private static Path readable(String what, Path file) {
        if (file == null) {
            throw new IllegalArgumentException(what + ": a PEM file is required, got null");
        }
        if (!Files.isReadable(file)) {
            throw new IllegalArgumentException(what + ": " + file + " is not a readable file");
        }
        return file;
    }

    /**
     * Discovers the upstream and opens the listeners.
     *
     * @throws IllegalStateException when no upstream member answers, or a mongodb+srv:// host's DNS records
     *                               give no seeds ({@link io.blackpipe.topology.SeedlistException}), or the
     *                               classpath has a Netty older than 4.2
     * @throws IllegalArgumentException for a bad URI or option
     */
    public BlackPipe start() {
        return BlackPipe.start(config(), null);
    }

    /**
     * Starts the proxy as {@link #start()} does, for code that shares it with others who must not close it (a
     * test framework extension and its tests): the BlackPipe's own {@code close()} is then an
     * IllegalStateException, "close(): this BlackPipe is closed by " followed by {@code closedBy}, and only the
     * returned handle closes it.
     *
     * @param closedBy who closes it and when, and what to do instead, completing that sentence (e.g. "the suite's
     *                 extension after its last test, which share it")
     */
    public ManagedBlackPipe startManaged(String closedBy) {
        if (closedBy == null || closedBy.isBlank()) {
            throw new IllegalArgumentException("closedBy: say who closes this BlackPipe (e.g. \"the suite's extension\"), got "
                    + (closedBy == null ? "null" : "'" + closedBy + "'"));
        }
        return new ManagedBlackPipe(BlackPipe.start(config(), closedBy));
    }

    private ProxyConfig config() {
        NettyRequirement.check();
        if (upstream == null || upstream.isBlank()) {
            throw new IllegalArgumentException(UPSTREAM_REQUIRED);
        }
        if (tlsClientCa != null && tlsCert == null) {
            throw new IllegalArgumentException(
                    "tlsClientCa: needs tls(cert, key) too, client certificates are asked for over TLS");
        }
        if (simulateMembers > 0 && port > 0 && port + simulateMembers - 1 > 65535) { // as the CLI says it, before any bind
            throw new IllegalArgumentException("port: " + port + " leaves no room for simulateMembers " + simulateMembers
                    + ": their listeners take ports " + port + "-" + (port + simulateMembers - 1) + ", past 65535");
        }
        ProxyConfig base = ProxyConfig.embedded(upstream);
        ProxyConfig config = new ProxyConfig(base.upstream(), base.bindHost(), port, base.advertiseHost(), base.adminHost(),
                adminPort, base.memberPorts(), base.connectTimeoutMillis())
                .withHistoryFile(historyFile)
                .withFaultOptions(seed, forwardFailPoints)
                .withSimulatedMembers(simulateMembers)
                .withListenerTls(tlsCert == null ? null : new ProxyConfig.ListenerTls(tlsCert, tlsKey, tlsClientCa))
                .withMaxConnections(maxConnections);
        return config;
    }
}
