package io.blackpipe.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * CPU time spent by the proxy during a measured window, a cost that the machine's noise does not
 * blur the way it blurs throughput. For blackpipe (in this JVM): the CPU of every Java thread that
 * is neither a workload thread nor the wire responder ("bench-" threads), i.e. blackpipe's event
 * loops plus the driver's few background threads (the direct target shows that floor). For
 * HAProxy: its process's user + system time from /proc. GC and JIT threads are not Java threads
 * and are not counted.
 */
final class CpuMeter {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static final long CLOCK_TICK_NANOS = 10_000_000L; // USER_HZ is 100 on Linux

    private final long processPid;
    private final Map<Long, long[]> startByThread;
    private final long processStart;
    private final long[] machineStart;

    private CpuMeter(long processPid) {
        this.processPid = processPid;
        this.startByThread = processPid > 0 ? Map.of() : otherThreads();
        this.processStart = processPid > 0 ? processCpu(processPid) : 0;
        this.machineStart = machineCpu();
    }

    /** Starts measuring this JVM's non-bench threads, or the process {@code pid} when it is > 0. */
    static CpuMeter start(long pid) {
        return new CpuMeter(pid);
    }

    static boolean supported() {
        return THREADS.isThreadCpuTimeSupported();
    }

    /** CPU nanoseconds since {@link #start}. */
    long elapsedCpuNanos() {
        if (processPid > 0) {
            return processCpu(processPid) - processStart;
        }
        long total = 0;
        for (Map.Entry<Long, long[]> e : otherThreads().entrySet()) {
            total += e.getValue()[0] - startByThread.getOrDefault(e.getKey(), ZERO)[0];
        }
        return total;
    }

    /** Bytes allocated since {@link #start} by the same threads (blackpipe in this JVM only; -1 for a process). */
    long elapsedAllocatedBytes() {
        if (processPid > 0 || !(THREADS instanceof com.sun.management.ThreadMXBean)) {
            return -1;
        }
        long total = 0;
        for (Map.Entry<Long, long[]> e : otherThreads().entrySet()) {
            total += e.getValue()[1] - startByThread.getOrDefault(e.getKey(), ZERO)[1];
        }
        return total;
    }

    /**
     * The machine's busy CPU time since {@link #start} and the share of all its CPUs that was not
     * idle, from /proc/stat (every process: driver, proxy, upstream, anything else running); null
     * where unknown. Time the hypervisor gave to another guest (steal) counts in the share, since
     * it was not there to use, but not as CPU time spent.
     */
    MachineUse machine() {
        long[] now = machineCpu();
        if (machineStart == null || now == null || now[2] <= machineStart[2]) {
            return null;
        }
        long busy = now[0] - machineStart[0];
        long steal = now[1] - machineStart[1];
        return new MachineUse(busy * CLOCK_TICK_NANOS, (busy + steal) / (double) (now[2] - machineStart[2]));
    }

    record MachineUse(long busyCpuNanos, double busyShare) {
    }

    private static final long[] ZERO = {0, 0};

    /** CPU nanoseconds and allocated bytes of every Java thread but the benchmark's own. */
    private static Map<Long, long[]> otherThreads() {
        Map<Long, long[]> cpu = new HashMap<>();
        long[] ids = THREADS.getAllThreadIds();
        ThreadInfo[] infos = THREADS.getThreadInfo(ids);
        for (int i = 0; i < ids.length; i++) {
            if (infos[i] == null || infos[i].getThreadName().startsWith("bench-") || ids[i] == Thread.currentThread().getId()) {
                continue;
            }
            long nanos = THREADS.getThreadCpuTime(ids[i]);
            long allocated = THREADS instanceof com.sun.management.ThreadMXBean sun
                    ? sun.getThreadAllocatedBytes(ids[i]) : 0;
            if (nanos >= 0) {
                cpu.put(ids[i], new long[] {nanos, Math.max(allocated, 0)});
            }
        }
        return cpu;
    }

    /** Busy, stolen and total clock ticks of all CPUs: the first line of /proc/stat. */
    private static long[] machineCpu() {
        try {
            String first = Files.readAllLines(Path.of("/proc/stat")).get(0);
            String[] f = first.trim().split("\\s+");
            // cpu user nice system idle iowait irq softirq steal (guest time is inside user)
            long busy = Long.parseLong(f[1]) + Long.parseLong(f[2]) + Long.parseLong(f[3]) + Long.parseLong(f[6])
                    + Long.parseLong(f[7]);
            long steal = Long.parseLong(f[8]);
            return new long[] {busy, steal, busy + steal + Long.parseLong(f[4]) + Long.parseLong(f[5])};
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private static long processCpu(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", String.valueOf(pid), "stat"));
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            // after "pid (comm) ": state is field 3, utime field 14, stime field 15 (1-based, whole line)
            return (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) * CLOCK_TICK_NANOS;
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }
}
