package io.blackpipe.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Date;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.bson.types.ObjectId;

/**
 * A scripted MongoDB upstream for tests: a small, independent wire responder that behaves as a
 * mongod 7.0 single-node replica-set primary does on exactly the paths the jongodb test server
 * lacks: streaming (exhaust) hello with moreToCome replies, exhaust getMore, silence on
 * moreToCome requests (w:0), OP_COMPRESSED negotiation and replies (snappy, zlib, zstd), OP_MSG
 * checksums. Enough of insert/find/getMore/killCursors/count/aggregate is implemented, over an
 * in-memory store, for the real Java driver to do real work against it, change streams included
 * (watch(), resuming from tokens, awaiting getMore: see {@link ScriptedMongodChangeStreams}).
 * {@link #failNext} answers a command once with a scripted reply, as a failCommand failpoint does.
 *
 * <p>Every frame in both directions is recorded for assertions. One thread per connection.
 */
public final class ScriptedMongod implements AutoCloseable {
    public static final String SET_NAME = "scripted-rs";
    /** The maxWireVersion hello reports unless the builder names another: mongod 7.0's. */
    public static final int MAX_WIRE_VERSION = 21;
    public static final int MAX_BSON_OBJECT_SIZE = 16 * 1024 * 1024;
    public static final int MAX_MESSAGE_SIZE_BYTES = 48_000_000;
    public static final int MAX_WRITE_BATCH_SIZE = 100_000;
    public static final ObjectId ELECTION_ID = new ObjectId("7fffffff0000000000000001");

    /** What the responder says it is in hello; only hello (and cluster-time gossip) depends on it. */
    public enum Role {
        /** A replica-set primary (the default). */
        PRIMARY,
        /** A replica-set secondary: isWritablePrimary false, secondary true; commands still run as on a primary. */
        SECONDARY,
        /** A standalone mongod: no setName, hosts, primary, me, electionId, and no $clusterTime. */
        STANDALONE,
        /** A mongos router: msg "isdbgrid", no replica-set fields; it gossips $clusterTime. Each has a store of its own here. */
        MONGOS;

        /** Not a replica-set member: no set fields in hello, no replSet commands. */
        boolean outsideASet() {
            return this == STANDALONE || this == MONGOS;
        }
    }

    /** A replSetStepDown this server obeyed, and who asked (null: an unauthenticated connection). */
    public record StepDownRequest(String user, String mechanism) {
    }

    private final ServerSocket serverSocket;
    private volatile Role role;
    private final int maxWireVersion;
    private final boolean sessions;
    private final boolean primaryReadsOnly;
    private final boolean refusesUnacknowledged;
    private final boolean lacksEndSessions;
    private final boolean reappliesRetriedWrites;
    private final boolean duplicateKeyAsCommandError;
    private final String version;
    private final Map<String, Long> replyDelays = new java.util.concurrent.ConcurrentHashMap<>();
    /** Access control; null: none (every command runs, as on a mongod without --auth). */
    private final ScriptedScramServer scram;
    private final List<StepDownRequest> stepDowns = new CopyOnWriteArrayList<>();
    private final EnumSet<ScriptedMongodCompressor> compressors;
    private final Thread acceptThread;
    private final ScriptedMongodCommands commands = new ScriptedMongodCommands(this);
    private final Set<ScriptedMongodConnection> connections = ConcurrentHashMap.newKeySet();
    private final AtomicInteger connectionIds = new AtomicInteger();
    private final AtomicInteger requestIds = new AtomicInteger(1_000_000);
    private volatile boolean closed;
    /** New connections are closed as soon as they are accepted, as mongod closes those past its maxIncomingConnections. */
    private volatile boolean refusingConnections;
    private volatile boolean pipelinedRepliesTogether;

    private volatile List<String> advertisedHosts;
    /** Members in the set's configuration that hello never lists (hidden, or delayed). */
    private volatile List<String> hiddenHosts = List.of();
    private volatile String advertisedMe;
    private volatile String advertisedPrimary;

    private final ObjectId processId = new ObjectId();
    private final Object topologyLock = new Object();
    private long topologyCounter; // guarded by topologyLock

    private final int clusterTimeSeconds = (int) (System.currentTimeMillis() / 1000);
    private final AtomicInteger clusterTimeIncrement = new AtomicInteger(1);

    private final List<ScriptedMongodFrame> received = new CopyOnWriteArrayList<>();
    private final List<ScriptedMongodFrame> sent = new CopyOnWriteArrayList<>();
    private final List<Throwable> errors = new CopyOnWriteArrayList<>();
    private final Map<ScriptedMongodCompressor, AtomicLong> compressedReceived = new EnumMap<>(ScriptedMongodCompressor.class);
    private final Map<ScriptedMongodCompressor, AtomicLong> compressedSent = new EnumMap<>(ScriptedMongodCompressor.class);
    private final AtomicLong moreToComeRepliesSent = new AtomicLong();
    /** One-shot replies tests scripted with {@link #failNext}, by command name, in order. */
    private final List<Map.Entry<String, BsonDocument>> scriptedReplies = new ArrayList<>(); // guarded by itself

    private ScriptedMongod(Builder b) throws IOException {
        this.role = b.role;
        this.maxWireVersion = b.maxWireVersion;
        this.sessions = b.sessions;
        this.primaryReadsOnly = b.primaryReadsOnly;
        this.refusesUnacknowledged = b.refusesUnacknowledged;
        this.lacksEndSessions = b.lacksEndSessions;
        this.reappliesRetriedWrites = b.reappliesRetriedWrites;
        this.duplicateKeyAsCommandError = b.duplicateKeyAsCommandError;
        this.version = b.version;
        this.scram = b.scram;
        this.compressors = EnumSet.noneOf(ScriptedMongodCompressor.class);
        this.compressors.addAll(b.compressors);
        for (ScriptedMongodCompressor c : ScriptedMongodCompressor.values()) {
            compressedReceived.put(c, new AtomicLong());
            compressedSent.put(c, new AtomicLong());
        }
        serverSocket = new ServerSocket();
        serverSocket.setReuseAddress(true);
        serverSocket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), b.port), 128);
        String self = address();
        advertisedHosts = b.hosts == null ? List.of(self) : List.copyOf(b.hosts);
        advertisedMe = b.me == null ? self : b.me;
        advertisedPrimary = b.primary == null ? self : b.primary;
        acceptThread = new Thread(this::acceptLoop, "scripted-mongod-accept-" + port());
        acceptThread.setDaemon(true);
        acceptThread.start();
    }

    /** Starts a responder on a free loopback port with all of snappy, zlib and zstd enabled. */
    public static ScriptedMongod start() throws IOException {
        return builder().start();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Options; everything has a mongod-like default. */
    public static final class Builder {
        private Set<ScriptedMongodCompressor> compressors =
                EnumSet.of(ScriptedMongodCompressor.SNAPPY, ScriptedMongodCompressor.ZLIB, ScriptedMongodCompressor.ZSTD);
        private int port;
        private List<String> hosts;
        private String me;
        private String primary;
        private Role role = Role.PRIMARY;
        private int maxWireVersion = MAX_WIRE_VERSION;
        private boolean sessions = true;
        private ScriptedScramServer scram;
        private boolean primaryReadsOnly;
        private boolean refusesUnacknowledged;
        private boolean lacksEndSessions;
        private boolean reappliesRetriedWrites;
        private boolean duplicateKeyAsCommandError;
        private String version = "7.0.0";

        private Builder() {
        }

        /**
         * Refuse a command with any $readPreference but primary (BadValue), hellos included, as jongodb does and no
         * mongod: the upstream the proxy drops read preferences for.
         */
        public Builder primaryReadsOnly() {
            this.primaryReadsOnly = true;
            return this;
        }

        /**
         * Refuse a write concern of w:0 (BadValue) on any command, and answer every request, moreToCome
         * ones too, as jongodb does and no mongod: the upstream the proxy sends w:0 writes as w:1 to.
         */
        public Builder refusesUnacknowledged() {
            this.refusesUnacknowledged = true;
            return this;
        }

        /** Answer endSessions with CommandNotFound, as jongodb does and no mongod since 3.6. */
        public Builder withoutEndSessions() {
            this.lacksEndSessions = true;
            return this;
        }

        /** Run a retryable write that comes again with its lsid and txnNumber again, as jongodb does and no mongod. */
        public Builder reappliesRetriedWrites() {
            this.reappliesRetriedWrites = true;
            return this;
        }

        /**
         * Refuse an insert that holds an _id already stored as the command's error (ok: 0, 11000 DuplicateKey), applying
         * none of its documents, as jongodb does; mongod answers ok: 1 with the duplicate in writeErrors.
         */
        public Builder duplicateKeyAsCommandError() {
            this.duplicateKeyAsCommandError = true;
            return this;
        }

        /** Require authentication with these users (mongod --auth); members of one set share the instance. */
        public Builder accessControl(ScriptedScramServer scram) {
            this.scram = scram;
            return this;
        }

        /** Answer hello as a replica-set secondary (set {@link #primary} to the primary's address). */
        public Builder secondary() {
            this.role = Role.SECONDARY;
            return this;
        }

        /** Answer hello as a standalone mongod (no replica-set fields at all). */
        public Builder standalone() {
            this.role = Role.STANDALONE;
            return this;
        }

        /** Answer hello as a mongos router of a sharded cluster (msg: isdbgrid). */
        public Builder mongos() {
            this.role = Role.MONGOS;
            return this;
        }

        /** The compressors the server agrees to (net.compression.compressors); none = never compress. */
        public Builder compressors(ScriptedMongodCompressor... compressors) {
            return compressors(List.of(compressors));
        }

        public Builder compressors(Collection<ScriptedMongodCompressor> compressors) {
            EnumSet<ScriptedMongodCompressor> set = EnumSet.noneOf(ScriptedMongodCompressor.class);
            set.addAll(compressors);
            set.remove(ScriptedMongodCompressor.NOOP); // mongod always accepts noop; it is not negotiated
            this.compressors = set;
            return this;
        }

        /** The loopback port to bind; 0 (the default) picks a free one. */
        public Builder port(int port) {
            this.port = port;
            return this;
        }

        /** The hello {@code hosts} list; default ["127.0.0.1:PORT"]. */
        public Builder hosts(List<String> hosts) {
            this.hosts = List.copyOf(hosts);
            return this;
        }

        /** The hello {@code me}; default "127.0.0.1:PORT". */
        public Builder me(String me) {
            this.me = me;
            return this;
        }

        /** The hello {@code primary}; default "127.0.0.1:PORT". */
        public Builder primary(String primary) {
            this.primary = primary;
            return this;
        }

        /** The maxWireVersion hello reports, to pass for another server version (8.2 is 27). */
        public Builder maxWireVersion(int maxWireVersion) {
            this.maxWireVersion = maxWireVersion;
            return this;
        }

        /** The version buildInfo tells ("7.0.0" unless set): jongodb 0.1.6 tells "8.0.0-jongodb". */
        public Builder version(String version) {
            this.version = version;
            return this;
        }

        /** Leave logicalSessionTimeoutMinutes out of hello: a server drivers use no sessions with, so retry no writes on. */
        public Builder withoutSessions() {
            this.sessions = false;
            return this;
        }

        public ScriptedMongod start() throws IOException {
            return new ScriptedMongod(this);
        }
    }

    // ---------------------------------------------------------------- addresses

    public int port() {
        return serverSocket.getLocalPort();
    }

    /** "127.0.0.1:PORT". */
    public String address() {
        return "127.0.0.1:" + port();
    }

    /** {@code mongodb://127.0.0.1:PORT/?directConnection=true}. */
    public String uri() {
        return uri("directConnection=true");
    }

    /** {@code mongodb://127.0.0.1:PORT/?<options>}, e.g. uri("replicaSet=scripted-rs&compressors=zstd"). */
    public String uri(String options) {
        return "mongodb://" + address() + "/" + (options == null || options.isEmpty() ? "" : "?" + options);
    }

    public Set<ScriptedMongodCompressor> compressors() {
        return EnumSet.copyOf(compressors);
    }

    public Role role() {
        return role;
    }

    // ---------------------------------------------------------------- topology

    /** Replaces the advertised {@code hosts}; call {@link #bumpTopologyVersion()} to wake streaming hellos. */
    public void setAdvertisedHosts(List<String> hosts) {
        this.advertisedHosts = List.copyOf(hosts);
    }

    public void setAdvertisedMe(String me) {
        this.advertisedMe = me;
    }

    public void setAdvertisedPrimary(String primary) {
        this.advertisedPrimary = primary;
    }

    public List<String> advertisedHosts() {
        return advertisedHosts;
    }

    /**
     * Members of the set that hello does not list, as a hidden (or delayed) member is: they show
     * only in replSetGetStatus, replSetGetConfig and serverStatus's replicationProgress.
     */
    public void setHiddenHosts(List<String> hosts) {
        this.hiddenHosts = List.copyOf(hosts);
    }

    public List<String> hiddenHosts() {
        return hiddenHosts;
    }

    /** The current {processId, counter}. */
    public BsonDocument topologyVersion() {
        synchronized (topologyLock) {
            return new BsonDocument("processId", new BsonObjectId(processId))
                    .append("counter", new BsonInt64(topologyCounter));
        }
    }

    /** Increments topologyVersion.counter, which makes every waiting awaitable hello answer at once. */
    public void bumpTopologyVersion() {
        synchronized (topologyLock) {
            topologyCounter++;
            topologyLock.notifyAll();
        }
    }

    /**
     * Waits up to {@code maxAwaitMs} for the topology to differ from {@code clientVersion}.
     * Returns at once if it already differs (other processId or counter). Returns early (false)
     * if the server is closing or {@code stillWanted} says to stop; true otherwise.
     */
    boolean awaitTopologyChange(BsonDocument clientVersion, long maxAwaitMs, java.util.function.BooleanSupplier stillWanted)
            throws InterruptedException {
        long deadline = System.nanoTime() + Math.max(0, maxAwaitMs) * 1_000_000L;
        while (true) {
            synchronized (topologyLock) {
                if (closed) {
                    return false;
                }
                if (!sameTopologyVersion(clientVersion)) {
                    return true;
                }
                long remainingMs = (deadline - System.nanoTime()) / 1_000_000L;
                if (remainingMs <= 0) {
                    return true;
                }
                topologyLock.wait(Math.min(remainingMs, 50));
            }
            if (!stillWanted.getAsBoolean()) {
                return false;
            }
        }
    }

    private boolean sameTopologyVersion(BsonDocument v) { // caller holds topologyLock
        if (v == null || !v.isObjectId("processId") || !v.isNumber("counter")) {
            return false;
        }
        return v.getObjectId("processId").getValue().equals(processId)
                && v.getNumber("counter").longValue() == topologyCounter;
    }

    /**
     * The hello / isMaster reply mongod 7.0 gives in this responder's {@link Role}. {@code name} is the
     * command name used: "hello" answers isWritablePrimary, isMaster/ismaster answer ismaster.
     */
    BsonDocument helloReply(String name, BsonDocument request, ScriptedMongodConnection conn) {
        BsonDocument r = new BsonDocument();
        if (request.getBoolean("helloOk", BsonBoolean.FALSE).getValue()) {
            r.append("helloOk", BsonBoolean.TRUE);
        }
        r.append("topologyVersion", topologyVersion());
        if (role.outsideASet()) {
            r.append(name.equals("hello") ? "isWritablePrimary" : "ismaster", BsonBoolean.TRUE);
            if (role == Role.MONGOS) {
                r.append("msg", new BsonString("isdbgrid"));
            }
        } else {
            BsonArray hosts = new BsonArray();
            for (String h : advertisedHosts) {
                hosts.add(new BsonString(h));
            }
            r.append("hosts", hosts);
            r.append("setName", new BsonString(SET_NAME));
            r.append("setVersion", new BsonInt32(1));
            r.append(name.equals("hello") ? "isWritablePrimary" : "ismaster", BsonBoolean.valueOf(role == Role.PRIMARY));
            r.append("secondary", BsonBoolean.valueOf(role == Role.SECONDARY));
            if (advertisedPrimary != null) { // none right after a stepdown, until an election
                r.append("primary", new BsonString(advertisedPrimary));
            }
            r.append("me", new BsonString(advertisedMe));
            if (role == Role.PRIMARY) {
                r.append("electionId", new BsonObjectId(ELECTION_ID));
            }
            BsonTimestamp opTime = clusterTime();
            BsonDocument opTimeDoc = new BsonDocument("ts", opTime).append("t", new BsonInt64(1));
            BsonDateTime writeDate = new BsonDateTime(opTime.getTime() * 1000L);
            r.append("lastWrite", new BsonDocument("opTime", opTimeDoc).append("lastWriteDate", writeDate)
                    .append("majorityOpTime", opTimeDoc.clone()).append("majorityWriteDate", writeDate));
        }
        r.append("maxBsonObjectSize", new BsonInt32(MAX_BSON_OBJECT_SIZE));
        r.append("maxMessageSizeBytes", new BsonInt32(MAX_MESSAGE_SIZE_BYTES));
        r.append("maxWriteBatchSize", new BsonInt32(MAX_WRITE_BATCH_SIZE));
        r.append("localTime", new BsonDateTime(new Date().getTime()));
        if (sessions) {
            r.append("logicalSessionTimeoutMinutes", new BsonInt32(30));
        }
        r.append("connectionId", new BsonInt32(conn.id()));
        r.append("minWireVersion", new BsonInt32(0));
        r.append("maxWireVersion", new BsonInt32(maxWireVersion));
        r.append("readOnly", BsonBoolean.FALSE);
        if (conn.auth() != null) {
            conn.auth().decorateHello(request, r);
        }
        List<ScriptedMongodCompressor> negotiated = conn.negotiateCompression(request);
        if (negotiated != null) {
            BsonArray names = new BsonArray();
            for (ScriptedMongodCompressor c : negotiated) {
                names.add(new BsonString(c.wireName()));
            }
            r.append("compression", names);
        }
        r.append("ok", new BsonDouble(1.0));
        appendClusterTime(r);
        return r;
    }

    // ---------------------------------------------------------------- replSetStepDown

    /**
     * replSetStepDown as mongod 4.2+ answers it: a primary becomes a secondary (no primary known
     * until an election), keeps its connections, tells waiting hellos, and replies ok.
     */
    BsonDocument stepDown(ScriptedMongodConnection conn) {
        if (role.outsideASet()) {
            return ScriptedMongodCommands.error(76, "NoReplicationEnabled", "not running with --replSet");
        }
        if (role != Role.PRIMARY) {
            return ScriptedMongodCommands.error(10107, "NotWritablePrimary", "not primary so can't step down");
        }
        role = Role.SECONDARY;
        advertisedPrimary = null;
        stepDowns.add(new StepDownRequest(conn.auth() == null ? null : conn.auth().user(),
                conn.auth() == null ? null : conn.auth().mechanism()));
        bumpTopologyVersion();
        return new BsonDocument("ok", new BsonDouble(1.0));
    }

    /** Every replSetStepDown this server obeyed, in order. */
    public List<StepDownRequest> stepDowns() {
        return new ArrayList<>(stepDowns);
    }

    ScriptedScramServer scram() {
        return scram;
    }

    // ---------------------------------------------------------------- cluster time

    /** The cluster time (and operationTime) its replies carry now: each write ticks it. */
    public BsonTimestamp clusterTime() {
        return new BsonTimestamp(clusterTimeSeconds, clusterTimeIncrement.get());
    }

    /** Advances the cluster time, as every write does. */
    BsonTimestamp tick() {
        return new BsonTimestamp(clusterTimeSeconds, clusterTimeIncrement.incrementAndGet());
    }

    /** Appends $clusterTime and operationTime, as a replica-set member does on every reply. */
    void appendClusterTime(BsonDocument reply) {
        if (role == Role.STANDALONE) {
            return; // a standalone mongod has no cluster time to gossip
        }
        BsonTimestamp now = clusterTime();
        reply.append("$clusterTime", new BsonDocument("clusterTime", now)
                .append("signature", new BsonDocument("hash", new BsonBinary(new byte[20]))
                        .append("keyId", new BsonInt64(0))));
        reply.append("operationTime", now);
    }

    // ---------------------------------------------------------------- instrumentation

    /** Every frame received so far, in arrival order (a snapshot). */
    public List<ScriptedMongodFrame> framesReceived() {
        return new ArrayList<>(received);
    }

    /** Every frame sent so far, in order (a snapshot). */
    public List<ScriptedMongodFrame> framesSent() {
        return new ArrayList<>(sent);
    }

    public List<ScriptedMongodFrame> framesReceived(Predicate<ScriptedMongodFrame> filter) {
        return received.stream().filter(filter).toList();
    }

    public List<ScriptedMongodFrame> framesSent(Predicate<ScriptedMongodFrame> filter) {
        return sent.stream().filter(filter).toList();
    }

    /** Received requests whose command name is {@code commandName}. */
    public List<ScriptedMongodFrame> commandsReceived(String commandName) {
        return framesReceived(f -> commandName.equals(f.commandName()));
    }

    public long compressedFramesReceived(ScriptedMongodCompressor c) {
        return compressedReceived.get(c).get();
    }

    public long compressedFramesSent(ScriptedMongodCompressor c) {
        return compressedSent.get(c).get();
    }

    /** Replies sent with the moreToCome flag (streaming hello and exhaust getMore). */
    public long moreToComeRepliesSent() {
        return moreToComeRepliesSent.get();
    }

    /** Protocol errors and unexpected failures on connections (each closed the connection). */
    public List<Throwable> errors() {
        return new ArrayList<>(errors);
    }

    public int connectionsAccepted() {
        return connectionIds.get();
    }

    public int openConnections() {
        return connections.size();
    }

    /**
     * From now on, closes each new connection as soon as it is accepted (before reading from it), as mongod closes the
     * connections past its maxIncomingConnections; or takes them again. The open ones go on.
     */
    public void refuseNewConnections(boolean refuse) {
        refusingConnections = refuse;
    }

    /**
     * From now on, sends a connection's replies at once only when no request waits behind them (or takes up flushing each
     * as it goes again): the replies to pipelined requests then reach the proxy together, in one read, as they do when its
     * event loop is busy while they arrive.
     */
    public void sendPipelinedRepliesTogether(boolean together) {
        pipelinedRepliesTogether = together;
    }

    boolean sendsPipelinedRepliesTogether() {
        return pipelinedRepliesTogether;
    }

    /** Whether it serves MongoDB 8.0's bulkWrite command, as a mongod whose wire version is 8.0's (25) or later does. */
    boolean servesClientBulkWrite() {
        return maxWireVersion >= 25;
    }

    /** Forgets recorded frames and counters (not documents or topology). */
    public void clearRecords() {
        received.clear();
        sent.clear();
        compressedReceived.values().forEach(a -> a.set(0));
        compressedSent.values().forEach(a -> a.set(0));
        moreToComeRepliesSent.set(0);
    }

    void recordReceived(ScriptedMongodFrame f) {
        received.add(f);
        if (f.compressor() != null) {
            compressedReceived.get(f.compressor()).incrementAndGet();
        }
    }

    void recordSent(ScriptedMongodFrame f) {
        sent.add(f);
        if (f.compressor() != null) {
            compressedSent.get(f.compressor()).incrementAndGet();
        }
        if (f.moreToCome()) {
            moreToComeRepliesSent.incrementAndGet();
        }
    }

    void recordError(Throwable t) {
        errors.add(t);
    }

    // ---------------------------------------------------------------- stored documents

    /** Copies of the documents stored in {@code db.collection}, in insertion order. */
    public List<BsonDocument> documents(String db, String collection) {
        return commands.documents(db + "." + collection);
    }

    /** Seeds documents into {@code db.collection} (an _id is added if missing). */
    public void insertDocuments(String db, String collection, List<BsonDocument> docs) {
        commands.seed(db + "." + collection, docs);
    }

    /** Namespaces ("db.collection") that hold documents. */
    public Set<String> namespaces() {
        return commands.namespaces();
    }

    /** Ids of cursors that are still open (change stream cursors included). */
    public Set<Long> openCursorIds() {
        return commands.openCursorIds();
    }

    /**
     * Copies of the change events logged so far, oldest first (the latest
     * {@value ScriptedMongodChangeStreams#MAX_EVENTS} are kept), each as a change stream with
     * fullDocument "default" shows it: every insert, delete and drop this server applied, including
     * {@link #insertDocuments seeded} documents.
     */
    public List<BsonDocument> changeEvents() {
        return commands.changeStreams().events();
    }

    // ---------------------------------------------------------------- scripted replies

    /**
     * Answers the next request named {@code commandName} with {@code reply} instead of running it,
     * once, as mongod's failCommand failpoint does with {@code times: 1}: the reply is sent as given
     * (its errorLabels are exactly the ones given, as failCommand's errorLabels replace the server's)
     * with $clusterTime and operationTime added. Any command but hello (and requests sent with
     * moreToCome, which get no reply) can be scripted. Several calls queue in order; a getMore
     * failed this way leaves its cursor open, as failCommand does.
     */
    public void failNext(String commandName, BsonDocument reply) {
        synchronized (scriptedReplies) {
            scriptedReplies.add(Map.entry(commandName, reply.clone()));
        }
    }

    /**
     * Runs {@code commandName} as it comes from now on and holds its reply for {@code millis}, as a reply
     * slow on its way back: the write has happened before the reply leaves. A reply {@link #failNext} scripted
     * for it is held as long.
     */
    public void delayReplies(String commandName, long millis) {
        replyDelays.put(commandName, millis);
    }

    /** Waits out the delay {@link #delayReplies} set for this command, if any. */
    void awaitReplyDelay(String commandName) throws InterruptedException {
        Long millis = replyDelays.get(commandName);
        if (millis != null) {
            Thread.sleep(millis);
        }
    }

    /** Scripted replies not yet sent. */
    public int pendingScriptedReplies() {
        synchronized (scriptedReplies) {
            return scriptedReplies.size();
        }
    }

    /** The scripted reply for this request, removing it, or null when none is queued for {@code commandName}. */
    BsonDocument takeScriptedReply(String commandName) {
        synchronized (scriptedReplies) {
            for (int i = 0; i < scriptedReplies.size(); i++) {
                if (scriptedReplies.get(i).getKey().equals(commandName)) {
                    BsonDocument reply = scriptedReplies.remove(i).getValue().clone();
                    appendClusterTime(reply);
                    return reply;
                }
            }
            return null;
        }
    }

    // ---------------------------------------------------------------- plumbing

    ScriptedMongodCommands commands() {
        return commands;
    }

    boolean isCompressorEnabled(ScriptedMongodCompressor c) {
        return c == ScriptedMongodCompressor.NOOP || compressors.contains(c);
    }

    int nextRequestId() {
        return requestIds.incrementAndGet();
    }

    /**
     * jongodb's refusal of a command with a read preference other than primary, or with w:0, or of
     * endSessions, when this server was built to refuse them; null when it takes the command.
     */
    BsonDocument jongodbsRefusal(BsonDocument command) {
        if (lacksEndSessions && command.containsKey("endSessions")) {
            return ScriptedMongodCommands.error(59, "CommandNotFound", "no such command: endsessions");
        }
        if (primaryReadsOnly && command.isDocument("$readPreference")
                && !"primary".equals(command.getDocument("$readPreference").getString("mode", new BsonString("primary")).getValue())) {
            return ScriptedMongodCommands.error(14, "BadValue", "single-node replica-set profile supports readPreference mode 'primary' only");
        }
        if (refusesUnacknowledged && command.isDocument("writeConcern") && command.getDocument("writeConcern").isNumber("w")
                && command.getDocument("writeConcern").getNumber("w").intValue() == 0) {
            return ScriptedMongodCommands.error(14, "BadValue", "single-node replica-set profile supports writeConcern w=1 or w='majority' only");
        }
        return null;
    }

    /** Whether a retried write runs again, as on jongodb, rather than being answered from its first run, as on mongod. */
    boolean reappliesRetriedWrites() {
        return reappliesRetriedWrites;
    }

    /** The version buildInfo tells. */
    String version() {
        return version;
    }

    /** Whether an insert's duplicate _id is the command's error, as on jongodb, rather than a write error, as on mongod. */
    boolean duplicateKeyAsCommandError() {
        return duplicateKeyAsCommandError;
    }

    /** Whether a request that asks for no reply (moreToCome) is answered all the same, as jongodb answers it. */
    boolean answersUnaskedRequests() {
        return refusesUnacknowledged;
    }

    boolean isClosed() {
        return closed;
    }

    void connectionClosed(ScriptedMongodConnection c) {
        connections.remove(c);
    }

    private void acceptLoop() {
        while (!closed) {
            Socket s;
            try {
                s = serverSocket.accept();
            } catch (IOException e) {
                if (!closed) {
                    recordError(e);
                }
                return;
            }
            if (refusingConnections) {
                try {
                    s.close();
                } catch (IOException ignored) {
                    // closed either way
                }
                continue;
            }
            try {
                s.setTcpNoDelay(true);
            } catch (IOException ignored) {
                // best effort
            }
            ScriptedMongodConnection c = new ScriptedMongodConnection(this, s, connectionIds.incrementAndGet());
            connections.add(c);
            if (closed) {
                c.close();
                return;
            }
            c.start();
        }
    }

    /** Closes the listener and every connection. */
    @Override
    public void close() {
        closed = true;
        synchronized (topologyLock) {
            topologyLock.notifyAll();
        }
        try {
            serverSocket.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        for (ScriptedMongodConnection c : connections) {
            c.close();
        }
        try {
            acceptThread.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
