package io.blackpipe.pipe;

import io.blackpipe.fault.Bandwidth;
import io.blackpipe.fault.Direction;
import io.blackpipe.fault.Latency;
import io.blackpipe.topology.HostNames;
import io.blackpipe.topology.MemberAddress;
import io.blackpipe.topology.UpstreamUri;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * How to run one proxy: where the deployment is, where to listen, what to advertise.
 *
 * @param port       the first member's port; 0 picks free ports for every member (embedded use)
 * @param adminPort  the HTTP admin port; 0 picks a free one, -1 disables the admin server
 * @param seed       the seed of every random fault decision, so a run can be replayed
 * @param forwardFailPoints pass configureFailPoint commands to the server instead of taking them as rules
 * @param historyFile where to append the operation history (JSON lines), or null
 * @param simulateMembers present this many members over the one upstream node (0: off)
 * @param listenerTls TLS on the listeners apps connect to, or null for plaintext
 * @param maxConnections the most client connections open at once across all members (0: unlimited)
 */
public record ProxyConfig(UpstreamUri upstream, String bindHost, int port, String advertiseHost,
                          String adminHost, int adminPort, Map<MemberAddress, Integer> memberPorts,
                          int connectTimeoutMillis, long seed, boolean forwardFailPoints, Path historyFile,
                          int simulateMembers, ListenerTls listenerTls, int maxConnections) {

    /**
     * TLS on the listeners apps connect to (PEM files).
     *
     * @param clientCa               when set, clients must present a certificate this CA signed; null: not asked
     * @param handshakeTimeoutMillis how long a client's TLS handshake may take, beyond what a member's latency or
     *                               bandwidth adds to it ({@link #handshakeTimeoutMillisOn})
     */
    public record ListenerTls(Path cert, Path key, Path clientCa, long handshakeTimeoutMillis) {
        /** Netty's default. */
        public static final long HANDSHAKE_TIMEOUT_MILLIS = 10_000;
        /** More than a TLS handshake sends either way, a long certificate chain included. */
        private static final int HANDSHAKE_BYTES = 16 * 1024;

        public ListenerTls {
            if (cert == null || key == null) {
                throw new IllegalArgumentException("TLS on the listeners needs both --tls-cert and --tls-key");
            }
            if (handshakeTimeoutMillis < 0) { // else every connection would fail in SslHandler, not the start
                throw new IllegalArgumentException("the TLS handshake timeout must not be negative, got " + handshakeTimeoutMillis + " ms");
            }
        }

        public ListenerTls(Path cert, Path key, Path clientCa) {
            this(cert, key, clientCa, HANDSHAKE_TIMEOUT_MILLIS);
        }

        /**
         * How long a client's TLS handshake may take on a member's link with {@code latency} and {@code bandwidth}
         * (either null): {@link #handshakeTimeoutMillis}, plus what the link adds to it: two round trips' latency (TLS
         * 1.2's), one delay each way the latency acts, and 16 KiB each way the bandwidth narrows, at its rate (a long
         * certificate chain), so that the link slows the handshake but never fails it.
         */
        long handshakeTimeoutMillisOn(Latency latency, Bandwidth bandwidth) {
            long onTheLink = latency == null ? 0 : 2 * ways(latency.direction()) * (latency.delayMillis() + latency.jitterMillis());
            if (bandwidth != null) {
                onTheLink += TimeUnit.NANOSECONDS.toMillis(bandwidth.nanosFor((long) ways(bandwidth.direction()) * HANDSHAKE_BYTES));
            }
            return handshakeTimeoutMillis + onTheLink;
        }

        private static int ways(Direction direction) {
            return (direction.towardsClients() ? 1 : 0) + (direction.towardsMember() ? 1 : 0);
        }
    }

    public ProxyConfig(UpstreamUri upstream, String bindHost, int port, String advertiseHost, String adminHost,
                       int adminPort, Map<MemberAddress, Integer> memberPorts, int connectTimeoutMillis) {
        this(upstream, bindHost, port, advertiseHost, adminHost, adminPort, memberPorts, connectTimeoutMillis, 0, false, null, 0,
                null, 0);
    }

    public ProxyConfig {
        memberPorts = Map.copyOf(memberPorts);
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("--port " + port + " is out of range 0-65535");
        }
        if (adminPort < -1 || adminPort > 65535) {
            throw new IllegalArgumentException("--admin-port " + adminPort + " is out of range (-1 disables, 0 picks a free port)");
        }
        if (simulateMembers != 0 && (simulateMembers < 2 || simulateMembers > 7)) {
            throw new IllegalArgumentException("--simulate-members " + simulateMembers + " must be from 2 to 7 (0 turns it off)");
        }
        if (maxConnections < 0) {
            throw new IllegalArgumentException("--max-connections " + maxConnections + " must be 0 (unlimited) or more");
        }
    }

    /** Loopback everywhere with free ports: what a test embedding the proxy wants. */
    public static ProxyConfig embedded(String upstreamUri) {
        return new ProxyConfig(UpstreamUri.parse(upstreamUri), "127.0.0.1", 0, "127.0.0.1", "127.0.0.1", 0, Map.of(), 5000);
    }

    public ProxyConfig withHistoryFile(Path file) {
        return new ProxyConfig(upstream, bindHost, port, advertiseHost, adminHost, adminPort, memberPorts,
                connectTimeoutMillis, seed, forwardFailPoints, file, simulateMembers, listenerTls, maxConnections);
    }

    public ProxyConfig withFaultOptions(long seed, boolean forwardFailPoints) {
        return new ProxyConfig(upstream, bindHost, port, advertiseHost, adminHost, adminPort, memberPorts,
                connectTimeoutMillis, seed, forwardFailPoints, historyFile, simulateMembers, listenerTls, maxConnections);
    }

    public ProxyConfig withSimulatedMembers(int count) {
        return new ProxyConfig(upstream, bindHost, port, advertiseHost, adminHost, adminPort, memberPorts,
                connectTimeoutMillis, seed, forwardFailPoints, historyFile, count, listenerTls, maxConnections);
    }

    /** TLS on the listeners; null: plaintext. */
    public ProxyConfig withListenerTls(ListenerTls tls) {
        return new ProxyConfig(upstream, bindHost, port, advertiseHost, adminHost, adminPort, memberPorts,
                connectTimeoutMillis, seed, forwardFailPoints, historyFile, simulateMembers, tls, maxConnections);
    }

    /** At most this many client connections across all members; 0: unlimited. */
    public ProxyConfig withMaxConnections(int max) {
        return new ProxyConfig(upstream, bindHost, port, advertiseHost, adminHost, adminPort, memberPorts,
                connectTimeoutMillis, seed, forwardFailPoints, historyFile, simulateMembers, listenerTls, max);
    }

    /** The host apps dial: the advertised one, else the bind host, or for a wildcard its loopback (127.0.0.1, or ::1 for ::). */
    public String effectiveAdvertiseHost() {
        if (advertiseHost != null && !advertiseHost.isBlank()) {
            return advertiseHost;
        }
        if (HostNames.isWildcard(bindHost)) {
            return HostNames.isIpv6Literal(bindHost) ? "::1" : "127.0.0.1";
        }
        return bindHost;
    }
}
