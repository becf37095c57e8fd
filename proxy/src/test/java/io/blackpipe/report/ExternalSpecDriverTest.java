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

    /** A program that prints its connection string (an error message quoting it, a debug line) shows no password. */
    @Test
    void aUriInTheLastLineIsMaskedBeforeTheLineIsCutShort(@TempDir Path dir) throws Exception {
        Path script = shellDriver(dir, "echo \"connecting to $1\"\nexit 1\n");
        String uri = "mongodb://alice:s3cret@127.0.0.1:1/blackpipe_spec_x_0?authSource=admin&retryWrites=true&retryReads=true";
        String raised = new ExternalSpecDriver(script.toString()).run(uri, "insert");
        assertEquals("exit 1: connecting to mongodb://alice:****@127.0.0.1:1/blackpipe_spec_x_0?authSource=...", raised);
        String longPassword = "p".repeat(70) + "s3cret"; // the 80 characters end inside it: cut first, it would no longer read as a URI
        assertEquals("mongodb://bob:****@db1/", ExternalSpecDriver.lastLine("mongodb://bob:" + longPassword + "@db1/\n"));
        assertEquals("Authentication failed for mongodb+srv://carol:****@cluster0.example.com/",
                ExternalSpecDriver.lastLine("trace\nAuthentication failed for mongodb+srv://carol:pw@cluster0.example.com/"));
        assertFalse(new ExternalSpecDriver("prog --admin mongodb://root:hunter2@db1/").name().contains("hunter2"));
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
