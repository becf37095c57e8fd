package io.blackpipe.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A helper JVM (the benchmark's own main in another mode), talked to by lines: commands on its
 * stdin, answers on its stdout. Started through {@code bash -c 'ulimit -n N; exec java ...'} so its
 * file descriptor limit can be raised where the system allows it.
 */
final class ChildProcess implements AutoCloseable {
    private final String name;
    private final Process process;
    private final PrintWriter in;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final Path stderr;

    private ChildProcess(String name, Process process, Path stderr) {
        this.name = name;
        this.process = process;
        this.stderr = stderr;
        this.in = new PrintWriter(process.getOutputStream(), true, StandardCharsets.UTF_8);
        Thread reader = new Thread(() -> {
            try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = out.readLine()) != null) {
                    lines.add(line);
                }
            } catch (IOException ignored) {
                // the child is gone
            }
        }, "bench-child-" + name);
        reader.setDaemon(true);
        reader.start();
    }

    /** Starts {@code java [jvmArgs] -cp <this classpath> io.blackpipe.bench.Bench <args>} with {@code ulimit -n fdLimit}. */
    static ChildProcess start(String name, int fdLimit, List<String> jvmArgs, List<String> args) throws IOException {
        StringBuilder command = new StringBuilder();
        // Raise the soft limit as far as asked, else to the hard limit; the JVM reports what it got.
        command.append("ulimit -n ").append(fdLimit).append(" 2>/dev/null || ulimit -n \"$(ulimit -Hn)\" 2>/dev/null; exec ");
        List<String> java = new ArrayList<>();
        java.add(Machine.javaBinary());
        java.addAll(jvmArgs);
        java.add("-cp");
        java.add(System.getProperty("java.class.path"));
        java.add(Bench.class.getName());
        java.addAll(args);
        for (String word : java) {
            command.append(quote(word)).append(' ');
        }
        Path stderr = Files.createTempFile("blackpipe-bench-" + name + "-", ".log");
        Process process = new ProcessBuilder("bash", "-c", command.toString())
                .redirectError(stderr.toFile()).start();
        return new ChildProcess(name, process, stderr);
    }

    private static String quote(String word) {
        return "'" + word.replace("'", "'\\''") + "'";
    }

    /** Sends a command and waits for the answer line that starts with {@code prefix}. */
    String ask(String command, String prefix, long timeoutSeconds) throws IOException, InterruptedException {
        in.println(command);
        return await(prefix, timeoutSeconds);
    }

    String await(String prefix, long timeoutSeconds) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        while (true) {
            long left = deadline - System.nanoTime();
            String line = left > 0 ? lines.poll(Math.min(left, TimeUnit.MILLISECONDS.toNanos(200)), TimeUnit.NANOSECONDS) : null;
            if (line != null && line.startsWith(prefix)) {
                return line;
            }
            if (line == null && (!process.isAlive() || left <= 0)) {
                throw new IOException(name + (process.isAlive() ? " did not answer '" + prefix + "' within " + timeoutSeconds + " s"
                        : " exited with " + process.exitValue()) + stderrTail());
            }
        }
    }

    private String stderrTail() {
        try {
            List<String> all = Files.readAllLines(stderr);
            return all.isEmpty() ? "" : "; its stderr ends: " + String.join(" | ", all.subList(Math.max(0, all.size() - 5), all.size()));
        } catch (IOException e) {
            return "";
        }
    }

    /** A field of an answer line: "name=value". */
    static long field(String line, String field) {
        for (String part : line.split(" ")) {
            if (part.startsWith(field + "=")) {
                return Long.parseLong(part.substring(field.length() + 1));
            }
        }
        throw new IllegalArgumentException("no " + field + "= in '" + line + "'");
    }

    @Override
    public void close() {
        in.println("quit");
        in.close();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroy();
                if (!process.waitFor(5, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
        try {
            Files.deleteIfExists(stderr);
        } catch (IOException ignored) {
            // a temp file left behind is harmless
        }
    }
}
