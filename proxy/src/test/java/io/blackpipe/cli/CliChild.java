package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.BindRetry;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** The CLI run as a child JVM from the test class path (no jar needed), its stdout read line by line. */
final class CliChild implements AutoCloseable {
    final Process process;
    final Path stderr;
    final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    final List<String> seen = new ArrayList<>();
    private final Thread reader;

    /** Starts {@code blackpipe args...} in {@code directory} with only {@code env} of the BLACKPIPE_* variables. */
    CliChild(Path temp, Path directory, Map<String, String> env, String... args) throws IOException {
        this(temp, directory, env, List.of(), args);
    }

    /** As above, the JVM started with {@code jvmOptions} (e.g. -Dname=value). */
    CliChild(Path temp, Path directory, Map<String, String> env, List<String> jvmOptions, String... args) throws IOException {
        this(Path.of(System.getProperty("java.home")), temp, directory, env, jvmOptions, args);
    }

    /** As above, run by the JVM in {@code javaHome} (another Java than this test's, e.g. a newer one). */
    CliChild(Path javaHome, Path temp, Path directory, Map<String, String> env, List<String> jvmOptions, String... args)
            throws IOException {
        this(List.of(), classPath(), javaHome, temp, directory, env, jvmOptions, args);
    }

    /**
     * As above, in a shell whose limit on open files ({@code ulimit -n}) is {@code openFiles}. The class directories go
     * into jars first, as the proxy runs from one: out of descriptors, a class read from a directory is a file to open,
     * and its loading failed (NoClassDefFoundError), where an open jar needs none.
     */
    static CliChild withOpenFileLimit(int openFiles, Path temp, Map<String, String> env, String... args) throws IOException {
        List<String> entries = new ArrayList<>();
        for (String entry : classPath().split(File.pathSeparator)) {
            entries.add(Files.isDirectory(Path.of(entry)) ? jarOf(Path.of(entry), temp).toString() : entry);
        }
        return new CliChild(List.of("sh", "-c", "ulimit -n " + openFiles + " && exec \"$0\" \"$@\""), String.join(File.pathSeparator, entries),
                Path.of(System.getProperty("java.home")), temp, null, env, List.of(), args);
    }

    private static Path jarOf(Path directory, Path temp) throws IOException {
        Path jar = Files.createTempFile(temp, "classes", ".jar");
        try (java.util.jar.JarOutputStream out = new java.util.jar.JarOutputStream(Files.newOutputStream(jar));
             java.util.stream.Stream<Path> files = Files.walk(directory)) {
            for (Path file : (Iterable<Path>) files.filter(Files::isRegularFile)::iterator) {
                out.putNextEntry(new java.util.jar.JarEntry(directory.relativize(file).toString().replace(File.separatorChar, '/')));
                Files.copy(file, out);
                out.closeEntry();
            }
        }
        return jar;
    }

    private CliChild(List<String> launcher, String classPath, Path javaHome, Path temp, Path directory, Map<String, String> env,
                     List<String> jvmOptions, String... args) throws IOException {
        List<String> command = new ArrayList<>(launcher);
        command.add(javaHome.resolve("bin/java").toString());
        command.addAll(jvmOptions);
        command.addAll(List.of("-cp", classPath, "io.blackpipe.cli.Main"));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).directory(directory == null ? null : directory.toFile());
        builder.environment().keySet().removeIf(name -> name.startsWith("BLACKPIPE_"));
        builder.environment().putAll(env);
        stderr = Files.createTempFile(temp, "child", ".err");
        builder.redirectError(stderr.toFile());
        builder.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        process = builder.start();
        reader = new Thread(() -> {
            try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = out.readLine()) != null) {
                    lines.add(line);
                }
            } catch (IOException ignored) {
                // the process went away
            }
        }, "cli-child-stdout");
        reader.setDaemon(true);
        reader.start();
    }

    /** The test class path, which holds the CLI's classes and their dependencies. */
    static String classPath() {
        return System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    }

    String awaitLine(String prefix) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            String line = lines.poll(100, TimeUnit.MILLISECONDS);
            if (line != null) {
                seen.add(line);
                if (line.startsWith(prefix)) {
                    return line;
                }
            } else if (!process.isAlive() && lines.isEmpty()) {
                break;
            }
        }
        throw new AssertionError("no line starting with '" + prefix + "'; stdout so far: " + seen + "; " + describe());
    }

    /**
     * As {@link #awaitLine}, for a child told to listen on {@code ports} by number: a child that could not, one of them
     * given to another process after the test let it go, throws a BindException (for BindRetry), not the test's failure.
     */
    String awaitLineListeningOn(String prefix, int... ports) throws Exception {
        try {
            return awaitLine(prefix);
        } catch (AssertionError noLine) {
            try {
                BindRetry.throwIfTaken(stderrText(), ports);
            } catch (java.net.BindException taken) {
                taken.addSuppressed(noLine);
                throw taken;
            }
            throw noLine;
        }
    }

    int awaitExit() throws Exception {
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), () -> "the child did not exit; " + describe());
        return process.exitValue();
    }

    /** What the child printed on standard output, awaitLine's lines too: all of it once the child has exited. */
    String stdoutText() throws InterruptedException {
        if (!process.isAlive()) {
            reader.join(5_000);
        }
        lines.drainTo(seen);
        return String.join("\n", seen);
    }

    String stderrText() throws IOException {
        return Files.readString(stderr);
    }

    String describe() {
        try {
            return "alive=" + process.isAlive() + ", stderr:\n" + stderrText();
        } catch (IOException e) {
            return "stderr unreadable: " + e;
        }
    }

    @Override
    public void close() throws Exception {
        if (process.isAlive()) {
            process.destroy();
            if (!process.waitFor(15, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
                throw new AssertionError("the child ignored SIGTERM; " + describe());
            }
        }
    }
}
