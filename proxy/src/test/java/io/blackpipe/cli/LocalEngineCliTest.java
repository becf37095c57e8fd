package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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

    /**
     * Without npm (and no jongodb installed yet, no mongod), `local` and `report` say what to do in the CLI's words: the
     * tests' BLACKPIPE_TEST_URI is no way out there, `proxy --upstream URI` and `report --upstream URI` are.
     */
    @Test
    void withoutNpmLocalAndReportNameTheirOwnWayToAnExistingReplicaSet() throws Exception {
        Path emptyPath = Files.createDirectories(temp.resolve("nothing-on-path"));
        Map<String, String> env = Map.of("PATH", emptyPath.toString(), "BLACKPIPE_CACHE", temp.resolve("empty-cache").toString());
        try (CliChild local = new CliChild(temp, null, env, "local", "--check", "--port", "0", "--admin-port", "-1")) {
            assertEquals(1, local.awaitExit(), local::describe);
            String err = local.stderrText();
            assertTrue(err.contains("npm was not found on PATH"), err);
            assertTrue(err.contains("Install Node.js/npm, or put mongod on PATH, or put the proxy in front of an existing replica set:"
                    + " blackpipe proxy --upstream URI."), err);
            assertFalse(err.contains("BLACKPIPE_TEST_URI"), err);
        }
        try (CliChild report = new CliChild(temp, null, env, "report")) {
            assertEquals(1, report.awaitExit(), report::describe);
            String err = report.stderrText();
            assertTrue(err.contains("Install Node.js/npm, or put mongod on PATH, or name an existing replica set: blackpipe report"
                    + " --upstream URI."), err);
            assertFalse(err.contains("BLACKPIPE_TEST_URI"), err);
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
