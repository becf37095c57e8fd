package io.blackpipe.bench;

import io.blackpipe.bench.Report.Cell;
import io.blackpipe.bench.Workloads.Result;
import io.blackpipe.bench.Workloads.Workload;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The benchmark harness of issue 7: what blackpipe costs against the driver going direct and
 * against HAProxy in TCP mode, run interleaved (direct, blackpipe, blackpipe+rules, haproxy, and
 * again, for several rounds), plus idle connections and time to listening. Run it with
 * {@code ./bench/run}; {@code --help} lists the flags.
 */
public final class Bench {
    private static final String USAGE = """
            usage: bench/run [options]

            Measures what blackpipe costs: the real Java driver against a fast upstream, direct, through
            blackpipe (no rules; 1,000 non-matching rules + metrics) and through HAProxy (mode tcp), interleaved
            over rounds; then 10,000 idle connections through blackpipe and the time from process start to
            listening. Prints a table, the PASS/MISS lines of issue 7's targets, and writes RESULTS.md and
            results.json (latest run) to --out.

              --upstream fast|jongodb|URI   fast: the in-process wire responder (default); jongodb: the npm engine;
                                            URI: any mongodb:// deployment without auth (data in db blackpipe_bench)
              --rounds N                    rounds of every target x workload (default 3)
              --duration SECONDS            measured time per run (default 1.5)
              --warmup SECONDS              unmeasured time before each run (default 0.5)
              --threads LIST                client threads of the closed loops (default 1,16,64)
              --workloads LIST              find,insert,mix,scan (default all)
              --targets LIST                direct,blackpipe,blackpipe+rules,haproxy (the default; direct always runs), and
                                            for diagnosis: blackpipe-process (blackpipe in its own JVM via the CLI jar, as
                                            HAProxy runs), relay-nio / relay-epoll / relay-io_uring (a bare Netty relay in this JVM),
                                            blackpipe-direct (blackpipe, the driver in directConnection mode)
              --rules N                     rules of the blackpipe+rules target (default 1000)
              --big-docs N                  documents of the large collection (default 100000)
              --batch-size N                batch size of the scan (default 1000)
              --responder-threads N         event loop threads of the fast upstream (default 2)
              --idle-connections N          idle connections to hold (default 10000; 0 skips)
              --startup-runs N              runs of the start-to-listening measurement (default 5; 0 skips)
              --blackpipe-jar PATH          the CLI jar for the startup measurement (default proxy/target/blackpipe.jar)
              --out DIR                     where RESULTS.md and results.json go (default bench; --out - writes nothing)
              --note TEXT                   a remark recorded with the result (e.g. "machine busy with other builds")
              --proxy-cpus LIST             a sidecar with cores of its own: HAProxy and blackpipe-process run on these CPUs
                                            (taskset list: 1, 2-3), the driver and the upstream on the rest; the targets
                                            then default to direct,blackpipe-process,haproxy (in-process ones are refused)
            """;

    private Bench() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("responder")) {
            IdleConnections.serveResponder();
            return;
        }
        if (args.length > 1 && args[0].equals("idle-proxy")) {
            IdleConnections.serveProxy(args[1]);
            System.exit(0);
        }
        BenchOptions options;
        CpuPlacement placement = CpuPlacement.SHARED;
        try {
            options = BenchOptions.parse(args);
            if (options.proxyCpus != null) {
                placement = CpuPlacement.split(options.proxyCpus, CpuPlacement.allowedCpus("self"));
            }
        } catch (IllegalArgumentException e) {
            System.err.println("bench: " + e.getMessage());
            System.err.print(USAGE);
            System.exit(2);
            return;
        }
        if (options.help) {
            System.out.print(USAGE);
            return;
        }
        quietLogs();
        System.exit(run(options, placement));
    }

    /** Held strongly: java.util.logging keeps loggers weakly, and a collected one forgets its level. */
    private static final List<Logger> QUIETED = new ArrayList<>();

    /**
     * blackpipe logs each listener at INFO and the driver warns that SLF4J is absent; the benchmark
     * only wants blackpipe's warnings.
     */
    static void quietLogs() {
        for (String name : List.of("blackpipe", "io.netty")) {
            Logger logger = Logger.getLogger(name);
            logger.setLevel(Level.WARNING);
            QUIETED.add(logger);
        }
        for (String name : List.of("org.mongodb.driver", "com.mongodb")) {
            Logger logger = Logger.getLogger(name);
            logger.setLevel(Level.OFF);
            QUIETED.add(logger);
        }
    }

    private static int run(BenchOptions o, CpuPlacement placement) throws Exception {
        Map<String, String> machine = Machine.describe();
        String loadAtStart = machine.get("loadavg");
        machine.remove("loadavg");
        List<String> targetIds = new ArrayList<>();
        for (String t : Target.ALL) {
            if (t.equals(Target.DIRECT) || o.targets.contains(t)) {
                targetIds.add(t);
            }
        }
        Report report = new Report(targetIds);
        if (placement.isSplit()) {
            placement.pinThisProcess(); // before the upstream and the clients start their threads: they inherit it
            Target.placement = placement;
            report.proxiesOnTheirOwnCpus = true;
            System.out.println("bench: placement " + placement.describe());
        }
        if (o.note != null) {
            report.remarks.add(o.note);
        }
        Optional<String> haproxyVersion = Optional.empty();
        if (targetIds.contains(Target.HAPROXY)) {
            haproxyVersion = Haproxy.version();
            if (haproxyVersion.isEmpty()) {
                String line = "haproxy is not installed (no `haproxy -v` on PATH): the HAProxy baseline is SKIPPED. Install it with: "
                        + Haproxy.INSTALL_HINT;
                System.out.println("bench: " + line);
                report.remarks.add(line);
                targetIds.remove(Target.HAPROXY);
            }
        }
        int maxThreads = o.threads.stream().mapToInt(Integer::intValue).max().orElse(1);
        int poolSize = Math.max(maxThreads, 1) + 4;
        int userDocs = 1000;

        System.out.println("bench: machine " + machine.get("nproc") + " CPUs, " + machine.get("cpu") + ", " + machine.get("memory")
                + ", load average " + loadAtStart);
        BenchUpstream upstream = switch (o.upstream) {
            case "fast" -> BenchUpstream.fast(o.responderThreads, userDocs, o.bigDocs);
            case "jongodb" -> BenchUpstream.jongodb(userDocs, o.bigDocs);
            default -> BenchUpstream.uri(o.upstream, userDocs, o.bigDocs);
        };
        System.out.println("bench: upstream (" + upstream.kind + "): " + upstream.description);
        if (upstream.kind.equals("jongodb")) {
            Target.pollServerMonitoring = true;
            report.remarks.add("jongodb: every client monitors the server by polling (serverMonitoringMode=poll): "
                    + "jongodb answers awaitable hellos at once, so streaming monitoring would spin");
        }
        for (String tcpProxy : List.of(Target.HAPROXY, Target.RELAY_NIO, Target.RELAY_EPOLL, Target.RELAY_IO_URING)) {
            if (targetIds.contains(tcpProxy) && upstream.whyNoTcpProxy() != null) {
                String line = tcpProxy + " is SKIPPED with this upstream: " + upstream.whyNoTcpProxy();
                System.out.println("bench: " + line);
                report.remarks.add(line);
                targetIds.remove(tcpProxy);
            }
        }
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("rounds", String.valueOf(o.rounds));
        settings.put("measured per run", o.duration + " s after " + o.warmup + " s warm-up");
        settings.put("threads", o.threads.toString());
        settings.put("workloads", o.workloads.stream().map(w -> w.id + " (" + w.description + ")").toList().toString());
        settings.put("scan", o.bigDocs + " documents, batchSize " + o.batchSize + ", 1 thread");
        settings.put("client", "mongodb-driver-sync " + driverVersion() + ", one MongoClient per target, maxPoolSize " + poolSize);
        settings.put("netty leak detection", System.getProperty("io.netty.leakDetection.level", "simple (Netty's default)")
                + " in this JVM (bench/run sets it as the blackpipe CLI does)");
        settings.put("garbage collector", java.lang.management.ManagementFactory.getGarbageCollectorMXBeans().stream()
                .map(java.lang.management.GarbageCollectorMXBean::getName).toList()
                + " in this JVM (bench/run's default: ParallelGC, as ./blackpipe and the image run the proxy)");
        settings.put("placement", Target.placement.describe());
        settings.put("order", "per round, per workload and thread count: " + String.join(" ", targetIds));
        settings.put("load average at start", loadAtStart);

        try (upstream) {
            List<Target> targets = new ArrayList<>();
            try {
                for (String id : targetIds) {
                    Target target = switch (id) {
                        case Target.DIRECT -> Target.direct(upstream, poolSize);
                        case Target.BLACKPIPE -> Target.blackpipe(upstream, poolSize);
                        case Target.RULES -> Target.blackpipeWithRules(upstream, poolSize, o.rules);
                        case Target.HAPROXY -> Target.haproxy(upstream, poolSize, haproxyVersion.orElse("haproxy"));
                        case Target.PROCESS -> Target.blackpipeProcess(upstream, poolSize, o.blackpipeJar);
                        case Target.BLACKPIPE_DIRECT -> Target.blackpipeDirect(upstream, poolSize);
                        case Target.RELAY_NIO -> Target.relay(upstream, poolSize, "nio");
                        case Target.RELAY_IO_URING -> Target.relay(upstream, poolSize, "io_uring");
                        case Target.RELAY_EPOLL -> Target.relay(upstream, poolSize, "epoll");
                        default -> throw new IllegalStateException(id);
                    };
                    targets.add(target);
                    report.targetDescriptions.put(id, target.description + "; " + target.connectionString);
                    System.out.println("bench: target " + id + ": " + target.description + " <" + target.connectionString + ">");
                }
                long warmup = (long) (o.warmup * 1e9);
                long measure = (long) (o.duration * 1e9);

                // JIT and pools: every target through every workload once before anything is recorded.
                System.out.println("bench: warming up every target ...");
                for (Target target : targets) {
                    for (Workload w : o.workloads) {
                        if (w == Workload.SCAN) {
                            Workloads.scan(target.client, upstream.database, WireResponder.BIG, o.batchSize, 0, measure / 2, target.cpuPid());
                        } else {
                            Workloads.closedLoop(target.client, upstream.database, w, Math.min(16, maxThreads), userDocs, 0, measure,
                                    target.cpuPid());
                        }
                    }
                }

                List<Cell> cells = new ArrayList<>();
                for (Workload w : o.workloads) {
                    if (w == Workload.SCAN) {
                        cells.add(new Cell(w, 1));
                    } else {
                        o.threads.forEach(t -> cells.add(new Cell(w, t)));
                    }
                }
                long runs = (long) o.rounds * cells.size() * targets.size();
                System.out.printf("bench: %d runs (%d rounds x %d cells x %d targets), about %.0f s%n", runs, o.rounds, cells.size(),
                        targets.size(), runs * (o.warmup + o.duration + 0.1));
                for (int round = 1; round <= o.rounds; round++) {
                    for (Cell cell : cells) {
                        StringBuilder line = new StringBuilder(String.format("round %d  %-7s x%-3d", round, cell.workload().id, cell.threads()));
                        for (Target target : targets) {
                            Result r = cell.workload() == Workload.SCAN
                                    ? Workloads.scan(target.client, upstream.database, WireResponder.BIG, o.batchSize, warmup, measure,
                                            target.cpuPid())
                                    : Workloads.closedLoop(target.client, upstream.database, cell.workload(), cell.threads(), userDocs,
                                            warmup, measure, target.cpuPid());
                            report.add(cell, target.id, r);
                            line.append(String.format("  %s %,.0f/s p50 %.0fus cpu %.1fus", target.id, r.opsPerSec(), r.p50Micros(),
                                    r.proxyCpuMicrosPerOp()));
                            if (r.errors() > 0) {
                                line.append(" (").append(r.errors()).append(" errors: ").append(r.firstError()).append(')');
                            }
                        }
                        System.out.println(line);
                    }
                }
                for (Target target : targets) {
                    String scraped = target.scrapeMetrics();
                    if (scraped != null) {
                        report.remarks.add(target.id + ": " + scraped);
                        System.out.println("bench: " + target.id + ": " + scraped);
                    }
                }
                settings.put("load average at end of the throughput runs", Machine.loadAverage());
            } finally {
                for (Target target : targets) {
                    target.close();
                }
            }

            if (o.idleConnections > 0) {
                System.out.printf("bench: holding %,d idle connections through blackpipe ...%n", o.idleConnections);
                try {
                    report.idle = IdleConnections.measure(o.idleConnections, List.of());
                } catch (IOException | RuntimeException e) {
                    report.idleError = e.getMessage();
                }
                System.out.print(report.idleText());
            }
            if (o.startupRuns > 0) {
                System.out.println("bench: time from process start to listening (" + o.startupRuns + " runs) ...");
                if (!Files.isRegularFile(o.blackpipeJar)) {
                    report.startupError = o.blackpipeJar + " does not exist (build it: mvn -B -q -pl proxy package -DskipTests)";
                } else {
                    try {
                        report.startup = StartupTime.measure(o.blackpipeJar, upstream.proxiedUri, o.startupRuns);
                    } catch (IOException | RuntimeException e) {
                        report.startupError = e.getMessage();
                    }
                }
                System.out.print(report.startupText());
            }
        }

        System.out.println();
        System.out.println("upstream: " + upstream.description);
        System.out.print(report.table());
        System.out.println();
        System.out.println("Targets of issue 7 (read from the ratios above; nothing fails on them):");
        System.out.print(report.checkLines());
        if (o.out != null) {
            Files.createDirectories(o.out);
            report.writeMarkdown(o.out.resolve("RESULTS.md"), machine, settings, upstream.kind + ": " + upstream.description,
                    commandLine(o.rawArgs));
            Files.writeString(o.out.resolve("results.json"), ReportJson.of(report, machine, settings, upstream.kind + ": " + upstream.description));
            System.out.println("bench: wrote " + o.out.resolve("RESULTS.md") + " and " + o.out.resolve("results.json"));
        }
        return 0;
    }

    private static String driverVersion() {
        return com.mongodb.internal.build.MongoDriverVersion.VERSION;
    }

    /** The command line as it is worth repeating: bench/run's own --blackpipe-jar left out, a --note shortened. */
    private static String commandLine(List<String> args) {
        StringBuilder line = new StringBuilder("bench/run");
        for (int i = 0; i < args.size(); i++) {
            String arg = args.get(i);
            if (arg.equals("--blackpipe-jar") && i + 1 < args.size() && args.get(i + 1).equals("proxy/target/blackpipe.jar")) {
                i++;
                continue;
            }
            if (arg.equals("--note") && i + 1 < args.size()) {
                line.append(" --note '...'");
                i++;
                continue;
            }
            line.append(' ').append(arg.matches("[\\w./:=,+@-]+") ? arg : "'" + arg.replace("'", "'\\''") + "'");
        }
        return line.toString();
    }
}
