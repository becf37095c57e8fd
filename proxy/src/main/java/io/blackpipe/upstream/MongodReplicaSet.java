package io.blackpipe.upstream;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntFunction;
import java.util.stream.Collectors;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;

/**
 * A real 3-member replica set of the mongod found on PATH, on loopback ports with throw-away data
 * directories. Member 0 gets the highest priority so the primary is predictable.
 */
public final class MongodReplicaSet implements LocalUpstream {
    public static final String DEFAULT_SET_NAME = "blackpipe-rs";
    public static final int MEMBERS = 3;
    private static final String HOST = "127.0.0.1";
    private static final Duration MEMBER_START_TIMEOUT = Duration.ofSeconds(60);
    // A first election among fresh members waits out the election timeout (10s by default).
    private static final Duration ELECTION_TIMEOUT = Duration.ofSeconds(90);
    private static final int QUIESCE_MILLIS = 500;

    private final String setName;
    private final List<ManagedProcess> members;
    private final List<String> hosts;
    private final String version;
    private final Path tempDir;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Thread shutdownHook;

    private MongodReplicaSet(String setName, List<ManagedProcess> members, List<String> hosts, String version, Path tempDir) {
        this.setName = setName;
        this.members = members;
        this.hosts = hosts;
        this.version = version;
        this.tempDir = tempDir;
        this.shutdownHook = ShutdownHooks.register("blackpipe-mongod-stop", this::close);
    }

    /** Starts a set with the mongod on PATH. */
    public static MongodReplicaSet start() throws IOException {
        return start(PathLookup.require("mongod"), DEFAULT_SET_NAME);
    }

    public static MongodReplicaSet start(Path mongod, String setName) throws IOException {
        Path tempDir = Files.createTempDirectory("blackpipe-mongod-");
        StartingServers started = new StartingServers("blackpipe-mongod-start-stop", tempDir);
        boolean ready = false;
        try {
            int major = BinaryVersion.major(mongod);
            int[] ports = FreePorts.allocate(MEMBERS);
            List<String> hosts = new ArrayList<>();
            for (int i = 0; i < MEMBERS; i++) {
                Path memberDir = Files.createDirectories(tempDir.resolve("member" + i));
                Path dbPath = Files.createDirectories(memberDir.resolve("db"));
                started.add(ManagedProcess.start("mongod member " + i + " (port " + ports[i] + ")",
                        memberCommand(mongod, major, setName, ports[i], dbPath, memberDir.resolve("mongod.log")),
                        memberDir.resolve("stdout.log")));
                hosts.add(HOST + ":" + ports[i]);
            }
            for (int i = 0; i < MEMBERS; i++) {
                HelloProbe.await(HOST, ports[i], HelloProbe.ANSWERS, "reachable", MEMBER_START_TIMEOUT, started.all().get(i));
            }
            HelloProbe.runOk(HOST, ports[0], initiateCommand(setName, hosts));
            HelloProbe.await(HOST, ports[0], HelloProbe.WRITABLE_PRIMARY, "primary of " + setName, ELECTION_TIMEOUT, started.all().get(0));
            for (int i = 1; i < MEMBERS; i++) {
                HelloProbe.await(HOST, ports[i], HelloProbe.SECONDARY, "a secondary of " + setName, ELECTION_TIMEOUT, started.all().get(i));
            }
            String version = HelloProbe.runOk(HOST, ports[0], new BsonDocument("buildInfo", new BsonInt32(1)))
                    .getString("version", new BsonString("unknown")).getValue();
            MongodReplicaSet set = new MongodReplicaSet(setName, started.all(), List.copyOf(hosts), version, tempDir);
            ready = true;
            return set;
        } catch (IOException | RuntimeException e) {
            throw new IOException("could not start a " + MEMBERS + "-member replica set with " + mongod
                    + ": " + e.getMessage() + logTails(tempDir, started.count(), i -> "member" + i, "mongod.log"), e);
        } finally {
            started.end(ready); // whatever went wrong (even an Error), no member is left running that nobody will stop
        }
    }

    /**
     * mongod and mongos write to --logpath, not stdout, so failures quote those logs before the temp dir goes: the
     * {@code logName} in the directory {@code dirOf} names for each of the first {@code started} processes.
     */
    static String logTails(Path tempDir, int started, IntFunction<String> dirOf, String logName) {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < started; i++) {
            Path log = tempDir.resolve(dirOf.apply(i)).resolve(logName);
            text.append(System.lineSeparator()).append("--- last lines of ").append(dirOf.apply(i)).append("/").append(logName)
                    .append(":").append(System.lineSeparator()).append(FileTrees.tail(log, 15));
        }
        return text.toString();
    }

    /** The command line of one member, for a mongod of major version {@code major} ({@link BinaryVersion}). */
    static List<String> memberCommand(Path mongod, int major, String setName, int port, Path dbPath, Path logPath) {
        List<String> command = new ArrayList<>(List.of(mongod.toString(),
                "--replSet", setName,
                "--bind_ip", HOST,
                "--port", Integer.toString(port),
                "--dbpath", dbPath.toString(),
                "--logpath", logPath.toString(),
                "--setParameter", "enableTestCommands=1",
                // Three members share one machine: keep each one's cache and oplog small.
                "--wiredTigerCacheSizeGB", "0.25",
                "--oplogSize", "128"));
        noUnixSocket(command, PathLookup.WINDOWS);
        quickSignalledShutdown(command, major, "shutdownTimeoutMillisForSignaledShutdown");
        return List.copyOf(command);
    }

    /** As {@link #noUnixSocket(List, boolean)} on this machine: for the tests' standalone mongod too. */
    public static void noUnixSocket(List<String> command) {
        noUnixSocket(command, PathLookup.WINDOWS);
    }

    /**
     * A socket file left in /tmp by a killed member stops a later one on its port: none is made. A Windows mongod has
     * no Unix domain socket, and refuses to start with the option.
     */
    static void noUnixSocket(List<String> command, boolean windows) {
        if (!windows) {
            command.add("--nounixsocket");
        }
    }

    /**
     * From 5.0 a server asked to stop (SIGTERM) first waits out a quiesce, 15 s by default: a secondary or a router
     * for the whole of it, longer than {@link ManagedProcess}'s grace, so every close ended in a kill. Test servers
     * need no quiesce; earlier versions have no such parameter, and refuse to start with it.
     */
    static void quickSignalledShutdown(List<String> command, int major, String parameter) {
        if (major >= 5) {
            command.add("--setParameter");
            command.add(parameter + "=" + QUIESCE_MILLIS);
        }
    }

    /** replSetInitiate for the given members; member 0 has priority 2, the others 1. */
    static BsonDocument initiateCommand(String setName, List<String> hosts) {
        BsonArray members = new BsonArray();
        for (int i = 0; i < hosts.size(); i++) {
            members.add(new BsonDocument("_id", new BsonInt32(i))
                    .append("host", new BsonString(hosts.get(i)))
                    .append("priority", new BsonInt32(i == 0 ? 2 : 1)));
        }
        BsonDocument config = new BsonDocument("_id", new BsonString(setName)).append("members", members);
        return new BsonDocument("replSetInitiate", config);
    }

    /** mongodb://h:p1,h:p2,h:p3/?replicaSet=NAME for a list of member addresses. */
    static String uriFor(List<String> hosts, String setName) {
        return "mongodb://" + String.join(",", hosts) + "/?replicaSet=" + setName;
    }

    @Override
    public String uri() {
        return uriFor(hosts, setName);
    }

    @Override
    public String description() {
        return "mongod " + MEMBERS + "-member replica set (mongod version " + version + ") at " + String.join(",", hosts);
    }

    public String setName() {
        return setName;
    }

    /** host:port of each member, member 0 (the preferred primary) first. */
    public List<String> memberAddresses() {
        return hosts;
    }

    public String mongodVersion() {
        return version;
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        ShutdownHooks.remove(shutdownHook);
        // Close members in parallel: each may take seconds to shut down cleanly.
        members.parallelStream().forEach(ManagedProcess::close);
        FileTrees.deleteQuietly(tempDir);
    }

    @Override
    public String toString() {
        return description() + " [" + members.stream().map(m -> "pid " + m.pid()).collect(Collectors.joining(", ")) + "]";
    }
}
