package io.blackpipe.bench;

import io.blackpipe.bench.Workloads.Workload;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** The harness's command line (bench/run --help lists it: {@link Bench}). */
final class BenchOptions {
    final List<String> rawArgs = new ArrayList<>();
    boolean help;
    String upstream = "fast";
    int rounds = 3;
    double duration = 1.5;
    double warmup = 0.5;
    List<Integer> threads = List.of(1, 16, 64);
    List<Workload> workloads = List.of(Workload.values());
    List<String> targets = Target.DEFAULT;
    boolean targetsGiven;
    /** --proxy-cpus: a CPU list for the out-of-process proxies (null: every target shares every CPU). */
    String proxyCpus;
    int rules = 1000;
    int bigDocs = 100_000;
    int batchSize = 1000;
    int responderThreads = 2;
    int idleConnections = 10_000;
    int startupRuns = 5;
    Path blackpipeJar = Path.of("proxy", "target", "blackpipe.jar");
    Path out = Path.of("bench");
    String note;

    static BenchOptions parse(String[] args) {
        BenchOptions o = new BenchOptions();
        o.rawArgs.addAll(List.of(args));
        for (int i = 0; i < args.length; i++) {
            String flag = args[i];
            if (flag.equals("-h") || flag.equals("--help")) {
                o.help = true;
                continue;
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(flag.startsWith("--") ? flag + " needs a value" : "unknown argument '" + flag + "'");
            }
            String value = args[++i];
            try {
                switch (flag) {
                    case "--upstream" -> o.upstream = value;
                    case "--rounds" -> o.rounds = positive(flag, Integer.parseInt(value));
                    case "--duration" -> o.duration = Double.parseDouble(value);
                    case "--warmup" -> o.warmup = Double.parseDouble(value);
                    case "--threads" -> o.threads = list(value).stream().map(Integer::parseInt).map(t -> positive(flag, t)).toList();
                    case "--workloads" -> o.workloads = list(value).stream().map(Workload::of).toList();
                    case "--targets" -> {
                        o.targets = list(value);
                        o.targetsGiven = true;
                        for (String t : o.targets) {
                            if (!Target.ALL.contains(t)) {
                                throw new IllegalArgumentException("unknown target '" + t + "' (" + String.join(", ", Target.ALL) + ")");
                            }
                        }
                    }
                    case "--rules" -> o.rules = Integer.parseInt(value);
                    case "--big-docs" -> o.bigDocs = positive(flag, Integer.parseInt(value));
                    case "--batch-size" -> o.batchSize = positive(flag, Integer.parseInt(value));
                    case "--responder-threads" -> o.responderThreads = positive(flag, Integer.parseInt(value));
                    case "--idle-connections" -> o.idleConnections = Integer.parseInt(value);
                    case "--startup-runs" -> o.startupRuns = Integer.parseInt(value);
                    case "--blackpipe-jar" -> o.blackpipeJar = Path.of(value);
                    case "--out" -> o.out = value.equals("-") ? null : Path.of(value);
                    case "--note" -> o.note = value;
                    case "--proxy-cpus" -> {
                        CpuPlacement.parseList(value); // refused here, named, rather than after the upstream started
                        o.proxyCpus = value;
                    }
                    default -> throw new IllegalArgumentException("unknown option '" + flag + "'");
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(flag + ": '" + value + "' is not a number");
            }
        }
        if (o.duration <= 0 || o.warmup < 0) {
            throw new IllegalArgumentException("--duration must be > 0 and --warmup >= 0");
        }
        if (!o.upstream.equals("fast") && !o.upstream.equals("jongodb") && !o.upstream.startsWith("mongodb://")
                && !o.upstream.startsWith("mongodb+srv://")) {
            throw new IllegalArgumentException("--upstream must be fast, jongodb or a mongodb:// or mongodb+srv:// URI, got '"
                    + o.upstream + "'");
        }
        if (o.proxyCpus != null) {
            o.targets = proxiesOnTheirOwnCpus(o);
        }
        return o;
    }

    /**
     * With --proxy-cpus only what runs as its own process can be placed: HAProxy and
     * blackpipe-process (the default then); an in-process target would share the harness's CPUs.
     */
    private static List<String> proxiesOnTheirOwnCpus(BenchOptions o) {
        if (!o.targetsGiven) {
            return Target.SPLIT_DEFAULT;
        }
        for (String t : o.targets) {
            if (!Target.SPLIT_DEFAULT.contains(t)) {
                throw new IllegalArgumentException("--proxy-cpus places only the proxies that run as their own process ("
                        + String.join(", ", Target.SPLIT_DEFAULT) + "); target '" + t + "' runs in the harness's JVM, on its CPUs");
            }
        }
        return o.targets;
    }

    private static List<String> list(String value) {
        return List.of(value.split(",")).stream().map(String::trim).filter(s -> !s.isEmpty()).toList();
    }

    private static int positive(String flag, int value) {
        if (value <= 0) {
            throw new IllegalArgumentException(flag + " must be positive");
        }
        return value;
    }
}
