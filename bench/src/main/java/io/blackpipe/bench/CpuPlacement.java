package io.blackpipe.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

/**
 * Where the proxies run ({@code --proxy-cpus}). Shared (the default): the driver, the upstream and
 * the proxy compete for every CPU, as on a developer's laptop. Split: the out-of-process proxies
 * (HAProxy, blackpipe-process) on CPUs of their own through {@code taskset}, the harness's JVM
 * (driver and in-process upstream) pinned to the rest, as a sidecar given its own cores: the
 * placement issue 7's "0.95 of direct" presumes.
 */
final class CpuPlacement {
    static final CpuPlacement SHARED = new CpuPlacement(null, null);

    private final SortedSet<Integer> proxyCpus;
    private final SortedSet<Integer> harnessCpus;

    private CpuPlacement(SortedSet<Integer> proxyCpus, SortedSet<Integer> harnessCpus) {
        this.proxyCpus = proxyCpus;
        this.harnessCpus = harnessCpus;
    }

    /**
     * The split placement: {@code proxyList} (a taskset list, "1" or "2-3,6") for the proxies, the
     * rest of {@code allowed} (the CPUs this process may use) for the harness.
     */
    static CpuPlacement split(String proxyList, SortedSet<Integer> allowed) {
        SortedSet<Integer> proxy = parseList(proxyList);
        SortedSet<Integer> outside = new TreeSet<>(proxy);
        outside.removeAll(allowed);
        if (!outside.isEmpty()) {
            throw new IllegalArgumentException("--proxy-cpus " + proxyList + " names CPU(s) " + format(outside)
                    + " this process may not use (it may use " + format(allowed) + ")");
        }
        SortedSet<Integer> rest = new TreeSet<>(allowed);
        rest.removeAll(proxy);
        if (rest.isEmpty()) {
            throw new IllegalArgumentException("--proxy-cpus " + proxyList + " leaves no CPU for the driver and the upstream (this process may use "
                    + format(allowed) + ")");
        }
        return new CpuPlacement(proxy, rest);
    }

    /** A CPU list as taskset and /proc write it: "0-3,6,8-9". Refuses anything else, naming it. */
    static SortedSet<Integer> parseList(String list) {
        SortedSet<Integer> cpus = new TreeSet<>();
        for (String part : list.split(",", -1)) {
            String[] range = part.trim().split("-", -1);
            try {
                int from = Integer.parseInt(range[0]);
                int to = range.length == 2 ? Integer.parseInt(range[1]) : from;
                if (range.length > 2 || from < 0 || to < from) {
                    throw new NumberFormatException();
                }
                for (int cpu = from; cpu <= to; cpu++) {
                    cpus.add(cpu);
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("'" + list + "' is not a CPU list (such as 1, 2-3 or 0,2): bad part '" + part + "'");
            }
        }
        return cpus;
    }

    static String format(SortedSet<Integer> cpus) {
        List<String> parts = new ArrayList<>();
        Integer start = null;
        Integer last = null;
        for (int cpu : cpus) {
            if (last != null && cpu == last + 1) {
                last = cpu;
                continue;
            }
            if (start != null) {
                parts.add(start.equals(last) ? String.valueOf(start) : start + "-" + last);
            }
            start = cpu;
            last = cpu;
        }
        if (start != null) {
            parts.add(start.equals(last) ? String.valueOf(start) : start + "-" + last);
        }
        return String.join(",", parts);
    }

    /** The CPUs a process may run on ({@code Cpus_allowed_list} of /proc/PID/status; "self" for this one). */
    static SortedSet<Integer> allowedCpus(String pid) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc", pid, "status"))) {
            if (line.startsWith("Cpus_allowed_list:")) {
                return parseList(line.substring(line.indexOf(':') + 1).trim());
            }
        }
        throw new IOException("/proc/" + pid + "/status has no Cpus_allowed_list");
    }

    boolean isSplit() {
        return proxyCpus != null;
    }

    /** {@code command} as a proxy is started: under {@code taskset -c <proxy CPUs>} when split. */
    List<String> wrap(List<String> command) {
        if (!isSplit()) {
            return command;
        }
        List<String> wrapped = new ArrayList<>(List.of("taskset", "-c", format(proxyCpus)));
        wrapped.addAll(command);
        return wrapped;
    }

    /**
     * Pins every thread of this JVM to the harness's CPUs; threads started later inherit it from
     * the thread that starts them. A no-op when shared.
     */
    void pinThisProcess() throws IOException, InterruptedException {
        if (!isSplit()) {
            return;
        }
        String pid = String.valueOf(ProcessHandle.current().pid());
        Process taskset = new ProcessBuilder("taskset", "-a", "-p", "-c", format(harnessCpus), pid)
                .redirectErrorStream(true).start();
        String out = new String(taskset.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        if (!taskset.waitFor(10, TimeUnit.SECONDS) || taskset.exitValue() != 0) {
            throw new IOException("taskset could not pin the harness to CPU(s) " + format(harnessCpus) + ": " + out);
        }
        SortedSet<Integer> now = allowedCpus("self");
        if (!now.equals(harnessCpus)) {
            throw new IOException("after taskset the harness may run on CPU(s) " + format(now) + ", not " + format(harnessCpus));
        }
    }

    /** For the report: where everything ran. */
    String describe() {
        if (!isSplit()) {
            return "shared: the driver, the upstream and every proxy on all of this process's CPUs";
        }
        return "split (--proxy-cpus): HAProxy and blackpipe-process on CPU(s) " + format(proxyCpus)
                + " (taskset), the harness's JVM (the driver, the in-process upstream) on CPU(s) " + format(harnessCpus);
    }
}
