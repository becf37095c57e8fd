package io.blackpipe.cli;

import io.blackpipe.admin.AdminToken;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.topology.HostNames;
import io.blackpipe.topology.MemberAddress;
import io.blackpipe.topology.UpstreamUri;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Option;

/** Where the proxy listens and what it advertises; shared by every command that starts one. */
final class ListenOptions {
    @Option(names = "--host", defaultValue = "${env:BLACKPIPE_HOST:-0.0.0.0}",
            description = "Address the member listeners bind (env BLACKPIPE_HOST; default 0.0.0.0).")
    String host;

    @Option(names = "--port", defaultValue = "${env:BLACKPIPE_PORT:-27017}",
            description = "Port of the first member's listener; the next members get port+1, port+2, ...; 0 picks free ports (env BLACKPIPE_PORT; default 27017).")
    int port;

    @Option(names = "--advertise-host", paramLabel = "NAME", defaultValue = "${env:BLACKPIPE_ADVERTISE_HOST}",
            description = "Host name or IP address apps dial, written into hello replies (env BLACKPIPE_ADVERTISE_HOST; default: --host, or its loopback when --host is a wildcard: 127.0.0.1, ::1 for ::).")
    String advertiseHost;

    @Option(names = "--admin-host", defaultValue = "${env:BLACKPIPE_ADMIN_HOST:-127.0.0.1}",
            description = "Address the admin HTTP server binds (env BLACKPIPE_ADMIN_HOST; default 127.0.0.1).")
    String adminHost;

    @Option(names = "--admin-port", defaultValue = "${env:BLACKPIPE_ADMIN_PORT:-9090}",
            description = "Admin HTTP port serving /metrics, /health and the control API (/api/v1/..., which the fault, scenario, stats and member commands use);"
                    + " 0 picks a free port, -1 disables it all (env BLACKPIPE_ADMIN_PORT; default 9090).")
    int adminPort;

    @Option(names = "--admin-token", paramLabel = "TOKEN", defaultValue = "${env:BLACKPIPE_ADMIN_TOKEN}", converter = OptionalToken.class,
            description = "Require 'Authorization: Bearer TOKEN' on every /api/v1 request (/health and /metrics stay open) (env BLACKPIPE_ADMIN_TOKEN).")
    String adminToken;

    @Option(names = "--member-port", paramLabel = "HOST:PORT=N", split = ",", defaultValue = "${env:BLACKPIPE_MEMBER_PORTS}",
            description = "Pin the listener port of one upstream member, named as the replica set names it; repeatable (env BLACKPIPE_MEMBER_PORTS, comma-separated). A host that is no member is warned of at start.")
    List<String> memberPorts;

    @Option(names = "--simulate-members", paramLabel = "N", defaultValue = "${env:BLACKPIPE_SIMULATE_MEMBERS:-0}",
            description = "Present a replica set of N members (2-7) over a single upstream node, so failover can be simulated (env BLACKPIPE_SIMULATE_MEMBERS).")
    int simulateMembers;

    @Option(names = "--connect-timeout-ms", defaultValue = "${env:BLACKPIPE_CONNECT_TIMEOUT_MS:-5000}",
            description = "Timeout for connecting to upstream members (env BLACKPIPE_CONNECT_TIMEOUT_MS; default 5000).")
    int connectTimeoutMillis;

    @Option(names = "--tls-cert", paramLabel = "FILE", defaultValue = "${env:BLACKPIPE_TLS_CERT}", converter = OptionalPath.class,
            description = "PEM certificate (chain) of the listeners: apps must connect with TLS; needs --tls-key (env BLACKPIPE_TLS_CERT).")
    Path tlsCert;

    @Option(names = "--tls-key", paramLabel = "FILE", defaultValue = "${env:BLACKPIPE_TLS_KEY}", converter = OptionalPath.class,
            description = "PEM private key (PKCS#8, unencrypted) of --tls-cert (env BLACKPIPE_TLS_KEY).")
    Path tlsKey;

    @Option(names = "--tls-client-ca", paramLabel = "FILE", defaultValue = "${env:BLACKPIPE_TLS_CLIENT_CA}", converter = OptionalPath.class,
            description = "PEM CA certificate(s): apps must present a client certificate signed by one of them (env BLACKPIPE_TLS_CLIENT_CA).")
    Path tlsClientCa;

    @Option(names = "--max-connections", paramLabel = "N", defaultValue = "${env:BLACKPIPE_MAX_CONNECTIONS:-0}",
            description = "Most client connections open at once across all members; more are closed on accept (env BLACKPIPE_MAX_CONNECTIONS; default 0: unlimited).")
    int maxConnections;

    /** @throws IllegalArgumentException naming the option that is wrong */
    ProxyConfig toConfig(String upstream) {
        if (connectTimeoutMillis <= 0) {
            throw new IllegalArgumentException("--connect-timeout-ms must be positive, got " + connectTimeoutMillis);
        }
        String why = AdminToken.whyUnsendable(adminToken);
        if (why != null) { // else the proxy starts, and answers every request 401
            throw new IllegalArgumentException("--admin-token " + why);
        }
        checkBindable("--host", host);
        if (adminPort >= 0) {
            checkBindable("--admin-host", adminHost);
        }
        if (advertiseHost != null && !advertiseHost.isBlank() && HostNames.whyNotAHostName(advertiseHost) != null) {
            throw new IllegalArgumentException("--advertise-host '" + advertiseHost + "' " + HostNames.whyNotAHostName(advertiseHost));
        }
        if (simulateMembers > 0 && port > 0 && port + simulateMembers - 1 > 65535) { // else the start fails at the last listener
            throw new IllegalArgumentException("--port " + port + " leaves no room for --simulate-members " + simulateMembers
                    + ": their listeners take ports " + port + "-" + (port + simulateMembers - 1) + ", past 65535");
        }
        return new ProxyConfig(UpstreamUri.parse(upstream), host, port, advertiseHost, adminHost, adminPort,
                memberPorts(), connectTimeoutMillis).withSimulatedMembers(simulateMembers)
                .withListenerTls(listenerTls()).withMaxConnections(maxConnections);
    }

    /** A host to bind must be an IP address or a name that resolves (999.1.1.1 is neither). */
    private static void checkBindable(String option, String host) {
        if (host != null && !host.isBlank() && new InetSocketAddress(host, 0).isUnresolved()) {
            throw new IllegalArgumentException(option + " '" + host + "' is neither an IP address nor a host name that resolves");
        }
    }

    private ProxyConfig.ListenerTls listenerTls() {
        if (tlsCert == null && tlsKey == null) {
            if (tlsClientCa != null) {
                throw new IllegalArgumentException("--tls-client-ca needs --tls-cert and --tls-key (TLS on the listeners)");
            }
            return null;
        }
        if (tlsCert == null || tlsKey == null) {
            String given = tlsCert == null ? "--tls-key" : "--tls-cert"; // named first: the error is about it, and its variable if it set it
            throw new IllegalArgumentException(given + " and " + (tlsCert == null ? "--tls-cert" : "--tls-key") + " go together; got only " + given);
        }
        return new ProxyConfig.ListenerTls(tlsCert, tlsKey, tlsClientCa);
    }

    private Map<MemberAddress, Integer> memberPorts() {
        Map<MemberAddress, Integer> pinned = new LinkedHashMap<>();
        if (memberPorts == null) {
            return pinned;
        }
        for (String entry : memberPorts) {
            if (entry.isBlank()) {
                continue;
            }
            int eq = entry.lastIndexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("--member-port '" + entry + "' must be HOST:PORT=N");
            }
            int listenPort;
            try {
                listenPort = Integer.parseInt(entry.substring(eq + 1));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("--member-port '" + entry + "': '" + entry.substring(eq + 1) + "' is not a port number");
            }
            if (listenPort < 1 || listenPort > 65535) {
                throw new IllegalArgumentException("--member-port '" + entry + "': port " + listenPort + " is out of range 1-65535");
            }
            try {
                pinned.put(MemberAddress.parse(entry.substring(0, eq)), listenPort);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--member-port '" + entry + "': " + e.getMessage(), e);
            }
        }
        return pinned;
    }
}
