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

    private static List<String> sh(String script) {
        return List.of("/bin/sh", "-c", script);
    }
}
