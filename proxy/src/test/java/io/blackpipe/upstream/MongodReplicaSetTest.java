package io.blackpipe.upstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.blackpipe.testing.BindRetry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.stream.Collectors;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What we ask mongod to do, and how a failed start cleans up. Starting a real set needs mongod on
 * PATH and is covered by the mongod lane.
 */
class MongodReplicaSetTest {
    @TempDir
    Path dir;

    /**
     * A fake mongod: jongodb listening on the member's port. It answers hello but has no
     * replSetInitiate, so start() gets through launching and probing all three members and then
     * fails, which is the path where leaking processes or directories would be easiest.
     */
    @Test
    void aFailedStartQuotesTheServerAndLeavesNothingRunning() throws Exception {
        Path fakeMongod = fakeMongod(dir);
        String setName = "rs-fake-" + UUID.randomUUID();

        IOException e = assertThrows(IOException.class, () -> MongodReplicaSet.start(fakeMongod, setName));

        assertTrue(e.getMessage().contains("replSetInitiate on 127.0.0.1:"), e.getMessage());
        assertTrue(e.getMessage().contains("no such command"), "quotes the server's reply: " + e.getMessage());
        assertEquals(List.of(), running(setName), "members are stopped after a failed start");
    }

    /**
     * A fake mongod in {@code dir}: jongodb on the --port given, as a set of the --replSet given, that says so in its
     * --logpath (other options ignored), and says it is 7.0.14 when asked for its version.
     */
    static Path fakeMongod(Path dir) throws IOException {
        JongodbInstaller installer = JongodbInstaller.fromEnvironment();
        assumeTrue(JongodbInstaller.problemWith(installer.installDir()) == null || PathLookup.find("npm").isPresent(),
                "needs jongodb (installed, or npm to install it) to stand in for mongod");
        Path jongodb = installer.ensureInstalled();
        Path fakeMongod = dir.resolve("mongod");
        Files.writeString(fakeMongod, "#!/bin/sh\n"
                + "[ \"$1\" = --version ] && echo 'db version v7.0.14' && exit 0\n"
                + "while [ $# -gt 0 ]; do case \"$1\" in --port) port=\"$2\";; --replSet) set=\"$2\";; --logpath) log=\"$2\";; esac; shift; done\n"
                + "echo \"fake mongod of set $set on port $port\" > \"$log\"\n"
                + "exec '" + jongodb + "' --host=127.0.0.1 --port=\"$port\" --topology-profile=singleNodeReplicaSet"
                + " --replica-set-name=\"$set\"\n");
        fakeMongod.toFile().setExecutable(true);
        return fakeMongod;
    }

    /** The live processes whose command line holds {@code marker}. */
    static List<ProcessHandle> running(String marker) {
        return ProcessHandle.allProcesses()
                .filter(p -> p.info().arguments().map(args -> String.join(" ", args).contains(marker)
                        && !List.of(args).contains(ManagedProcess.WATCHER)).orElse(false)) // the member, not the shell watching for it
                .filter(ProcessHandle::isAlive)
                .collect(Collectors.toList());
    }

    @Test
    void memberCommandBindsLoopbackWithItsOwnPortDirectoriesAndTestCommands() {
        List<String> command = MongodReplicaSet.memberCommand(Path.of("/opt/mongo/bin/mongod"), 7, "rs-x", 40001,
                Path.of("/tmp/m0/db"), Path.of("/tmp/m0/mongod.log"));
        assertEquals("/opt/mongo/bin/mongod", command.get(0));
        assertOption(command, "--replSet", "rs-x");
        assertOption(command, "--bind_ip", "127.0.0.1");
        assertOption(command, "--port", "40001");
        assertOption(command, "--dbpath", "/tmp/m0/db");
        assertOption(command, "--logpath", "/tmp/m0/mongod.log");
        assertOption(command, "--setParameter", "enableTestCommands=1");
        assertTrue(command.contains("--nounixsocket"), "no socket file is left in /tmp by a member killed: " + command);
    }

    /** A Windows mongod has no Unix domain socket, and refuses to start with --nounixsocket. */
    @Test
    void aWindowsMongodIsNotToldToMakeNoUnixSocket() {
        List<String> windows = new ArrayList<>(List.of("mongod.exe"));
        MongodReplicaSet.noUnixSocket(windows, true);
        assertEquals(List.of("mongod.exe"), windows);
        List<String> posix = new ArrayList<>(List.of("mongod"));
        MongodReplicaSet.noUnixSocket(posix, false);
        assertEquals(List.of("mongod", "--nounixsocket"), posix);
    }

    /**
     * From 5.0 a signalled mongod waits out a 15 s quiesce (a secondary, all of it), longer than the 10 s a close
     * gives it before a kill: every close ended in SIGKILL. 4.4 has no such parameter and would refuse to start.
     */
    @Test
    void aMongodFromFiveOnQuiescesBrieflyWhenItIsStopped() {
        List<String> seven = MongodReplicaSet.memberCommand(Path.of("mongod"), 7, "rs-x", 1, Path.of("db"), Path.of("log"));
        assertTrue(String.join(" ", seven).contains("--setParameter shutdownTimeoutMillisForSignaledShutdown=500"), seven::toString);
        List<String> four = MongodReplicaSet.memberCommand(Path.of("mongod"), 4, "rs-x", 1, Path.of("db"), Path.of("log"));
        assertTrue(four.stream().noneMatch(arg -> arg.startsWith("shutdownTimeout")), four::toString);
        List<String> unknown = MongodReplicaSet.memberCommand(Path.of("mongod"), BinaryVersion.UNKNOWN, "rs-x", 1, Path.of("db"), Path.of("log"));
        assertTrue(unknown.stream().noneMatch(arg -> arg.startsWith("shutdownTimeout")), unknown::toString);
    }

    @Test
    void initiateGivesMemberZeroTheHighestPriority() {
        BsonDocument command = MongodReplicaSet.initiateCommand("rs-x", List.of("127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"));
        assertEquals(BsonDocument.parse("{replSetInitiate: {_id: 'rs-x', members: ["
                + "{_id: 0, host: '127.0.0.1:1', priority: 2},"
                + "{_id: 1, host: '127.0.0.1:2', priority: 1},"
                + "{_id: 2, host: '127.0.0.1:3', priority: 1}]}}"), command);
    }

    @Test
    void uriListsEveryMemberAndNamesTheSet() {
        assertEquals("mongodb://127.0.0.1:1,127.0.0.1:2,127.0.0.1:3/?replicaSet=rs-x",
                MongodReplicaSet.uriFor(List.of("127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"), "rs-x"));
    }

    /**
     * The ports are free once allocate returns, which is all it can promise (mongod binds them itself, later): one given
     * to another process before the test binds it runs the case again; ports that were never free fail every run.
     */
    @Test
    void freePortsAreDistinctAndUsable() throws Exception {
        BindRetry.upTo(3, () -> {
            int[] ports = FreePorts.allocate(MongodReplicaSet.MEMBERS);
            assertEquals(3, java.util.Arrays.stream(ports).distinct().count());
            for (int port : ports) {
                assertTrue(port > 0 && port < 65536, "port " + port);
                try (java.net.ServerSocket socket = new java.net.ServerSocket(port, 1, java.net.InetAddress.getLoopbackAddress())) {
                    assertEquals(port, socket.getLocalPort());
                }
            }
        });
    }

    static void assertOption(List<String> command, String option, String value) {
        int at = command.indexOf(option);
        assertTrue(at > 0 && at + 1 < command.size(), option + " missing from " + command);
        assertEquals(value, command.get(at + 1), option + " in " + command);
    }
}
