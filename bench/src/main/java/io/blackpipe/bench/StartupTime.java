package io.blackpipe.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Time from process start to listening: {@code java -jar blackpipe.jar proxy --port 0 ...} as a
 * child process, with the JVM options ./blackpipe gives it ({@link Target#launcherCommand}),
 * timed from {@link ProcessBuilder#start()} until it prints its "connection string:" line, which
 * comes after discovery and after every listener is bound.
 */
final class StartupTime {
    static final String READY_PREFIX = "connection string:";

    record Result(List<Double> runsMillis, double medianMillis, List<Double> jvmFloorMillis, double jvmFloorMedianMillis,
                  String command) {
    }

    private StartupTime() {
    }

    static Result measure(Path jar, String upstreamUri, int runs) throws IOException, InterruptedException {
        List<String> command = Target.launcherCommand(jar, "proxy", "--upstream", upstreamUri,
                "--host", "127.0.0.1", "--port", "0", "--admin-port", "0");
        List<Double> times = new ArrayList<>();
        for (int i = 0; i < runs; i++) {
            times.add(untilListening(command));
        }
        // The floor: the same JVM and jar doing nothing but print its version.
        List<String> floorCommand = Target.launcherCommand(jar, "--version");
        List<Double> floor = new ArrayList<>();
        for (int i = 0; i < Math.max(1, Math.min(3, runs)); i++) {
            floor.add(untilExit(floorCommand));
        }
        return new Result(times, Stats.median(times), floor, Stats.median(floor), String.join(" ", command));
    }

    private static double untilListening(List<String> command) throws IOException, InterruptedException {
        Path stderr = Files.createTempFile("blackpipe-bench-startup-", ".log");
        long start = System.nanoTime();
        Process process = new ProcessBuilder(command).redirectError(stderr.toFile()).start();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = out.readLine()) != null) {
                if (line.startsWith(READY_PREFIX)) {
                    return (System.nanoTime() - start) / 1e6;
                }
            }
            throw new IOException("blackpipe exited (" + process.waitFor() + ") without printing '" + READY_PREFIX + "': "
                    + Files.readString(stderr).strip());
        } finally {
            process.destroy();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
            Files.deleteIfExists(stderr);
        }
    }

    private static double untilExit(List<String> command) throws IOException, InterruptedException {
        long start = System.nanoTime();
        Process process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IOException("'" + String.join(" ", command) + "' did not exit within 30 s");
        }
        return (System.nanoTime() - start) / 1e6;
    }
}
