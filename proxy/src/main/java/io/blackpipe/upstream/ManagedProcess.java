package io.blackpipe.upstream;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * A child server process whose stdout and stderr go straight to a log file. The operating system
 * does the draining, so the child can never block on a full pipe, and the log survives for error
 * messages. Readiness is detected by watching that file for a line.
 */
public final class ManagedProcess implements AutoCloseable {
    private static final Duration STOP_GRACE = Duration.ofSeconds(10);

    private final String name;
    private final Process process;
    private final Path logFile;

    /** The command's own process id, as the watching shell wrote it, never its watcher's sleeps. */
    private final long commandPid;

    private ManagedProcess(String name, Process process, Path logFile, long commandPid) {
        this.name = name;
        this.process = process;
        this.logFile = logFile;
        this.commandPid = commandPid;
    }

    /**
     * Runs a command as a child of this shell, and stops it (SIGTERM, SIGKILL 10 s later) once the JVM that started it is
     * gone: killed (SIGKILL, a CI job's timeout, the out-of-memory killer), the JVM runs no shutdown hook, and a jongodb
     * or mongod it started went on listening, re-parented to init, for good. Gone means this shell's parent is no longer
     * that JVM (it was re-parented): a JVM killed but not yet reaped, a zombie, still answers kill -0, and so would a
     * process that took its pid. A subshell watches, once a second; the shell itself waits for the command, so it ends
     * as the command ends, with its exit status (128 + the signal that ended it, as Java gives it), and passes a SIGTERM
     * on. The command's pid goes to a file beside its log: the shell's children include the watcher's sleeps.
     */
    private static final String ENDED_WITH_ITS_PARENT = "parent=$1; pidfile=$2; shift 2; \"$@\" & child=$!; echo $child > \"$pidfile\"; "
            + "parent_is() { expected=$1; if [ -r /proc/$$/stat ]; then read -r stat < /proc/$$/stat; set -- ${stat##*) }; "
            + "[ \"$2\" = \"$expected\" ]; else [ \"$(ps -o ppid= -p $$ | tr -d ' ')\" = \"$expected\" ]; fi; }; "
            + "( waited=0; while kill -0 $child 2>/dev/null; do "
            + "if ! parent_is $parent; then "
            + "if [ $waited -eq 0 ]; then kill -TERM $child 2>/dev/null; elif [ $waited -ge 10 ]; then kill -KILL $child 2>/dev/null; fi; "
            + "waited=$((waited + 1)); fi; sleep 1; done ) & "
            + "trap 'kill -TERM $child 2>/dev/null' TERM INT HUP; wait $child; status=$?; "
            + "while kill -0 $child 2>/dev/null; do wait $child; status=$?; done; exit $status"; // a trapped signal ends a wait early

    /** The watching shell's $0, among the arguments ps shows for it: what it is there for. */
    static final String WATCHER = "blackpipe-ends-it-with-its-jvm";

    /** Starts {@code command}, appending its stdout and stderr to {@code logFile}; it ends with this JVM, however that ends. */
    public static ManagedProcess start(String name, List<String> command, Path logFile) throws IOException {
        Files.createDirectories(logFile.toAbsolutePath().getParent());
        Path pidFile = logFile.resolveSibling(logFile.getFileName() + ".pid");
        Files.deleteIfExists(pidFile);
        List<String> launched = endedWithThisJvm(name, command, pidFile);
        boolean watched = launched != command;
        ProcessBuilder builder = new ProcessBuilder(launched)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()));
        Process process;
        try {
            process = builder.start();
        } catch (IOException e) {
            throw new IOException("could not start " + name + " (" + String.join(" ", command) + "): " + e.getMessage(), e);
        }
        // Nothing is ever sent to the child; an open stdin pipe would only be one more resource to leak.
        process.getOutputStream().close();
        return new ManagedProcess(name, process, logFile, watched ? commandPid(process, pidFile) : process.pid());
    }

    /** The pid the watching shell wrote as it started the command; its own when it ended first (the command could not run). */
    private static long commandPid(Process shell, Path pidFile) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (System.nanoTime() < deadline) {
            String written = Files.exists(pidFile) ? Files.readString(pidFile) : "";
            if (written.endsWith("\n")) { // whole: echo's line
                return Long.parseLong(written.strip());
            }
            if (!shell.isAlive() && !Files.exists(pidFile)) {
                break;
            }
            pause(5);
        }
        return shell.pid();
    }

    private static List<String> endedWithThisJvm(String name, List<String> command, Path pidFile) throws IOException {
        if (System.getProperty("os.name", "").startsWith("Windows")) {
            return command; // no sh: a Job Object would do it there
        }
        String program = command.get(0);
        boolean found = program.contains(File.separator) ? Files.isExecutable(Path.of(program))
                : Arrays.stream(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
                        .anyMatch(dir -> !dir.isEmpty() && Files.isExecutable(Path.of(dir, program)));
        if (!found) { // the shell would start, and its child fail: said here, as starting it directly said it
            throw new IOException("could not start " + name + " (" + String.join(" ", command) + "): " + program
                    + (program.contains(File.separator) ? " is no executable file" : " is on no directory of PATH"));
        }
        List<String> watched = new ArrayList<>(List.of("sh", "-c", ENDED_WITH_ITS_PARENT, WATCHER, Long.toString(ProcessHandle.current().pid()),
                pidFile.toString()));
        watched.addAll(command);
        return watched;
    }

    /**
     * Waits until the log holds a complete line matching {@code matcher} and returns it. Only lines
     * ended by a newline count, so a half-written line (say, a port number cut short) is never seen.
     */
    public String awaitLine(Predicate<String> matcher, Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            String found = findCompleteLine(matcher);
            if (found != null) {
                return found;
            }
            if (!process.isAlive()) {
                // Read once more: the line may have been written just before the exit.
                found = findCompleteLine(matcher);
                if (found != null) {
                    return found;
                }
                throw new IOException(name + " exited with " + exit(process.exitValue(), name) + " before it was ready" + outputTail());
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IOException(name + " did not report readiness within " + timeout.toSeconds() + "s" + outputTail());
            }
            pause(50);
        }
    }

    private String findCompleteLine(Predicate<String> matcher) throws IOException {
        if (!Files.exists(logFile)) {
            return null;
        }
        String text = new String(Files.readAllBytes(logFile), StandardCharsets.UTF_8);
        int lastNewline = text.lastIndexOf('\n');
        if (lastNewline < 0) {
            return null;
        }
        for (String line : text.substring(0, lastNewline).split("\\R")) {
            if (matcher.test(line)) {
                return line;
            }
        }
        return null;
    }

    /** Fails with the log tail if the process has exited; used while polling a server that should be up. */
    public void ensureAlive() throws IOException {
        if (!process.isAlive()) {
            throw new IOException(name + " exited unexpectedly with " + exit(process.exitValue(), name) + outputTail());
        }
    }

    /**
     * "code 2", or for a process a signal ended (Java gives 128 + the signal) which one and what it most often means: a
     * mongod 5.0+ on a CPU without AVX dies of SIGILL before it writes a line, and "code 132" said nothing.
     */
    static String exit(int code, String name) {
        String signal = switch (code - 128) {
            case 4 -> "SIGILL: the CPU lacks an instruction the program was built for"
                    + (name.contains("mongod") ? " (mongod 5.0 and later need AVX)" : "");
            case 6 -> "SIGABRT: it aborted itself";
            case 9 -> "SIGKILL: the out-of-memory killer, or someone, killed it";
            case 11 -> "SIGSEGV: it crashed";
            case 15 -> "SIGTERM: it was asked to stop";
            default -> null;
        };
        return "code " + code + (signal == null ? "" : " (killed by signal " + (code - 128) + ", " + signal + ")");
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** The command's own process id, not the shell's that watches this JVM for it. */
    public long pid() {
        return commandPid;
    }

    public Path logFile() {
        return logFile;
    }

    public String name() {
        return name;
    }

    /** ": last lines of LOG:" followed by those lines, ready to append to an error message. */
    public String outputTail() {
        return "; last lines of " + logFile + ":" + System.lineSeparator() + FileTrees.tail(logFile, 30);
    }

    /** Asks the process to stop (SIGTERM), waits, then kills it (SIGKILL) if it is still there. */
    @Override
    public void close() {
        process.descendants().forEach(ProcessHandle::destroy);
        process.destroy();
        try {
            if (!process.waitFor(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
                process.waitFor(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    /** Sleeps while polling a child; an interrupt becomes an IOException so callers clean up the same way. */
    static void pause(long millis) throws IOException {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while waiting for a child process", e);
        }
    }
}
