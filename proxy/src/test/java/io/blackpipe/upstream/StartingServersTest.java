package io.blackpipe.upstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.Await;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A JVM that exits while a local upstream starts (a Ctrl-C, a test fork's timeout) runs its shutdown hooks and no
 * finally block. Before, the upstream's hook was registered only once it was ready: the servers started so far kept
 * running, and their directory stayed.
 */
class StartingServersTest {
    @TempDir
    Path dir;

    @Test
    void aJvmStoppedWhileItsSetStartsStopsTheMembersStartedSoFar() throws Exception {
        String setName = "rs-stopped-" + UUID.randomUUID();
        Path dbPaths = dir.resolve("dbpaths");
        Path fakeMongod = dir.resolve("mongod"); // starts, never answers: the set's start waits for it
        Files.writeString(fakeMongod, "#!/bin/sh\n"
                + "[ \"$1\" = --version ] && echo 'db version v7.0.14' && exit 0\n"
                + "for a in \"$@\"; do [ \"$prev\" = --dbpath ] && echo \"$a\" >> '" + dbPaths + "'; prev=\"$a\"; done\n"
                + "while true; do sleep 1; done\n");
        fakeMongod.toFile().setExecutable(true);
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        Process child = new ProcessBuilder(List.of(java, "-cp", classPath, StartInAChildJvm.class.getName(), fakeMongod.toString(), setName))
                .redirectErrorStream(true).redirectOutput(dir.resolve("out.txt").toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
        try {
            Await.until(Duration.ofSeconds(30), "the three members to run", () -> MongodReplicaSetTest.running(setName).size() == 3);
            child.destroy(); // SIGTERM: the JVM runs its shutdown hooks
            assertTrue(child.waitFor(30, TimeUnit.SECONDS), "the child JVM exits");
            Await.until(Duration.ofSeconds(15), () -> "the members to stop, still running: " + MongodReplicaSetTest.running(setName),
                    () -> MongodReplicaSetTest.running(setName).isEmpty());
            List<String> memberDbPaths = Files.readAllLines(dbPaths);
            assertEquals(3, memberDbPaths.size(), memberDbPaths::toString);
            for (String dbPath : memberDbPaths) {
                Path setDir = Path.of(dbPath).getParent().getParent(); // <temp>/member<i>/db
                assertFalse(Files.exists(setDir), () -> "the set's directory is gone: " + setDir);
            }
        } finally {
            child.destroyForcibly();
            MongodReplicaSetTest.running(setName).forEach(ProcessHandle::destroyForcibly);
        }
    }

    /** The start goes on while the hooks run: a server it starts after the hook took its list is stopped as it is added. */
    @Test
    void aServerStartedAfterTheHookRanIsStoppedToo() throws Exception {
        StartingServers starting = new StartingServers("test-start-stop", Files.createDirectories(dir.resolve("set")));
        try {
            starting.stopAll(); // as the hook does when the JVM exits
            ManagedProcess late = starting.add(ManagedProcess.start("late server", List.of("sleep", "300"), dir.resolve("late.log")));
            assertFalse(late.isAlive(), "a server added after the hook ran is stopped");
        } finally {
            starting.end(false);
        }
    }
}
