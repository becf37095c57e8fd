package io.blackpipe.bench;

import io.blackpipe.bench.Workloads.Result;
import io.blackpipe.bench.Workloads.Workload;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Medians, ratios, the PASS/MISS lines of issue 7's targets, the text table and RESULTS.md (the JSON: {@link ReportJson}). */
final class Report {
    static final String NOTES_MARKER = "<!-- Everything below this line is kept when the harness rewrites this file. -->";

    record Cell(Workload workload, int threads) {
        String label() {
            return workload.id + " x" + threads;
        }
    }

    /** One target in one cell, over the rounds. */
    record Summary(double opsPerSec, double p50Micros, double p99Micros, double ratio, double ratioMin, double ratioMax,
                   double addedP50Micros, long errors, String firstError, double cpuMicrosPerOp, double allocBytesPerOp,
                   double machineCpuMicrosPerOp, double machineBusyShare) {
    }

    record Check(String target, String what, String value, String limit, Boolean pass) {
        String line() {
            String verdict = pass == null ? "SKIP" : pass ? "PASS" : "MISS";
            return String.format("%-4s  %-52s %s  (target: %s)", verdict, target + ": " + what, value, limit);
        }
    }

    private final Map<Cell, Map<String, List<Result>>> runs = new LinkedHashMap<>();
    private final List<String> targets;
    final Map<String, String> targetDescriptions = new LinkedHashMap<>();
    final List<String> remarks = new ArrayList<>();
    IdleConnections.Result idle;
    String idleError;
    StartupTime.Result startup;
    String startupError;
    /** --proxy-cpus: the proxies ran on CPUs of their own, so they took none of direct's CPU budget. */
    boolean proxiesOnTheirOwnCpus;

    Report(List<String> targets) {
        this.targets = targets;
    }

    void add(Cell cell, String target, Result result) {
        runs.computeIfAbsent(cell, c -> new LinkedHashMap<>()).computeIfAbsent(target, t -> new ArrayList<>()).add(result);
    }

    /** The results of every round of one target in one cell, in the order they ran. */
    List<Result> rounds(Cell cell, String target) {
        return runs.get(cell).get(target);
    }

    List<String> targets() {
        return targets;
    }

    List<Cell> cells() {
        return new ArrayList<>(runs.keySet());
    }

    boolean has(String target) {
        return runs.values().stream().anyMatch(m -> m.containsKey(target));
    }

    Summary summary(Cell cell, String target) {
        List<Result> mine = runs.getOrDefault(cell, Map.of()).get(target);
        if (mine == null || mine.isEmpty()) {
            return null;
        }
        List<Result> direct = runs.get(cell).get(Target.DIRECT);
        List<Double> ops = new ArrayList<>();
        List<Double> p50 = new ArrayList<>();
        List<Double> p99 = new ArrayList<>();
        List<Double> ratios = new ArrayList<>();
        List<Double> added = new ArrayList<>();
        List<Double> cpu = new ArrayList<>();
        List<Double> alloc = new ArrayList<>();
        List<Double> machineCpu = new ArrayList<>();
        List<Double> machineBusy = new ArrayList<>();
        long errors = 0;
        String firstError = null;
        for (int r = 0; r < mine.size(); r++) {
            Result x = mine.get(r);
            ops.add(x.opsPerSec());
            p50.add(x.p50Micros());
            p99.add(x.p99Micros());
            cpu.add(x.proxyCpuMicrosPerOp());
            alloc.add(x.proxyAllocBytesPerOp());
            machineCpu.add(x.machineCpuMicrosPerOp());
            machineBusy.add(x.machineBusyShare());
            errors += x.errors();
            firstError = firstError != null ? firstError : x.firstError();
            if (direct != null && r < direct.size()) {
                // Paired by round: the targets of a round ran back to back, so the machine's drift cancels.
                ratios.add(x.opsPerSec() / direct.get(r).opsPerSec());
                added.add(x.p50Micros() - direct.get(r).p50Micros());
            }
        }
        return new Summary(Stats.median(ops), Stats.median(p50), Stats.median(p99), Stats.median(ratios),
                Stats.min(ratios), Stats.max(ratios), Stats.median(added), errors, firstError, Stats.median(cpu),
                Stats.median(alloc), Stats.median(machineCpu), Stats.median(machineBusy));
    }

    /**
     * Target {@code a}'s throughput over target {@code b}'s, round by round: the targets of a round ran
     * back to back, so this compares them without the drift between rounds (or direct's own noise,
     * which the two ratios to direct each carry). Null when either did not run in the cell.
     */
    record Paired(double median, double min, double max, int roundsAtLeastEven, int rounds) {
        String describe(String a, String b) {
            return String.format("%s/%s per round %.3f [%.2f-%.2f], >= 1 in %d of %d", a, b, median, min, max,
                    roundsAtLeastEven, rounds);
        }
    }

    Paired paired(Cell cell, String a, String b) {
        List<Result> first = runs.getOrDefault(cell, Map.of()).get(a);
        List<Result> second = runs.getOrDefault(cell, Map.of()).get(b);
        if (first == null || second == null) {
            return null;
        }
        List<Double> ratios = new ArrayList<>();
        int atLeastEven = 0;
        for (int r = 0; r < Math.min(first.size(), second.size()); r++) {
            double ratio = first.get(r).opsPerSec() / second.get(r).opsPerSec();
            ratios.add(ratio);
            atLeastEven += ratio >= 1 ? 1 : 0;
        }
        return new Paired(Stats.median(ratios), Stats.min(ratios), Stats.max(ratios), atLeastEven, ratios.size());
    }

    // ---- the targets of issue 7 ----

    /**
     * What 0.95 of direct asks of a proxy's CPU. When direct keeps every CPU busy, the machine's
     * CPU per operation is its whole budget; a proxy that adds c to it leaves at most
     * budget / (budget + c) of direct's throughput, so 0.95 needs c <= budget * (1 / 0.95 - 1).
     * Printed beside the ratio with the CPU per op blackpipe and HAProxy used; empty where unknown.
     * Below 90% busy the machine had CPU to spare, and there is no budget to speak of.
     */
    static String cpuBudget(Summary direct, Summary blackpipe, Summary haproxy) {
        return cpuBudget(direct, blackpipe, haproxy, false);
    }

    static String cpuBudget(Summary direct, Summary blackpipe, Summary haproxy, boolean proxiesOnTheirOwnCpus) {
        if (proxiesOnTheirOwnCpus) {
            return " (the proxy on CPUs of its own: it took none of the driver's and the upstream's)";
        }
        if (direct == null || Double.isNaN(direct.machineCpuMicrosPerOp()) || Double.isNaN(direct.machineBusyShare())) {
            return "";
        }
        if (direct.machineBusyShare() < 0.9) {
            return String.format(" (direct left the machine %.0f%% idle: CPU was not what limited it)",
                    (1 - direct.machineBusyShare()) * 100);
        }
        String used = Double.isNaN(blackpipe.cpuMicrosPerOp()) ? "" : String.format(", blackpipe used %.2f", blackpipe.cpuMicrosPerOp())
                + (haproxy == null || Double.isNaN(haproxy.cpuMicrosPerOp()) ? "" : String.format(", HAProxy %.2f", haproxy.cpuMicrosPerOp()));
        return String.format(" (direct: the machine %.0f%% busy, %.1f us of CPU per op; 0.95 of it leaves a proxy <= %.2f us per op%s)",
                direct.machineBusyShare() * 100, direct.machineCpuMicrosPerOp(), direct.machineCpuMicrosPerOp() * (1 / 0.95 - 1), used);
    }

    /**
     * The row the targets read as blackpipe's: the in-process proxy, or blackpipe as its own process
     * where only that ran (--proxy-cpus).
     */
    String blackpipeRow() {
        return has(Target.BLACKPIPE) || !has(Target.PROCESS) ? Target.BLACKPIPE : Target.PROCESS;
    }

    List<Check> checks() {
        List<Check> checks = new ArrayList<>();
        boolean haproxy = has(Target.HAPROXY);
        String row = blackpipeRow();
        for (Cell cell : cells()) {
            Summary bp = summary(cell, row);
            Summary hap = summary(cell, Target.HAPROXY);
            if (bp == null) {
                continue;
            }
            if (haproxy && hap != null) {
                // The verdict compares the medians of the ratios to direct, as issue 7 states the target;
                // the rounds' head-to-head ratio beside it tells a steady gap from a toss-up.
                checks.add(new Check(cell.label(), "throughput ratio " + row + " >= HAProxy's",
                        String.format("%.3f vs %.3f (%s)", bp.ratio(), hap.ratio(),
                                paired(cell, row, Target.HAPROXY).describe(row, "HAProxy")),
                        ">= HAProxy's ratio to direct", bp.ratio() >= hap.ratio()));
            } else {
                checks.add(new Check(cell.label(), "throughput ratio " + row + " >= HAProxy's",
                        String.format("%.3f vs (no HAProxy)", bp.ratio()), ">= HAProxy's ratio to direct", null));
            }
        }
        for (Cell cell : cells()) {
            Summary bp = summary(cell, row);
            Summary hap = summary(cell, Target.HAPROXY);
            if (bp != null && hap != null && !Double.isNaN(bp.cpuMicrosPerOp()) && !Double.isNaN(hap.cpuMicrosPerOp())) {
                checks.add(new Check(cell.label(), "(extra) proxy CPU per op " + row + " <= HAProxy's",
                        String.format("%.2f vs %.2f us", bp.cpuMicrosPerOp(), hap.cpuMicrosPerOp()), "<= HAProxy's",
                        bp.cpuMicrosPerOp() <= hap.cpuMicrosPerOp()));
            }
        }
        for (Cell cell : cells()) {
            Summary proc = summary(cell, Target.PROCESS);
            Summary hap = summary(cell, Target.HAPROXY);
            if (proc != null && hap != null && !row.equals(Target.PROCESS)) { // else the lines above are its
                checks.add(new Check(cell.label(), "(extra) blackpipe-process ratio >= HAProxy's",
                        String.format("%.3f vs %.3f (%s)", proc.ratio(), hap.ratio(),
                                paired(cell, Target.PROCESS, Target.HAPROXY).describe("blackpipe-process", "HAProxy")),
                        ">= HAProxy's ratio to direct", proc.ratio() >= hap.ratio()));
            }
        }
        for (Cell cell : cells()) {
            Summary bp = summary(cell, row);
            if (bp != null && cell.threads() == 16 && cell.workload() != Workload.SCAN) {
                checks.add(new Check(cell.label(), "throughput " + row + " / direct",
                        String.format("%.3f", bp.ratio()) + cpuBudget(summary(cell, Target.DIRECT), bp, summary(cell, Target.HAPROXY), proxiesOnTheirOwnCpus),
                        ">= 0.95", bp.ratio() >= 0.95));
            }
        }
        for (Cell cell : cells()) {
            Summary bp = summary(cell, row);
            Summary hap = summary(cell, Target.HAPROXY);
            if (bp == null) {
                continue;
            }
            checks.add(new Check(cell.label(), "added p50 " + row + " <= HAProxy's",
                    hap == null ? String.format("%+.0f us vs (no HAProxy)", bp.addedP50Micros())
                            : String.format("%+.0f us vs %+.0f us", bp.addedP50Micros(), hap.addedP50Micros()),
                    "<= HAProxy's added p50", hap == null ? null : bp.addedP50Micros() <= hap.addedP50Micros()));
        }
        for (Cell cell : cells()) {
            Paired rules = paired(cell, Target.RULES, Target.BLACKPIPE);
            if (rules != null) {
                checks.add(new Check(cell.label(), "cost of the 1,000 rules (+metrics)", String.format("%.1f%%", (1 - rules.median()) * 100),
                        "<= 5%", 1 - rules.median() <= 0.05));
            }
        }
        if (idle != null) {
            double kib = idle.bytesPerConnection() / 1024;
            checks.add(new Check("idle", "heap per idle connection", String.format("%.1f KiB (%,d held)", kib, idle.held()),
                    "<= 50 KiB", kib <= 50));
        } else {
            checks.add(new Check("idle", "heap per idle connection", idleError == null ? "not measured" : "failed: " + idleError,
                    "<= 50 KiB", null));
        }
        if (startup != null) {
            checks.add(new Check("startup", "process start to listening (median)", String.format("%.0f ms", startup.medianMillis()),
                    "<= 1000 ms", startup.medianMillis() <= 1000));
        } else {
            checks.add(new Check("startup", "process start to listening (median)",
                    startupError == null ? "not measured" : "failed: " + startupError, "<= 1000 ms", null));
        }
        return checks;
    }

    // ---- text ----

    String table() {
        StringBuilder out = new StringBuilder();
        out.append(String.format("%-7s %4s  %-17s %12s %9s %9s  %-22s %8s %9s %9s %10s%n", "work", "thr", "target", "ops/s", "p50 us",
                "p99 us", "vs direct [min-max]", "+p50 us", "cpu us/op", "alloc B/op", "mach us/op"));
        for (Cell cell : cells()) {
            for (String target : targets) {
                Summary s = summary(cell, target);
                if (s == null) {
                    continue;
                }
                String ratio = target.equals(Target.DIRECT) ? "1" : String.format("%.3f [%.2f-%.2f]", s.ratio(), s.ratioMin(), s.ratioMax());
                String added = target.equals(Target.DIRECT) ? "" : String.format("%+.0f", s.addedP50Micros());
                String alloc = Double.isNaN(s.allocBytesPerOp()) || target.equals(Target.DIRECT) ? "" : String.format("%,.0f", s.allocBytesPerOp());
                String machine = Double.isNaN(s.machineCpuMicrosPerOp()) ? "" : String.format("%.1f", s.machineCpuMicrosPerOp());
                out.append(String.format("%-7s %4d  %-17s %,12.0f %9.0f %9.0f  %-22s %8s %9.2f %9s %10s%s%n", cell.workload().id, cell.threads(), target,
                        s.opsPerSec(), s.p50Micros(), s.p99Micros(), ratio, added, s.cpuMicrosPerOp(), alloc, machine,
                        s.errors() > 0 ? "  (" + s.errors() + " errors: " + s.firstError() + ")" : ""));
            }
        }
        return out.toString();
    }

    String checkLines() {
        StringBuilder out = new StringBuilder();
        for (Check check : checks()) {
            out.append(check.line()).append('\n');
        }
        return out.toString();
    }

    String idleText() {
        if (idle == null) {
            return idleError == null ? "not measured\n" : "failed: " + idleError + "\n";
        }
        StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, "%,d idle client connections held through blackpipe (requested %,d; connected in %.1f s)%n",
                idle.held(), idle.requested(), idle.connectSeconds()));
        out.append(String.format(Locale.ROOT, "proxy heap used after GC: %,d -> %,d bytes = %.1f KiB per connection "
                        + "(client + upstream channel, pipeline, handlers, meters)%n",
                idle.heapBefore(), idle.heapAfter(), idle.bytesPerConnection() / 1024));
        out.append(String.format(Locale.ROOT, "proxy pooled direct memory: %,d -> %,d bytes; proxy fd limit %,d%n",
                idle.directBefore(), idle.directAfter(), idle.proxyFdLimit()));
        if (idle.limitNote() != null) {
            out.append("NOTE ").append(idle.limitNote()).append('\n');
        }
        return out.toString();
    }

    String startupText() {
        if (startup == null) {
            return startupError == null ? "not measured\n" : "failed: " + startupError + "\n";
        }
        return String.format(Locale.ROOT, "`%s`%nstart to \"%s\" line: median %.0f ms (runs: %s)%n"
                        + "JVM floor (same jar, `--version`, to exit): median %.0f ms (runs: %s)%n",
                startup.command(), StartupTime.READY_PREFIX, startup.medianMillis(), millis(startup.runsMillis()),
                startup.jvmFloorMedianMillis(), millis(startup.jvmFloorMillis()));
    }

    private static String millis(List<Double> values) {
        List<String> parts = new ArrayList<>();
        for (double v : values) {
            parts.add(String.format(Locale.ROOT, "%.0f", v));
        }
        return String.join(", ", parts);
    }

    // ---- RESULTS.md ----

    void writeMarkdown(Path file, Map<String, String> machine, Map<String, String> settings, String upstream,
                       String commandLine) throws IOException {
        String kept = "";
        if (Files.exists(file)) {
            String old = Files.readString(file);
            int at = old.indexOf(NOTES_MARKER);
            if (at >= 0) {
                kept = old.substring(at + NOTES_MARKER.length());
            }
        }
        StringBuilder md = new StringBuilder();
        md.append("# blackpipe benchmark: latest result\n\n");
        md.append("Written by `").append(commandLine).append("` (the harness in `bench/`; see the README's Benchmark section). ")
                .append("Every run replaces everything above the notes marker.\n\n");
        md.append("## Machine\n\n");
        machine.forEach((k, v) -> md.append("- ").append(k).append(": ").append(v).append('\n'));
        md.append("\n## Setup\n\n");
        md.append("- upstream: ").append(upstream).append('\n');
        targetDescriptions.forEach((k, v) -> md.append("- target `").append(k).append("`: ").append(v).append('\n'));
        settings.forEach((k, v) -> md.append("- ").append(k).append(": ").append(v).append('\n'));
        for (String remark : remarks) {
            md.append("- ").append(remark).append('\n');
        }
        md.append("\n## Throughput and latency\n\n");
        md.append("Medians over the rounds. ops/s is operations per second (documents per second for `scan`); p50/p99 are per ")
                .append("operation (per getMore round trip for `scan`), in microseconds. \"vs direct\" is the median of the per-round ")
                .append("ratios to the direct target (the targets of a round run back to back), with their range; \"+p50\" is the ")
                .append("median per-round p50 added to direct's. \"cpu us/op\" is the proxy's CPU time per operation in the ")
                .append("measured window (a cost the machine's noise blurs less than throughput): HAProxy's process (user + system, ")
                .append("/proc), blackpipe's event loop threads (every Java thread of the harness JVM but the workload and responder ")
                .append("threads; the direct row shows that floor: the driver's background threads), GC and JIT not included. ")
                .append("\"alloc B/op\" is what those threads allocated per operation (in-JVM proxies only). \"mach us/op\" is ")
                .append("the whole machine's busy CPU time per operation (/proc/stat: driver, proxy, upstream and anything else ")
                .append("running); in the direct row, when the machine is saturated, it is the budget a proxy's CPU competes for.\n\n");
        md.append("```text\n").append(table()).append("```\n\n");
        md.append("## Targets of issue 7\n\n```text\n").append(checkLines()).append("```\n\n");
        md.append("## Idle connections\n\n```text\n").append(idleText()).append("```\n\n");
        md.append("## Time to listening\n\n").append(startupText().replace("\n", "  \n")).append('\n');
        md.append(NOTES_MARKER);
        md.append(kept.isEmpty() ? "\n\n## Notes\n\n" : kept);
        Files.writeString(file, md.toString());
    }
}
