package io.blackpipe.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The --driver-cmd program's life: a run that overstays its time is ended whole, not just its shell. */
class ExternalSpecDriverTest {
    /** An executable /bin/sh program {@code dir/driver.sh} running {@code body}: a test's --driver-cmd. */
    static Path shellDriver(Path dir, String body) throws IOException {
        Path script = dir.resolve("driver.sh");
        Files.writeString(script, "#!/bin/sh\n" + body);
        if (!script.toFile().setExecutable(true)) {
            throw new IOException("cannot make " + script + " executable");
        }
        return script;
    }

    @Test
    void aProgramThatTimesOutIsKilledWithItsChildren(@TempDir Path dir) throws Exception {
        Path pidFile = dir.resolve("pid");
        // a driver that hangs: the shell blackpipe starts runs it as a child, which must not outlive the case
        Path script = shellDriver(dir, "echo $$ > '" + pidFile + "'\nsleep 300\n");
        String raised = new ExternalSpecDriver(script + "; true", 1).run("mongodb://127.0.0.1:1/db", "insert");
        assertEquals("timed out after 1s", raised);
        long pid = Long.parseLong(Files.readString(pidFile).strip());
        Optional<ProcessHandle> program = ProcessHandle.of(pid);
        try {
            program.ifPresent(p -> p.onExit().completeOnTimeout(p, 5, java.util.concurrent.TimeUnit.SECONDS).join());
            assertFalse(program.map(ProcessHandle::isAlive).orElse(false),
                    "the timed-out program (pid " + pid + ") still runs, and would go on sending to the next case");
        } finally {
            program.ifPresent(ProcessHandle::destroyForcibly);
        }
    }
}
