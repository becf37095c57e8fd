package io.blackpipe.upstream;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The jongodb engine (a MongoDB-compatible server, not MongoDB) as a single-node replica set on
 * loopback. It is the lane of last resort: no mongod, no Docker, but npm. Known gaps in 0.1.6: no
 * drop/dropDatabase, no $pull, primary reads only, retried writes run again (blackpipe makes up for the last two).
 */
public final class JongodbUpstream implements LocalUpstream {
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration HELLO_TIMEOUT = Duration.ofSeconds(10);

    private final ManagedProcess process;
    private final Path tempDir;
    private final JongodbReadyLine address;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Thread shutdownHook;

    private JongodbUpstream(ManagedProcess process, Path tempDir, JongodbReadyLine address) {
        this.process = process;
        this.tempDir = tempDir;
        this.address = address;
        this.shutdownHook = ShutdownHooks.register("blackpipe-jongodb-stop", this::close);
    }

    /** Installs jongodb if needed (see {@link JongodbInstaller#fromEnvironment()}) and starts it. */
    public static JongodbUpstream start() throws IOException {
        return start(JongodbInstaller.fromEnvironment());
    }

    /** As {@link #start()}; {@code otherWays}: what to do instead when it cannot run (see {@link JongodbInstaller#ensureInstalled(String)}). */
    public static JongodbUpstream start(String otherWays) throws IOException {
        return start(JongodbInstaller.fromEnvironment(), otherWays);
    }

    public static JongodbUpstream start(JongodbInstaller installer) throws IOException {
        return start(installer, JongodbInstaller.TESTS_OTHER_WAYS);
    }

    private static JongodbUpstream start(JongodbInstaller installer, String otherWays) throws IOException {
        requireSupportedPlatform(otherWays);
        Path binary = installer.ensureInstalled(otherWays);
        Path tempDir = Files.createTempDirectory("blackpipe-jongodb-");
        StartingServers starting = new StartingServers("blackpipe-jongodb-start-stop", tempDir);
        boolean started = false;
        try {
            // Port 0: jongodb binds any free port and reports it in its ready line, so there is
            // no window in which another process could take a port we picked in advance.
            ManagedProcess process = starting.add(ManagedProcess.start("jongodb " + JongodbInstaller.VERSION, List.of(binary.toString(),
                    "--host=127.0.0.1", "--port=0", "--topology-profile=singleNodeReplicaSet"),
                    tempDir.resolve("jongodb.log")));
            String line = process.awaitLine(JongodbReadyLine::isReadyLine, READY_TIMEOUT);
            ManagedProcess running = process;
            JongodbReadyLine address = JongodbReadyLine.parse(line).orElseThrow(() -> new IOException(
                    "jongodb printed a ready line blackpipe cannot parse: '" + line + "'" + running.outputTail()));
            HelloProbe.await(address.host(), address.port(), HelloProbe.WRITABLE_PRIMARY, "a writable primary",
                    HELLO_TIMEOUT, process);
            JongodbUpstream upstream = new JongodbUpstream(process, tempDir, address);
            started = true;
            return upstream;
        } finally {
            starting.end(started); // whatever went wrong (even an Error), no server is left running that nobody will stop
        }
    }

    /** The npm package holds a linux-x64-glibc binary only; say so before npm gives a vaguer error. */
    private static void requireSupportedPlatform(String otherWays) throws IOException {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        if (!os.contains("linux") || !(arch.equals("amd64") || arch.equals("x86_64"))) {
            throw new IOException("the jongodb engine (" + JongodbInstaller.PACKAGE + "@" + JongodbInstaller.VERSION
                    + ") runs on linux x64 only, this is " + os + "/" + arch
                    + "; " + otherWays + " instead");
        }
    }

    @Override
    public String uri() {
        return address.uri();
    }

    @Override
    public String description() {
        return "jongodb " + JongodbInstaller.VERSION + " single-node replica set at " + address.host() + ":" + address.port();
    }

    /** Commands apps and test suites often send that jongodb answers with CommandNotFound (59). */
    static final List<String> MISSING_COMMANDS = List.of("create", "drop", "dropDatabase", "dropIndexes", "renameCollection",
            "listCollections", "listDatabases");
    /** Update operators it refuses (BadValue, 14). */
    static final List<String> MISSING_UPDATE_OPERATORS = List.of("$push", "$pull");

    @Override
    public List<String> caveats() {
        // its refusals of read preferences other than primary and of w:0 writes, its lack of endSessions, its second run
        // of a retried write and a write's duplicate key as a command error (a batch's applying none) are not among them:
        // blackpipe makes up for each (MemberQuirks), and for a commit's loss of the writes beside it (CommitsAlone)
        String commands = String.join(", ", MISSING_COMMANDS.subList(0, MISSING_COMMANDS.size() - 1)) + " or "
                + MISSING_COMMANDS.get(MISSING_COMMANDS.size() - 1);
        return List.of("jongodb " + JongodbInstaller.VERSION + " has no " + commands + " command and no "
                        + String.join(" or ", MISSING_UPDATE_OPERATORS) + " update operator: it refuses them (CommandNotFound,"
                        + " BadValue), with or without blackpipe; with mongod on PATH, local starts a real replica set instead",
                "jongodb runs a transaction on a copy of the data taken as it began and puts back at its commit each"
                        + " document it wrote: a write outside the transaction to such a document after it began is lost,"
                        + " where mongod refuses the transaction's write (WriteConflict, which withTransaction retries) or"
                        + " holds the other write until the transaction ends; blackpipe sends each commit alone, which keeps"
                        + " the writes to other documents, but cannot tell which documents a transaction's copy holds",
                "jongodb's bulkWrite command is one of its own (one collection's operations), not MongoDB 8.0's: a driver's"
                        + " client-wide bulk write (the Java driver's MongoClient.bulkWrite, the Node.js driver's"
                        + " client.bulkWrite) is refused (TypeMismatch), with or without blackpipe, as mongod before 8.0"
                        + " refuses it (CommandNotFound); a collection's bulk write works");
    }

    public String host() {
        return address.host();
    }

    public int port() {
        return address.port();
    }

    /** The replica set name jongodb reports (jongodb-rs0 unless configured otherwise). */
    public String replicaSetName() {
        return address.replicaSet();
    }

    /** jongodb's stdout and stderr; deleted on close. */
    public Path logFile() {
        return process.logFile();
    }

    public boolean isRunning() {
        return process.isAlive();
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        ShutdownHooks.remove(shutdownHook);
        process.close();
        FileTrees.deleteQuietly(tempDir);
    }

    @Override
    public String toString() {
        return description();
    }
}
