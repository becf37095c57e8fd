package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * `local` and `report` start the mongod on PATH when there is one: a mongod that cannot run here (one built for AVX, on
 * a CPU without it) left no way to jongodb but taking it off PATH. --engine (BLACKPIPE_ENGINE) chooses.
 */
class LocalEngineCliTest {
    @TempDir
    Path temp;

    /** A directory holding a mongod that answers --version as 7.0 does, then dies of SIGILL as such a mongod does. */
    private Path pathWithAMongodThatCannotRun() throws Exception {
        Path bin = Files.createDirectories(temp.resolve("bin"));
        Path mongod = bin.resolve("mongod");
        Files.writeString(mongod, """
                #!/bin/sh
                if [ "$1" = "--version" ]; then printf 'db version v7.0.14\\n'; exit 0; fi
                kill -ILL $$
                """);
        Files.setPosixFilePermissions(mongod, PosixFilePermissions.fromString("rwxr-xr-x"));
        return bin;
    }

    @Test
    void aMongodOnPathThatCannotRunSaysWhyAndHowToRunJongodb() throws Exception {
        String path = pathWithAMongodThatCannotRun() + ":" + System.getenv("PATH");
        try (CliChild child = new CliChild(temp, null, Map.of("PATH", path), "local", "--check", "--port", "0", "--admin-port", "-1")) {
            assertEquals(1, child.awaitExit(), child::describe);
            String err = child.stderrText();
            assertTrue(err.contains("killed by signal 4, SIGILL"), err);
            assertTrue(err.contains("--engine jongodb, or BLACKPIPE_ENGINE=jongodb, runs the jongodb engine instead"), err);
        }
        try (CliChild child = new CliChild(temp, null, Map.of("PATH", path, "BLACKPIPE_ENGINE", "jongodb"),
                "local", "--check", "--port", "0", "--admin-port", "-1")) {
            assertEquals(0, child.awaitExit(), child::describe);
            assertTrue(child.stdoutText().contains("upstream: jongodb"), () -> child.seen.toString());
        }
    }

    @Test
    void anEngineThatIsNoneIsAUsageError() {
        CliRun local = CliRun.of("local", "--engine", "mongo", "--check");
        assertEquals(2, local.exitCode(), local::toString);
        assertTrue(local.err().startsWith("--engine 'mongo' is none of auto, mongod, jongodb"), local::toString);

        CliRun report = CliRun.of("report", "--engine", "jongodb", "--upstream", "mongodb://127.0.0.1:1/");
        assertEquals(2, report.exitCode(), report::toString);
        assertTrue(report.err().startsWith("--engine chooses the local upstream, and --upstream names a deployment: give one"), report::toString);
    }
}
