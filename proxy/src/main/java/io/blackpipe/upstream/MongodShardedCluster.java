package io.blackpipe.upstream;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;

/**
 * A real sharded cluster of the mongod and mongos found on PATH, on loopback ports with throw-away
 * data directories: a one-member config server set, a one-member shard and {@link #ROUTERS} mongos
 * routers, so a driver given the routers spreads its operations over them and retries a write on
 * another, as against a production cluster.
 */
public final class MongodShardedCluster implements AutoCloseable {
    public static final int ROUTERS = 2;
    static final String CONFIG_SET = "blackpipe-cfg";
    static final String SHARD_SET = "blackpipe-shard0";
    private static final String HOST = "127.0.0.1";
    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration ELECTION_TIMEOUT = Duration.ofSeconds(90);

    private final List<ManagedProcess> processes;
    private final List<String> routers;
    private final String version;
    private final Path tempDir;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Thread shutdownHook;

    private MongodShardedCluster(List<ManagedProcess> processes, List<String> routers, String version, Path tempDir) {
        this.processes = processes;
        this.routers = routers;
        this.version = version;
        this.tempDir = tempDir;
        this.shutdownHook = ShutdownHooks.register("blackpipe-sharded-stop", this::close);
    }

    /** Whether PATH has both a mongod and a mongos to start a cluster with. */
    public static boolean available() {
        return PathLookup.find("mongod").isPresent() && PathLookup.find("mongos").isPresent();
    }

    /** Starts a cluster with the mongod and mongos on PATH. */
    public static MongodShardedCluster start() throws IOException {
        return start(PathLookup.require("mongod"), PathLookup.require("mongos"));
    }

    public static MongodShardedCluster start(Path mongod, Path mongos) throws IOException {
        Path tempDir = Files.createTempDirectory("blackpipe-sharded-");
        StartingServers started = new StartingServers("blackpipe-sharded-start-stop", tempDir);
        boolean ready = false;
        try {
            int mongodMajor = BinaryVersion.major(mongod);
            int[] ports = FreePorts.allocate(2); // the config server's and the shard's; each router's is picked as it starts
            String configHost = HOST + ":" + ports[0];
            String shardHost = HOST + ":" + ports[1];
            ManagedProcess config = startMongod(mongod, mongodMajor, CONFIG_SET, "--configsvr", ports[0], tempDir.resolve("config"), started);
            ManagedProcess shard = startMongod(mongod, mongodMajor, SHARD_SET, "--shardsvr", ports[1], tempDir.resolve("shard0"), started);
            HelloProbe.await(HOST, ports[0], HelloProbe.ANSWERS, "reachable", START_TIMEOUT, config);
            HelloProbe.await(HOST, ports[1], HelloProbe.ANSWERS, "reachable", START_TIMEOUT, shard);
            HelloProbe.runOk(HOST, ports[0], configInitiateCommand(configHost));
            HelloProbe.runOk(HOST, ports[1], MongodReplicaSet.initiateCommand(SHARD_SET, List.of(shardHost)));
            HelloProbe.await(HOST, ports[0], HelloProbe.WRITABLE_PRIMARY, "primary of " + CONFIG_SET, ELECTION_TIMEOUT, config);
            HelloProbe.await(HOST, ports[1], HelloProbe.WRITABLE_PRIMARY, "primary of " + SHARD_SET, ELECTION_TIMEOUT, shard);
            List<String> routers = new ArrayList<>();
            int mongosMajor = BinaryVersion.major(mongos);
            int firstRouterPort = 0;
            for (int i = 0; i < ROUTERS; i++) {
                // Picked now, not with the others: the servers started meanwhile (minutes, on a slow machine) open
                // connections whose local ports come from the same range, and one could take a port picked then.
                int port = FreePorts.allocate(1)[0];
                firstRouterPort = i == 0 ? port : firstRouterPort;
                Path dir = Files.createDirectories(tempDir.resolve("mongos" + i));
                ManagedProcess router = ManagedProcess.start("mongos " + i + " (port " + port + ")",
                        routerCommand(mongos, mongosMajor, CONFIG_SET + "/" + configHost, port, dir.resolve("mongos.log")), dir.resolve("stdout.log"));
                started.add(router);
                HelloProbe.await(HOST, port, HelloProbe.ANSWERS, "reachable", START_TIMEOUT, router);
                routers.add(HOST + ":" + port);
            }
            HelloProbe.runOk(HOST, firstRouterPort, new BsonDocument("addShard", new BsonString(SHARD_SET + "/" + shardHost)));
            String version = HelloProbe.runOk(HOST, firstRouterPort, new BsonDocument("buildInfo", new BsonInt32(1)))
                    .getString("version", new BsonString("unknown")).getValue();
            MongodShardedCluster cluster = new MongodShardedCluster(started.all(), List.copyOf(routers), version, tempDir);
            ready = true;
            return cluster;
        } catch (IOException | RuntimeException e) {
            throw new IOException("could not start a sharded cluster with " + mongod + " and " + mongos + ": " + e.getMessage()
                    + MongodReplicaSet.logTails(tempDir, Math.min(started.count(), 2), i -> i == 0 ? "config" : "shard0", "mongod.log")
                    + MongodReplicaSet.logTails(tempDir, Math.max(0, started.count() - 2), i -> "mongos" + i, "mongos.log"), e);
        } finally {
            started.end(ready); // whatever went wrong, nothing is left running that nobody will stop
        }
    }

    private static ManagedProcess startMongod(Path mongod, int major, String setName, String role, int port, Path dir,
                                              StartingServers started) throws IOException {
        Path dbPath = Files.createDirectories(dir.resolve("db"));
        List<String> command = new ArrayList<>(MongodReplicaSet.memberCommand(mongod, major, setName, port, dbPath, dir.resolve("mongod.log")));
        command.add(role);
        ManagedProcess process = ManagedProcess.start(setName + " (port " + port + ")", command, dir.resolve("stdout.log"));
        started.add(process);
        return process;
    }

    /** A config server set's replSetInitiate: configsvr, one member. */
    static BsonDocument configInitiateCommand(String host) {
        return new BsonDocument("replSetInitiate", new BsonDocument("_id", new BsonString(CONFIG_SET))
                .append("configsvr", BsonBoolean.TRUE)
                .append("members", new BsonArray(List.of(new BsonDocument("_id", new BsonInt32(0)).append("host", new BsonString(host))))));
    }

    /** One router's command line, for a mongos of major version {@code major} ({@link BinaryVersion}). */
    static List<String> routerCommand(Path mongos, int major, String configDb, int port, Path logPath) {
        List<String> command = new ArrayList<>(List.of(mongos.toString(),
                "--configdb", configDb,
                "--bind_ip", HOST,
                "--port", Integer.toString(port),
                "--logpath", logPath.toString(),
                "--setParameter", "enableTestCommands=1"));
        MongodReplicaSet.noUnixSocket(command, PathLookup.WINDOWS);
        MongodReplicaSet.quickSignalledShutdown(command, major, "mongosShutdownTimeoutMillisForSignaledShutdown");
        return List.copyOf(command);
    }

    /** mongodb://router0,router1/: the routers, for a driver or blackpipe. */
    public String uri() {
        return "mongodb://" + String.join(",", routers) + "/";
    }

    /** host:port of each router. */
    public List<String> routerAddresses() {
        return routers;
    }

    public String description() {
        return "sharded cluster of the mongod and mongos on PATH (version " + version + "), routers " + String.join(",", routers);
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        ShutdownHooks.remove(shutdownHook);
        processes.parallelStream().forEach(ManagedProcess::close);
        FileTrees.deleteQuietly(tempDir);
    }
}
