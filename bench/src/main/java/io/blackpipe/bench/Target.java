package io.blackpipe.bench;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.connection.ServerMonitoringMode;
import io.blackpipe.admin.AdminServer;
import io.blackpipe.fault.Rule;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.Document;

/** One way for the driver to reach the upstream, with its own MongoClient (one pool for every thread count). */
final class Target implements AutoCloseable {
    static final String DIRECT = "direct";
    static final String BLACKPIPE = "blackpipe";
    static final String RULES = "blackpipe+rules";
    static final String HAPROXY = "haproxy";
    static final String PROCESS = "blackpipe-process";
    static final String RELAY_NIO = "relay-nio";
    static final String RELAY_EPOLL = "relay-epoll";
    static final String RELAY_IO_URING = "relay-io_uring";
    static final String BLACKPIPE_DIRECT = "blackpipe-direct";
    /** What runs by default: the four targets of issue 7. */
    static final List<String> DEFAULT = List.of(DIRECT, BLACKPIPE, RULES, HAPROXY);
    /** What runs by default with --proxy-cpus: the targets whose proxy is a process of its own, which can be placed. */
    static final List<String> SPLIT_DEFAULT = List.of(DIRECT, PROCESS, HAPROXY);
    /**
     * Also available, for diagnosis: blackpipe as its own process (the CLI jar), placed as HAProxy
     * is; and a bare Netty relay in this JVM (NIO as blackpipe, or native epoll).
     */
    static final List<String> ALL = List.of(DIRECT, BLACKPIPE, RULES, HAPROXY, PROCESS, RELAY_NIO, RELAY_EPOLL,
            RELAY_IO_URING, BLACKPIPE_DIRECT);
    /** The JVM options ./blackpipe and the Docker image start blackpipe with when BLACKPIPE_JAVA_OPTS is unset. */
    static final String LAUNCHER_JAVA_OPTS = "-XX:+UseParallelGC";

    /**
     * Server monitoring by polling instead of streaming hellos: set for jongodb, which answers an
     * awaitable hello at once, so a streaming monitor would spin (a core's worth of hellos through
     * every target, counted as the proxy's CPU). Set once, before any target is made.
     */
    static volatile boolean pollServerMonitoring;

    /** Where the out-of-process proxies run ({@code --proxy-cpus}). Set once, before any target is made. */
    static volatile CpuPlacement placement = CpuPlacement.SHARED;

    final String id;
    final String description;
    final String connectionString;
    final MongoClient client;
    private final ProxyServer proxy;
    private final AdminServer admin;
    private final Haproxy haproxy;
    private final Process process;
    private NettyRelay relay;

    private Target(String id, String description, String connectionString, int poolSize, ProxyServer proxy,
                   AdminServer admin, Haproxy haproxy) {
        this(id, description, connectionString, poolSize, proxy, admin, haproxy, null);
    }

    private Target(String id, String description, String connectionString, int poolSize, ProxyServer proxy,
                   AdminServer admin, Haproxy haproxy, Process process) {
        this.id = id;
        this.process = process;
        this.description = description;
        this.connectionString = connectionString;
        this.proxy = proxy;
        this.admin = admin;
        this.haproxy = haproxy;
        MongoClientSettings settings = MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(connectionString))
                .applicationName("blackpipe-bench")
                .applyToConnectionPoolSettings(pool -> pool.maxSize(poolSize).maxWaitTime(30, TimeUnit.SECONDS))
                .applyToClusterSettings(cluster -> cluster.serverSelectionTimeout(15, TimeUnit.SECONDS))
                .applyToServerSettings(server -> {
                    if (pollServerMonitoring) {
                        server.serverMonitoringMode(ServerMonitoringMode.POLL);
                    }
                })
                .build();
        this.client = MongoClients.create(settings);
        client.getDatabase("admin").runCommand(new Document("ping", 1)); // fail here, not in the middle of a run
    }

    static Target direct(BenchUpstream upstream, int poolSize) {
        return new Target(DIRECT, "the driver straight to " + upstream.node, upstream.directUri(), poolSize, null, null, null);
    }

    static Target blackpipe(BenchUpstream upstream, int poolSize) {
        ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(upstream.proxiedUri));
        try {
            return new Target(BLACKPIPE, "blackpipe in-process, no rules (its connection string: replica set discovery through the proxy)",
                    proxy.connectionString(), poolSize, proxy, null, null);
        } catch (RuntimeException e) {
            proxy.close();
            throw e;
        }
    }

    /**
     * blackpipe with the driver in directConnection mode to the primary's listener, as the driver
     * reaches HAProxy and the relays: separates what the driver's replica-set mode costs from what
     * the proxy costs.
     */
    static Target blackpipeDirect(BenchUpstream upstream, int poolSize) {
        ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(upstream.proxiedUri));
        try {
            String primary = proxy.connectionString().replaceFirst("^mongodb://([^,/]+).*$", "$1");
            return new Target(BLACKPIPE_DIRECT, "blackpipe in-process, no rules, the driver in directConnection mode to " + primary,
                    "mongodb://" + primary + "/?directConnection=true", poolSize, proxy, null, null);
        } catch (RuntimeException e) {
            proxy.close();
            throw e;
        }
    }

    /**
     * blackpipe with {@code rules} rules loaded that never match the workload (each names a command
     * nobody sends, failCommands: ["cmd-i"]), the admin server up, and /metrics scraped at the end.
     */
    static Target blackpipeWithRules(BenchUpstream upstream, int poolSize, int rules) {
        ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(upstream.proxiedUri));
        AdminServer admin = null;
        try {
            List<Rule> loaded = new ArrayList<>();
            for (int i = 0; i < rules; i++) {
                loaded.add(proxy.ruleParser().parse("bench-" + i, BsonDocument.parse(
                        "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['cmd-" + i
                                + "'], errorCode: 91, appName: 'blackpipe-bench'}}")));
            }
            proxy.rules().putAll(loaded);
            admin = AdminServer.start(proxy, "127.0.0.1", 0);
            return new Target(RULES, "blackpipe in-process, " + proxy.rules().rules().size()
                    + " non-matching rules (failCommands: [\"cmd-<i>\"]), metrics served on /metrics",
                    proxy.connectionString(), poolSize, proxy, admin, null);
        } catch (RuntimeException e) {
            if (admin != null) {
                admin.close();
            }
            proxy.close();
            throw e;
        }
    }

    static Target haproxy(BenchUpstream upstream, int poolSize, String version) throws IOException, InterruptedException {
        Haproxy haproxy = Haproxy.start(upstream.node.host(), upstream.node.port(), placement);
        try {
            return new Target(HAPROXY, version + ", mode tcp, one frontend to " + upstream.node + " (directConnection=true)",
                    "mongodb://127.0.0.1:" + haproxy.port() + "/?directConnection=true", poolSize, null, null, haproxy);
        } catch (RuntimeException e) {
            haproxy.close();
            throw e;
        }
    }

    /**
     * blackpipe as users run it, in its own JVM with the JVM options ./blackpipe and the image give it
     * ({@code BLACKPIPE_JAVA_OPTS}, else {@value #LAUNCHER_JAVA_OPTS}): {@code java ... -jar
     * blackpipe.jar proxy --port 0 ...}, its connection string read from the banner. Not one of issue
     * 7's targets; it separates what blackpipe costs from what sharing the harness JVM (GC, safepoints,
     * JIT) costs, and its CPU is the whole process's, GC and JIT included, as HAProxy's is.
     */
    static Target blackpipeProcess(BenchUpstream upstream, int poolSize, Path jar) throws IOException {
        Path log = Files.createTempFile("blackpipe-bench-process-", ".log");
        List<String> command = launcherCommand(jar, "proxy", "--upstream", upstream.proxiedUri,
                "--host", "127.0.0.1", "--port", "0", "--admin-port", "-1");
        Process process = new ProcessBuilder(command).redirectError(log.toFile()).start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            String line;
            while ((line = out.readLine()) != null) {
                if (line.startsWith(StartupTime.READY_PREFIX)) {
                    String uri = line.substring(StartupTime.READY_PREFIX.length()).trim();
                    Thread drain = new Thread(() -> {
                        try {
                            out.transferTo(java.io.Writer.nullWriter());
                        } catch (IOException ignored) {
                            // the process ended
                        }
                    }, "bench-drain");
                    drain.setDaemon(true);
                    drain.start();
                    return new Target(PROCESS, "blackpipe as its own process, as ./blackpipe runs it: " + String.join(" ", command),
                            uri, poolSize, null, null, null, process);
                }
            }
            throw new IOException("blackpipe exited without printing its connection string: " + Files.readString(log).strip());
        } catch (IOException | RuntimeException e) {
            process.destroyForcibly();
            throw e;
        }
    }

    /**
     * {@code java [options] -jar jar args...} with the JVM options ./blackpipe and the image use:
     * {@code BLACKPIPE_JAVA_OPTS} when set (empty: none), else {@value #LAUNCHER_JAVA_OPTS}; under
     * taskset on the proxies' CPUs with {@code --proxy-cpus}.
     */
    static List<String> launcherCommand(Path jar, String... args) {
        String javaOpts = System.getenv().getOrDefault("BLACKPIPE_JAVA_OPTS", LAUNCHER_JAVA_OPTS).trim();
        List<String> command = new ArrayList<>();
        command.add(Machine.javaBinary());
        if (!javaOpts.isEmpty()) {
            command.addAll(List.of(javaOpts.split("\\s+")));
        }
        command.add("-jar");
        command.add(jar.toString());
        command.addAll(List.of(args));
        return placement.wrap(command);
    }

    static Target relay(BenchUpstream upstream, int poolSize, String transport) {
        NettyRelay relay = NettyRelay.start(transport, upstream.node.host(), upstream.node.port());
        try {
            Target target = new Target("relay-" + transport, "a bare Netty relay in this JVM (" + transport
                    + " transport, nothing parsed; diagnostic baseline) to " + upstream.node + " (directConnection=true)",
                    "mongodb://127.0.0.1:" + relay.port() + "/?directConnection=true", poolSize, null, null, null);
            target.relay = relay;
            return target;
        } catch (RuntimeException e) {
            relay.close();
            throw e;
        }
    }

    /** Whose CPU counts as the proxy's: the HAProxy or blackpipe process, or (0) this JVM's threads other than the benchmark's own. */
    long cpuPid() {
        return haproxy != null ? haproxy.pid() : process != null ? process.pid() : 0;
    }

    /** For the rules target: what /metrics says (attempts counted, faults injected), proving the meters ran. */
    String scrapeMetrics() {
        if (admin == null) {
            return null;
        }
        try {
            HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + admin.port() + "/metrics"))
                    .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
            double attempts = sum(response.body(), "blackpipe_command_attempts_total");
            double faults = sum(response.body(), "blackpipe_faults_injected_total");
            return String.format("/metrics scraped (HTTP %d, %,d bytes): %,.0f command attempts counted, %,.0f faults injected, %d rules loaded",
                    response.statusCode(), response.body().length(), attempts, faults, proxy.rules().rules().size());
        } catch (IOException e) {
            return "/metrics scrape failed: " + e.getMessage();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "/metrics scrape interrupted";
        }
    }

    private static double sum(String exposition, String name) {
        double total = 0;
        for (String line : exposition.lines().toList()) {
            if (line.startsWith(name + "{") || line.startsWith(name + " ")) {
                total += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return total;
    }

    @Override
    public void close() {
        client.close();
        if (admin != null) {
            admin.close();
        }
        if (proxy != null) {
            proxy.close();
        }
        if (haproxy != null) {
            haproxy.close();
        }
        if (relay != null) {
            relay.close();
        }
        if (process != null) {
            process.destroy();
            try {
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
