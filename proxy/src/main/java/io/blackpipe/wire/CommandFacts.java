package io.blackpipe.wire;

import io.netty.buffer.ByteBuf;
import java.util.Set;
import java.util.UUID;

/**
 * The few fields of a request that decisions need, read by scanning the command's top-level
 * elements once. Nothing else of the command is decoded.
 *
 * @param name          the command name (the first element), e.g. "insert", "hello"
 * @param database      {@code $db} (or the OP_QUERY collection's database)
 * @param collection    the first element's value when it is a string naming the target collection, getMore's
 *                      {@code collection}, else "" (a whole namespace for a command that names one: see
 *                      {@link #namespaceCollection})
 * @param lsid          the logical session id, or null
 * @param txnNumber     the transaction number, or -1 when absent
 * @param inTransaction true when the command is part of a multi-document transaction (autocommit:false)
 * @param firstStage    an aggregate's first pipeline stage when it is one the proxy tells apart
 *                      ({@value #CHANGE_STREAM}, {@value #LIST_SEARCH_INDEXES}, {@value #COLL_STATS}), else ""
 * @param handshake     true for the connection handshake (hello/isMaster carrying client metadata)
 * @param compressionRequested true when the handshake lists compressors
 * @param appName       client.application.name from the handshake, or null
 * @param fingerprint   the {@link CommandFingerprint} of an OP_MSG command with a session and no
 *                      txnNumber (the commands whose retries only it can recognise), else 0
 */
public record CommandFacts(
        int requestId,
        int opCode,
        String name,
        String database,
        String collection,
        int flags,
        UUID lsid,
        long txnNumber,
        boolean inTransaction,
        String firstStage,
        boolean handshake,
        boolean compressionRequested,
        String appName,
        long fingerprint) {

    public static final String CHANGE_STREAM = "$changeStream";
    /**
     * Commands whose first value is a string that names no collection (a parameter, a log, a user or
     * role, a version): mongod's namespace for them is the database alone, and so is theirs here. mongosh
     * sends {getParameter: 'foo'} and {getLog: 'startupWarnings'} at every start.
     */
    private static final Set<String> NAMES_NO_COLLECTION = Set.of("getParameter", "getLog", "createUser", "updateUser",
            "dropUser", "usersInfo", "createRole", "updateRole", "dropRole", "rolesInfo", "grantRolesToUser",
            "revokeRolesFromUser", "grantRolesToRole", "revokeRolesFromRole", "grantPrivilegesToRole",
            "revokePrivilegesFromRole", "setFeatureCompatibilityVersion", "logApplicationMessage");
    /**
     * Commands whose first value names the namespace they act on, whatever their $db: mongod gives renameCollection the
     * collection it renames (its failpoint's namespace matches that), mongos its sharding commands the collection or
     * database they shard, move or split (by their other names too: mongos takes shardcollection for shardCollection).
     */
    private static final Set<String> NAMES_ITS_NAMESPACE = Set.of("renameCollection", "shardCollection", "shardcollection",
            "reshardCollection", "commitReshardCollection", "abortReshardCollection", "cleanupReshardCollection",
            "refineCollectionShardKey", "unshardCollection", "abortUnshardCollection", "moveCollection", "abortMoveCollection",
            "enableSharding", "enablesharding", "movePrimary", "moveprimary", "moveChunk", "movechunk", "moveRange", "split",
            "mergeChunks", "mergeAllChunksOnShard", "clearJumboFlag", "balancerCollectionStatus", "configureCollectionBalancing",
            "setAllowMigrations", "updateZoneKeyRange", "analyzeShardKey", "configureQueryAnalyzer", "dataSize", "datasize",
            "splitVector", "checkShardingIndex", "getShardVersion", "getshardversion", "cleanupOrphaned");
    /** listSearchIndexes is an aggregate that starts with this stage. */
    public static final String LIST_SEARCH_INDEXES = "$listSearchIndexes";
    /**
     * estimatedDocumentCount was, for drivers that followed the CRUD spec of 2021 (the Go driver 1.8 among them), an
     * aggregate that starts with this stage ({$collStats: {count: {}}}) when the server was 4.9 or newer.
     */
    public static final String COLL_STATS = "$collStats";

    /** The database of the namespace the server gives this command: {@code $db}, or the one its first value names. */
    public String namespaceDatabase() {
        if (!NAMES_ITS_NAMESPACE.contains(name)) {
            return database;
        }
        int dot = collection.indexOf('.');
        return dot < 0 ? (collection.isEmpty() ? database : collection) : collection.substring(0, dot);
    }

    /** The collection of the namespace the server gives this command, "" for a database's. */
    public String namespaceCollection() {
        if (!NAMES_ITS_NAMESPACE.contains(name)) {
            return collection;
        }
        int dot = collection.indexOf('.');
        return dot < 0 ? "" : collection.substring(dot + 1);
    }

    /** An aggregate whose pipeline opens a change stream: mongod runs $changeStream only as the first stage. */
    public boolean changeStream() {
        return firstStage.equals(CHANGE_STREAM);
    }

    public boolean moreToCome() {
        return opCode == OpCode.OP_MSG && (flags & OpMsg.MORE_TO_COME) != 0;
    }

    public boolean exhaustAllowed() {
        return opCode == OpCode.OP_MSG && (flags & OpMsg.EXHAUST_ALLOWED) != 0;
    }

    public boolean isHello() {
        return isHelloName(name);
    }

    public boolean hasTxnNumber() {
        return txnNumber >= 0;
    }

    public static boolean isHelloName(String name) {
        return "hello".equals(name) || "isMaster".equals(name) || "ismaster".equals(name);
    }

    /** The facts of one request; a connection reads its requests with its own {@link CommandScanner}. */
    public static CommandFacts ofOpMsg(ByteBuf frame, OpMsg msg) {
        return new CommandScanner().ofOpMsg(frame, msg);
    }

    public static CommandFacts ofOpQuery(ByteBuf frame, OpQuery query) {
        return scan(frame, null, OpCode.OP_QUERY, query.flags(), query.command(frame), query.database(), new CommandScanner());
    }

    /**
     * One pass over the body's top level: the facts, and where the fingerprint's runs are (OP_MSG
     * only), with what {@code scanner} keeps between a connection's commands.
     */
    static CommandFacts scan(ByteBuf frame, OpMsg msg, int opCode, int flags, BsonCursor body, String database,
                             CommandScanner scanner) {
        RecentStrings recent = scanner.recent;
        String name = "";
        String collection = "";
        UUID lsid = null;
        long txnNumber = -1;
        boolean inTransaction = false;
        String firstStage = "";
        boolean hasClient = false;
        boolean compression = false;
        String appName = null;
        CommandFingerprint.Runs runs = msg == null ? null : scanner.runs.clear();
        boolean first = true;
        boolean getMore = false;
        boolean aggregate = false;
        while (body.next()) {
            if (runs != null) {
                runs.add(body);
            }
            if (first) {
                first = false;
                name = body.name(recent);
                if (body.type() == BsonCursor.STRING && !NAMES_NO_COLLECTION.contains(name)) {
                    collection = body.stringValue(recent);
                } else if (body.type() == BsonCursor.DOCUMENT && name.equals("explain")) {
                    collection = explainedCollection(body.documentValue(), recent); // mongod gives explain its command's namespace
                }
                getMore = name.equals("getMore");
                aggregate = name.equals("aggregate");
            } else if (aggregate && body.nameIs("pipeline") && body.type() == BsonCursor.ARRAY) {
                firstStage = firstStage(body.documentValue());
            } else if (getMore && body.nameIs("collection") && body.type() == BsonCursor.STRING) {
                collection = body.stringValue(recent); // getMore's first value is the cursor id; the server takes its namespace from here
            } else if (body.nameIs("$db") && body.type() == BsonCursor.STRING) {
                database = body.stringValue(recent);
            } else if (body.nameIs("lsid") && body.type() == BsonCursor.DOCUMENT) {
                lsid = sessionId(frame, body.documentValue(), scanner);
            } else if (body.nameIs("txnNumber") && body.isNumber()) {
                txnNumber = body.longValue();
            } else if (body.nameIs("autocommit") && body.type() == BsonCursor.BOOLEAN) {
                inTransaction = !body.booleanValue();
            } else if (body.nameIs("client") && body.type() == BsonCursor.DOCUMENT) {
                hasClient = true;
                appName = applicationName(body.documentValue());
            } else if (body.nameIs("compression") && body.type() == BsonCursor.ARRAY) {
                compression = body.documentValue().next();
            }
        }
        boolean handshake = hasClient && isHelloName(name);
        long fingerprint = runs != null && lsid != null && txnNumber < 0 ? runs.hash(frame, msg) : 0;
        return new CommandFacts(frame.getIntLE(frame.readerIndex() + 4), opCode, name,
                database == null ? "" : database, collection, flags, lsid, txnNumber, inTransaction,
                firstStage, handshake, compression, appName, fingerprint);
    }

    /** The collection the explained command names ({find: 'c'}), else "". */
    private static String explainedCollection(BsonCursor explained, RecentStrings recent) {
        if (!explained.next() || explained.type() != BsonCursor.STRING || NAMES_NO_COLLECTION.contains(explained.name(recent))) {
            return "";
        }
        return explained.stringValue(recent);
    }

    /** A pipeline's first stage when it is one the proxy tells apart, else "": compared in place, nothing decoded. */
    private static String firstStage(BsonCursor pipeline) {
        if (!pipeline.next() || pipeline.type() != BsonCursor.DOCUMENT) {
            return "";
        }
        BsonCursor stage = pipeline.documentValue();
        if (!stage.next()) {
            return "";
        }
        return stage.nameIs(CHANGE_STREAM) ? CHANGE_STREAM : stage.nameIs(LIST_SEARCH_INDEXES) ? LIST_SEARCH_INDEXES
                : stage.nameIs(COLL_STATS) ? COLL_STATS : "";
    }

    private static UUID sessionId(ByteBuf frame, BsonCursor lsid, CommandScanner scanner) {
        if (lsid.find("id") && lsid.type() == BsonCursor.BINARY && frame.getIntLE(lsid.valueOffset()) == 16) {
            return scanner.sessionId(frame, lsid.valueOffset() + 5);
        }
        return null;
    }

    private static String applicationName(BsonCursor client) {
        if (client.find("application") && client.type() == BsonCursor.DOCUMENT) {
            BsonCursor application = client.documentValue();
            if (application.find("name") && application.type() == BsonCursor.STRING) {
                return application.stringValue();
            }
        }
        return null;
    }
}
