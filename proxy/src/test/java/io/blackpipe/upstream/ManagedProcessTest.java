package io.blackpipe.upstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ManagedProcessTest {
    @TempDir
    Path dir;

    @Test
    void waitsForTheReadyLineThenStopsTheProcessOnClose() throws IOException {
        Path log = dir.resolve("out.log");
        try (ManagedProcess process = ManagedProcess.start("sleeper", sh("echo starting; echo oops >&2; sleep 0.3; echo READY port=7; exec sleep 60"), log)) {
            assertEquals("READY port=7", process.awaitLine(line -> line.startsWith("READY"), Duration.ofSeconds(10)));
            assertTrue(process.isAlive());
            process.close();
            assertFalse(process.isAlive(), "close() stops the process");
        }
        // stdout and stderr both end up in the log file.
        String written = Files.readString(log);
        assertTrue(written.contains("starting") && written.contains("oops"), written);
    }

    @Test
    void ignoresALineUntilItsNewlineIsWritten() throws IOException {
        try (ManagedProcess process = ManagedProcess.start("slow-writer",
                sh("printf 'READY port=1'; sleep 0.5; printf '2345\\n'; exec sleep 60"), dir.resolve("out.log"))) {
            assertEquals("READY port=12345", process.awaitLine(line -> line.startsWith("READY"), Duration.ofSeconds(10)));
        }
    }

    @Test
    void reportsAnEarlyExitWithTheOutputTail() throws IOException {
        try (ManagedProcess process = ManagedProcess.start("crasher", sh("echo cannot bind port; exit 3"), dir.resolve("out.log"))) {
            IOException e = assertThrows(IOException.class, () -> process.awaitLine(l -> l.startsWith("READY"), Duration.ofSeconds(10)));
            assertTrue(e.getMessage().contains("crasher exited with code 3"), e.getMessage());
            assertTrue(e.getMessage().contains("cannot bind port"), e.getMessage());
        }
    }

    /** A mongod 5.0+ on a CPU without AVX dies of SIGILL before it writes a line: "code 132" alone said nothing. */
    @Test
    void anExitBySignalSaysWhichAndWhatItMostOftenMeans() throws IOException {
        try (ManagedProcess process = ManagedProcess.start("mongod", sh("kill -ILL $$"), dir.resolve("out.log"))) {
            IOException e = assertThrows(IOException.class, () -> process.awaitLine(l -> l.startsWith("READY"), Duration.ofSeconds(10)));
            assertTrue(e.getMessage().startsWith("mongod exited with code 132 (killed by signal 4, SIGILL: the CPU lacks an instruction"
                    + " the program was built for (mongod 5.0 and later need AVX)) before it was ready"), e.getMessage());
        }
    }

    @Test
    void reportsATimeoutWithTheOutputTail() throws IOException {
        try (ManagedProcess process = ManagedProcess.start("mute", sh("echo still thinking; exec sleep 60"), dir.resolve("out.log"))) {
            IOException e = assertThrows(IOException.class, () -> process.awaitLine(l -> l.startsWith("READY"), Duration.ofMillis(500)));
            assertTrue(e.getMessage().contains("did not report readiness"), e.getMessage());
            assertTrue(e.getMessage().contains("still thinking"), e.getMessage());
            assertTrue(process.isAlive());
        }
    }

    @Test
    void aMissingProgramGivesAClearError() {
        IOException e = assertThrows(IOException.class, () -> ManagedProcess.start("ghost",
                List.of(dir.resolve("no-such-program").toString()), dir.resolve("out.log")));
        assertTrue(e.getMessage().startsWith("could not start ghost"), e.getMessage());
    }

    /**
     * A JVM killed by SIGKILL (a CI job's timeout, the out-of-memory killer) runs no shutdown hook: a jongodb it started
     * went on listening, re-parented to init, for good. The child now ends with it.
     */
    @Test
    void theChildEndsWhenTheJvmThatStartedItIsKilled() throws Exception {
        Process jvm = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
                System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")),
                StartsAChildAndWaits.class.getName(), dir.resolve("child.log").toString()).redirectErrorStream(true).start();
        try {
            String line = new java.io.BufferedReader(new java.io.InputStreamReader(jvm.getInputStream(), java.nio.charset.StandardCharsets.UTF_8))
                    .readLine();
            assertTrue(line != null && line.startsWith("child pid "), String.valueOf(line));
            ProcessHandle child = ProcessHandle.of(Long.parseLong(line.substring("child pid ".length()))).orElseThrow();
            assertEquals(List.of("300"), List.of(child.info().arguments().orElse(new String[0])),
                    () -> "the command itself, not the watching shell's sleep 1: " + child.info());
            jvm.destroyForcibly(); // SIGKILL
            assertTrue(jvm.waitFor(10, java.util.concurrent.TimeUnit.SECONDS));
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
            while (child.isAlive() && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            assertTrue(!child.isAlive(), "the child outlived the JVM that started it");
        } finally {
            jvm.destroyForcibly();
        }
    }

    /**
     * The same for a JVM killed and not reaped, a zombie (its parent does not wait for it, as some harnesses do not): it
     * still answers kill -0, and a watcher that asked that kept the child until the JVM was reaped.
     */
    @Test
    void theChildEndsWhenTheJvmThatStartedItIsKilledAndNotReaped() throws Exception {
        Path out = dir.resolve("jvm.out");
        String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        // sh starts the JVM, then becomes a sleep that never waits for it
        Process neverReaps = new ProcessBuilder("sh", "-c", "\"$0\" -cp \"$1\" \"$2\" \"$3\" > \"$4\" 2>&1 & exec sleep 60", javaBin, classPath,
                StartsAChildAndWaits.class.getName(), dir.resolve("child.log").toString(), out.toString()).start();
        try {
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
            String said = "";
            while (!said.contains("\n") && System.nanoTime() < deadline) {
                Thread.sleep(50);
                said = Files.exists(out) ? Files.readString(out) : "";
            }
            assertTrue(said.startsWith("child pid "), said);
            ProcessHandle child = ProcessHandle.of(Long.parseLong(said.strip().substring("child pid ".length()))).orElseThrow();
            ProcessHandle jvm = ProcessHandle.of(neverReaps.pid()).orElseThrow().children().findFirst().orElseThrow();
            assertTrue(jvm.destroyForcibly());
            long end = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
            while (child.isAlive() && System.nanoTime() < end) {
                Thread.sleep(100);
            }
            assertTrue(!child.isAlive(), "the child outlived the JVM that started it, which no one reaped");
        } finally {
            neverReaps.descendants().forEach(ProcessHandle::destroyForcibly);
            neverReaps.destroyForcibly();
        }
    }

    /** A command that exits at once: pid() is still its own, not the watcher's sleep, and its exit status is the command's. */
    @Test
    void aCommandThatExitsAtOnceKeepsItsPidAndItsExitStatus() throws Exception {
        try (ManagedProcess quick = ManagedProcess.start("quick", sh("exit 3"), dir.resolve("quick.log"))) {
            IOException e = assertThrows(IOException.class, () -> quick.awaitLine(l -> l.startsWith("READY"), Duration.ofSeconds(10)));
            assertTrue(e.getMessage().startsWith("quick exited with code 3 before it was ready"), e.getMessage());
            assertTrue(ProcessHandle.of(quick.pid()).map(p -> !p.info().commandLine().orElse("").contains("sleep")).orElse(true),
                    "the command's pid, not a sleep's");
        }
    }

    /**
     * The shell ends as its command ends, not at its watcher's next second: the watcher (the shell's other child and its
     * sleep) is stopped (SIGSTOP) for the whole run, and the shell still ends with the command, the watcher still there.
     * When the shell watched itself, a second's sleep at a time, it waited for that sleep (this held it for good); the
     * test asked that it end within 900 ms, which a loaded machine could miss.
     */
    @Test
    void theShellEndsWithItsCommandWhateverItsWatcherIsDoing() throws Exception {
        Path go = dir.resolve("go");
        List<ProcessHandle> held = new ArrayList<>();
        try (ManagedProcess process = ManagedProcess.start("waiter",
                sh("while [ ! -e '" + go + "' ]; do sleep 0.05; done; exit 3"), dir.resolve("waiter.log"))) {
            ProcessHandle shell = ProcessHandle.of(process.pid()).flatMap(ProcessHandle::parent).orElseThrow();
            assertTrue(shell.info().arguments().map(args -> List.of(args).contains(ManagedProcess.WATCHER)).orElse(false),
                    () -> "the command's parent is the watching shell: " + shell.info());
            Await.until(Duration.ofSeconds(10), "the shell's watcher to start", () -> watcherOf(shell, process.pid()).isPresent());
            ProcessHandle watcher = watcherOf(shell, process.pid()).orElseThrow();
            signal("STOP", watcher); // first, so that it starts no other sleep
            held.add(watcher);
            watcher.descendants().forEach(sleep -> {
                signal("STOP", sleep);
                held.add(sleep);
            });

            Files.createFile(go);
            Await.until(Duration.ofSeconds(10), "the shell to end with its command", () -> !process.isAlive());
            assertTrue(watcher.isAlive(), "the watcher, stopped, is still there: the shell did not wait for it");
            IOException e = assertThrows(IOException.class, () -> process.awaitLine(l -> l.startsWith("READY"), Duration.ofSeconds(10)));
            assertTrue(e.getMessage().startsWith("waiter exited with code 3 before it was ready"), e.getMessage());
        } finally {
            held.forEach(ProcessHandle::destroyForcibly); // a stopped process ends on SIGKILL all the same
        }
    }

    /** The shell's child that is not the command: the subshell that watches the JVM (or, in a shell that watches itself, its sleep). */
    private static Optional<ProcessHandle> watcherOf(ProcessHandle shell, long commandPid) {
        return shell.children().filter(child -> child.pid() != commandPid).findFirst();
    }

    private static void signal(String signal, ProcessHandle process) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).inheritIO().start();
            assertEquals(0, kill.waitFor(), "kill -" + signal + " " + process.pid());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    /** Starts a long sleep as a ManagedProcess, says its pid, and waits to be killed. */
    public static final class StartsAChildAndWaits {
        public static void main(String[] args) throws Exception {
            ManagedProcess sleeper = ManagedProcess.start("sleeper", List.of("sleep", "300"), Path.of(args[0]));
            System.out.println("child pid " + sleeper.pid());
            System.out.flush();
            Thread.sleep(300_000);
        }
    }

    private static List<String> sh(String script) {
        return List.of("/bin/sh", "-c", script);
    }
}
