package io.blackpipe.upstream;

import static io.blackpipe.upstream.MongodReplicaSetTest.assertOption;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What we ask mongod and mongos to do for a sharded cluster, and how a failed start cleans up.
 * Starting a real cluster needs both on PATH; ShardedClusterTest runs on it then.
 */
class MongodShardedClusterTest {
    @TempDir
    Path dir;

    @Test
    void theConfigServerSetIsInitiatedAsOne() {
        assertEquals(BsonDocument.parse("{replSetInitiate: {_id: 'blackpipe-cfg', configsvr: true, members: [{_id: 0, host: '127.0.0.1:5'}]}}"),
                MongodShardedCluster.configInitiateCommand("127.0.0.1:5"));
    }

    @Test
    void aRouterBindsLoopbackOnItsOwnPortAndNamesTheConfigServers() {
        List<String> command = MongodShardedCluster.routerCommand(Path.of("/opt/mongo/bin/mongos"), 7, "blackpipe-cfg/127.0.0.1:5", 40002,
                Path.of("/tmp/r0/mongos.log"));
        assertEquals("/opt/mongo/bin/mongos", command.get(0));
        assertOption(command, "--configdb", "blackpipe-cfg/127.0.0.1:5");
        assertOption(command, "--bind_ip", "127.0.0.1");
        assertOption(command, "--port", "40002");
        assertOption(command, "--logpath", "/tmp/r0/mongos.log");
        assertTrue(String.join(" ", command).contains("--setParameter mongosShutdownTimeoutMillisForSignaledShutdown=500"),
                "from 5.0 a signalled mongos waits out a 15 s quiesce: " + command);
        assertTrue(command.contains("--nounixsocket"), command::toString);
        List<String> four = MongodShardedCluster.routerCommand(Path.of("mongos"), 4, "cfg/h:1", 1, Path.of("log"));
        assertTrue(four.stream().noneMatch(arg -> arg.startsWith("mongosShutdown")), "4.4 refuses the parameter: " + four);
    }

    /**
     * jongodb stands in for mongod: it answers hello but has no replSetInitiate, so start() gets
     * through launching both servers and fails initiating the config servers; nothing is left running.
     */
    @Test
    void aFailedStartSaysWhyAndLeavesNothingRunning() throws Exception {
        Path fakeMongod = MongodReplicaSetTest.fakeMongod(dir);
        IOException e = assertThrows(IOException.class, () -> MongodShardedCluster.start(fakeMongod, Path.of("/nonexistent/mongos")));
        assertTrue(e.getMessage().startsWith("could not start a sharded cluster with " + fakeMongod), e.getMessage());
        assertTrue(e.getMessage().contains("replSetInitiate on 127.0.0.1:"), e.getMessage());
        // the servers write to --logpath, not stdout: the message quotes those logs (before, nothing but "output was empty")
        assertTrue(e.getMessage().contains("--- last lines of config/mongod.log:" + System.lineSeparator()
                + "fake mongod of set " + MongodShardedCluster.CONFIG_SET + " on port"), e.getMessage());
        assertTrue(e.getMessage().contains("fake mongod of set " + MongodShardedCluster.SHARD_SET), e.getMessage());
        assertEquals(List.of(), MongodReplicaSetTest.running(MongodShardedCluster.CONFIG_SET), "the config server was stopped");
        assertEquals(List.of(), MongodReplicaSetTest.running(MongodShardedCluster.SHARD_SET), "and the shard");
    }
}
