package io.blackpipe.upstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
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

    /** A command that exits at once: pid() is still its own, not the watcher's sleep, and its end is seen at once. */
    @Test
    void aCommandThatExitsAtOnceKeepsItsPidAndEndsItsProcess() throws Exception {
        try (ManagedProcess quick = ManagedProcess.start("quick", sh("exit 3"), dir.resolve("quick.log"))) {
            long started = System.nanoTime();
            while (quick.isAlive() && System.nanoTime() - started < java.util.concurrent.TimeUnit.SECONDS.toNanos(5)) {
                Thread.sleep(10);
            }
            assertFalse(quick.isAlive());
            assertTrue(System.nanoTime() - started < java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(900),
                    "ended as its command ended, not at the watcher's next second");
            assertTrue(ProcessHandle.of(quick.pid()).map(p -> !p.info().commandLine().orElse("").contains("sleep")).orElse(true),
                    "the command's pid, not a sleep's");
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
