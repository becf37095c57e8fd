package io.blackpipe.bench;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** What the numbers were measured on. */
final class Machine {
    private Machine() {
    }

    static String javaBinary() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /** nproc, CPU model, memory, java -version, kernel, date, load average. */
    static Map<String, String> describe() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("date", ZonedDateTime.now().format(DateTimeFormatter.ISO_OFFSET_DATE_TIME));
        m.put("nproc", String.valueOf(Runtime.getRuntime().availableProcessors()));
        m.put("cpu", cpuModel());
        m.put("memory", memory());
        m.put("java", javaVersion());
        m.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version") + " " + System.getProperty("os.arch"));
        m.put("loadavg", loadAverage());
        return m;
    }

    static String loadAverage() {
        try {
            String[] parts = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return parts[0] + " " + parts[1] + " " + parts[2] + " (1/5/15 min)";
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    private static String cpuModel() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (line.startsWith("model name")) {
                    return line.substring(line.indexOf(':') + 1).trim();
                }
            }
        } catch (IOException ignored) {
            // not Linux
        }
        return System.getProperty("os.arch");
    }

    private static String memory() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
                if (line.startsWith("MemTotal:")) {
                    long kib = Long.parseLong(line.replaceAll("\\D+", ""));
                    return String.format("%.1f GiB", kib / 1024.0 / 1024.0);
                }
            }
        } catch (IOException | RuntimeException ignored) {
            // not Linux
        }
        return "unknown";
    }

    private static String javaVersion() {
        try {
            Process p = new ProcessBuilder(javaBinary(), "-version").redirectErrorStream(true).start();
            String out;
            try (InputStream in = p.getInputStream()) {
                out = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
            p.waitFor(10, TimeUnit.SECONDS);
            return String.join("; ", out.strip().lines().toList());
        } catch (IOException e) {
            return System.getProperty("java.vm.name") + " " + System.getProperty("java.version");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return System.getProperty("java.version");
        }
    }

    /** This process's soft limit of open files (/proc/self/limits), or Long.MAX_VALUE when unknown. */
    static long fdLimit() {
        try {
            List<String> lines = Files.readAllLines(Path.of("/proc/self/limits"));
            for (String line : lines) {
                if (line.startsWith("Max open files")) {
                    String soft = line.substring("Max open files".length()).trim().split("\\s+")[0];
                    return soft.equals("unlimited") ? Long.MAX_VALUE : Long.parseLong(soft);
                }
            }
        } catch (IOException | RuntimeException ignored) {
            // not Linux
        }
        return Long.MAX_VALUE;
    }

    static long openFds() {
        try (var fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.count();
        } catch (IOException e) {
            return 0;
        }
    }
}
