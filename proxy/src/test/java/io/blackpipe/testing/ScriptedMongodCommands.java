package io.blackpipe.testing;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ThreadLocalRandom;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.types.ObjectId;

/**
 * The commands a {@link ScriptedMongod} implements, over an in-memory store. Replies are shaped
 * as mongod 7.0's. Unsupported query features are refused with an error, never ignored.
 */
final class ScriptedMongodCommands {
    private static final int DEFAULT_FIRST_BATCH = 101;

    private final ScriptedMongod server;
    private final ScriptedMongodChangeStreams changeStreams;
    private final Map<String, List<BsonDocument>> store = new LinkedHashMap<>();
    private final Map<Long, Cursor> cursors = new HashMap<>();
    /**
     * Each session's latest retryable write (its txnNumber and reply), so that a retry is answered, not
     * re-applied: as mongod's config.transactions, one entry per session, not one per write.
     */
    private final Map<BsonValue, ExecutedWrite> executedWrites = new HashMap<>();

    private record ExecutedWrite(long txnNumber, BsonDocument reply) {
    }

    private static final class Cursor {
        final String ns;
        final Deque<BsonDocument> remaining;

        Cursor(String ns, List<BsonDocument> remaining) {
            this.ns = ns;
            this.remaining = new ArrayDeque<>(remaining);
        }
    }

    /** A filter or pipeline this responder does not implement. */
    private static final class Unsupported extends RuntimeException {
        Unsupported(String message) {
            super(message);
        }
    }

    ScriptedMongodCommands(ScriptedMongod server) {
        this.server = server;
        this.changeStreams = new ScriptedMongodChangeStreams(server);
    }

    ScriptedMongodChangeStreams changeStreams() {
        return changeStreams;
    }

    // ---------------------------------------------------------------- reply helpers

    static BsonDocument error(int code, String codeName, String errmsg) {
        return new BsonDocument("ok", new BsonDouble(0)).append("errmsg", new BsonString(errmsg))
                .append("code", new BsonInt32(code)).append("codeName", new BsonString(codeName));
    }

    static boolean isOk(BsonDocument reply) {
        BsonValue ok = reply.get("ok");
        return ok != null && ok.isNumber() && ok.asNumber().doubleValue() == 1.0;
    }

    private static BsonDocument ok() {
        return new BsonDocument("ok", new BsonDouble(1.0));
    }

    /** Runs one command (not hello, which the connection handles) and returns the reply body. */
    BsonDocument run(String name, BsonDocument cmd) {
        BsonDocument reply;
        try {
            if (cmd.containsKey("autocommit") || cmd.containsKey("startTransaction")) {
                reply = error(20, "IllegalOperation", "ScriptedMongod does not implement transactions");
            } else if (name.equals("getMore") && changeStreams.isCursor(cmd.get("getMore"))) {
                // Not under this lock: it awaits events, which writes (holding this lock) append.
                reply = changeStreams.getMore(cmd);
            } else {
                synchronized (this) {
                    reply = dispatch(name, cmd);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // the server is closing this connection
            reply = error(11600, "InterruptedAtShutdown", "interrupted at shutdown");
        } catch (Unsupported e) {
            reply = error(2, "BadValue", e.getMessage());
        } catch (ClassCastException | org.bson.BsonInvalidOperationException e) {
            reply = error(14, "TypeMismatch", "malformed '" + name + "' command: " + e.getMessage());
        }
        server.appendClusterTime(reply);
        return reply;
    }

    private BsonDocument dispatch(String name, BsonDocument cmd) {
        switch (name) {
            case "ping":
            case "endSessions":
                return ok();
            case "buildInfo":
            case "buildinfo":
                return buildInfo();
            case "insert":
                return retryable(cmd, () -> insert(cmd));
            case "delete":
                return retryable(cmd, () -> delete(cmd));
            case "update":
                return retryable(cmd, () -> update(cmd));
            case "find":
                return find(cmd);
            case "getMore":
                return getMore(cmd);
            case "killCursors":
                return killCursors(cmd);
            case "count":
                return count(cmd);
            case "aggregate":
                return aggregate(cmd);
            case "drop":
                return drop(cmd);
            case "listCommands":
                return listCommands();
            case "bulkWrite":
                return server.servesClientBulkWrite() ? retryable(cmd, () -> bulkWrite(cmd))
                        : error(59, "CommandNotFound", "no such command: 'bulkWrite'");
            default:
                return error(59, "CommandNotFound", "no such command: '" + name + "'");
        }
    }

    /** What this node serves, under its commands' names: aliases (buildinfo) unlisted, as mongod's listCommands leaves them out. */
    private BsonDocument listCommands() {
        BsonDocument commands = new BsonDocument();
        for (String name : List.of("aggregate", "authenticate", "buildInfo", "count", "currentOp", "delete", "drop", "endSessions",
                "find", "getMore", "hello", "insert", "isMaster", "killCursors", "listCommands", "ping", "replSetGetConfig",
                "replSetGetStatus", "replSetStepDown", "saslContinue", "saslStart", "serverStatus", "update")) {
            commands.append(name, new BsonDocument("help", new BsonString("")));
        }
        if (server.servesClientBulkWrite()) {
            commands.append("bulkWrite", new BsonDocument("help", new BsonString("")));
        }
        return new BsonDocument("commands", commands).append("ok", new BsonDouble(1));
    }

    private BsonDocument retryable(BsonDocument cmd, java.util.function.Supplier<BsonDocument> write) {
        BsonValue session = null;
        long txnNumber = -1;
        if (cmd.containsKey("txnNumber") && cmd.isDocument("lsid") && !server.reappliesRetriedWrites()) {
            session = cmd.getDocument("lsid").get("id");
            txnNumber = cmd.getNumber("txnNumber").longValue();
            ExecutedWrite latest = executedWrites.get(session);
            if (latest != null && latest.txnNumber() == txnNumber) {
                return latest.reply().clone();
            }
            if (latest != null && latest.txnNumber() > txnNumber) {
                return error(225, "TransactionTooOld", "Cannot start transaction " + txnNumber + " on session "
                        + session + " because a newer transaction " + latest.txnNumber() + " has already started");
            }
        }
        BsonDocument reply = write.get();
        if (session != null && isOk(reply)) {
            executedWrites.put(session, new ExecutedWrite(txnNumber, reply.clone()));
        }
        return reply;
    }

    private BsonDocument writeReply(int n) {
        // A write that changed documents logged a change event per document, each at its own tick:
        // its opTime is the last of them, as mongod's is its last oplog entry's.
        return new BsonDocument("n", new BsonInt32(n))
                .append("electionId", new BsonObjectId(ScriptedMongod.ELECTION_ID))
                .append("opTime", new BsonDocument("ts", n > 0 ? server.clusterTime() : server.tick())
                        .append("t", new BsonInt64(1)))
                .append("ok", new BsonDouble(1.0));
    }

    private static String ns(BsonDocument cmd, String nameField) {
        return cmd.getString("$db").getValue() + "." + cmd.getString(nameField).getValue();
    }

    // ---------------------------------------------------------------- commands

    private BsonDocument buildInfo() {
        return new BsonDocument("version", new BsonString(server.version()))
                .append("gitVersion", new BsonString("scripted"))
                .append("versionArray", new BsonArray(List.of(new BsonInt32(7), new BsonInt32(0), new BsonInt32(0),
                        new BsonInt32(0))))
                .append("bits", new BsonInt32(64))
                .append("debug", BsonBoolean.FALSE)
                .append("maxBsonObjectSize", new BsonInt32(ScriptedMongod.MAX_BSON_OBJECT_SIZE))
                .append("ok", new BsonDouble(1.0));
    }

    private BsonDocument insert(BsonDocument cmd) {
        String ns = ns(cmd, "insert");
        boolean ordered = cmd.getBoolean("ordered", BsonBoolean.TRUE).getValue();
        List<BsonDocument> target = store.computeIfAbsent(ns, k -> new ArrayList<>());
        BsonArray writeErrors = new BsonArray();
        int n = 0;
        List<BsonValue> docs = cmd.getArray("documents", new BsonArray());
        if (server.duplicateKeyAsCommandError()) { // as jongodb: the batch is refused whole, as the command's error
            for (BsonValue doc : docs) {
                BsonValue id = doc.asDocument().get("_id");
                if (id != null && target.stream().anyMatch(d -> valuesEqual(d.get("_id"), id))) {
                    return error(11000, "DuplicateKey", "E11000 duplicate key error index: _id_ dup key: { _id: " + id + " }");
                }
            }
        }
        for (int i = 0; i < docs.size(); i++) {
            BsonDocument doc = withId(docs.get(i).asDocument());
            BsonValue id = doc.get("_id");
            if (target.stream().anyMatch(d -> valuesEqual(d.get("_id"), id))) {
                writeErrors.add(new BsonDocument("index", new BsonInt32(i)).append("code", new BsonInt32(11000))
                        .append("errmsg", new BsonString("E11000 duplicate key error collection: " + ns
                                + " index: _id_ dup key: { _id: " + id + " }"))
                        .append("keyPattern", new BsonDocument("_id", new BsonInt32(1)))
                        .append("keyValue", new BsonDocument("_id", id)));
                if (ordered) {
                    break;
                }
                continue;
            }
            target.add(doc);
            changeStreams.inserted(ns, doc);
            n++;
        }
        BsonDocument reply = writeReply(n);
        if (!writeErrors.isEmpty()) {
            reply.put("writeErrors", writeErrors);
        }
        return reply;
    }

    /**
     * MongoDB 8.0's bulkWrite: each of its ops, across the namespaces of nsInfo, run as its collection's write command would
     * run it alone; the results in a cursor (only the errors when errorsOnly), the counts beside them. An ordered one stops
     * at its first error.
     */
    private BsonDocument bulkWrite(BsonDocument cmd) {
        List<BsonValue> nsInfo = cmd.getArray("nsInfo").getValues();
        boolean ordered = cmd.getBoolean("ordered", BsonBoolean.TRUE).getValue();
        boolean errorsOnly = cmd.getBoolean("errorsOnly", BsonBoolean.FALSE).getValue();
        BsonArray results = new BsonArray();
        Map<String, Integer> counts = new LinkedHashMap<>();
        for (String count : List.of("nErrors", "nInserted", "nMatched", "nModified", "nUpserted", "nDeleted")) {
            counts.put(count, 0);
        }
        List<BsonValue> ops = cmd.getArray("ops").getValues();
        for (int i = 0; i < ops.size(); i++) {
            BsonDocument op = ops.get(i).asDocument();
            String kind = op.getFirstKey();
            String[] namespace = nsInfo.get(op.getNumber(kind).intValue()).asDocument().getString("ns").getValue().split("\\.", 2);
            BsonDocument alone = new BsonDocument(kind, new BsonString(namespace[1])).append("$db", new BsonString(namespace[0]));
            BsonDocument reply = switch (kind) {
                case "insert" -> insert(alone.append("documents", new BsonArray(List.of(op.getDocument("document")))));
                case "update" -> update(alone.append("updates", new BsonArray(List.of(new BsonDocument("q", op.getDocument("filter"))
                        .append("u", op.get("updateMods")).append("multi", op.getBoolean("multi", BsonBoolean.FALSE))
                        .append("upsert", op.getBoolean("upsert", BsonBoolean.FALSE))))));
                case "delete" -> delete(alone.append("deletes", new BsonArray(List.of(new BsonDocument("q", op.getDocument("filter"))
                        .append("limit", new BsonInt32(op.getBoolean("multi", BsonBoolean.FALSE).getValue() ? 0 : 1))))));
                default -> throw new Unsupported("unknown bulkWrite op '" + kind + "'");
            };
            BsonDocument result = new BsonDocument("ok", new BsonDouble(1)).append("idx", new BsonInt32(i));
            if (reply.containsKey("writeErrors")) {
                BsonDocument error = reply.getArray("writeErrors").get(0).asDocument().clone();
                error.remove("index");
                BsonDocument failed = new BsonDocument("ok", new BsonDouble(0)).append("idx", new BsonInt32(i)).append("n", new BsonInt32(0));
                failed.putAll(error);
                results.add(failed);
                counts.merge("nErrors", 1, Integer::sum);
                if (ordered) {
                    break;
                }
                continue;
            }
            int n = reply.getNumber("n").intValue();
            result.append("n", new BsonInt32(n));
            switch (kind) {
                case "insert" -> counts.merge("nInserted", n, Integer::sum);
                case "delete" -> counts.merge("nDeleted", n, Integer::sum);
                default -> {
                    int upserted = reply.containsKey("upserted") ? 1 : 0;
                    counts.merge("nMatched", n - upserted, Integer::sum);
                    counts.merge("nModified", reply.getNumber("nModified").intValue(), Integer::sum);
                    counts.merge("nUpserted", upserted, Integer::sum);
                    result.append("nModified", reply.get("nModified"));
                    if (upserted == 1) {
                        result.append("upserted", new BsonDocument("_id", reply.getArray("upserted").get(0).asDocument().get("_id")));
                    }
                }
            }
            if (!errorsOnly) {
                results.add(result);
            }
        }
        BsonDocument reply = new BsonDocument("cursor", new BsonDocument("id", new BsonInt64(0)).append("firstBatch", results)
                .append("ns", new BsonString("admin.$cmd.bulkWrite")));
        counts.forEach((count, value) -> reply.append(count, new BsonInt32(value)));
        return reply.append("ok", new BsonDouble(1));
    }

    private BsonDocument delete(BsonDocument cmd) {
        String ns = ns(cmd, "delete");
        List<BsonDocument> target = store.getOrDefault(ns, new ArrayList<>());
        int n = 0;
        for (BsonValue v : cmd.getArray("deletes", new BsonArray())) {
            BsonDocument spec = v.asDocument();
            BsonDocument q = spec.getDocument("q", new BsonDocument());
            long limit = spec.isNumber("limit") ? spec.getNumber("limit").longValue() : 0;
            for (Iterator<BsonDocument> it = target.iterator(); it.hasNext(); ) {
                BsonDocument doc = it.next();
                if (matches(doc, q)) {
                    it.remove();
                    changeStreams.deleted(ns, doc);
                    n++;
                    if (limit == 1) {
                        break;
                    }
                }
            }
        }
        return writeReply(n);
    }

    /**
     * Updates by {@link ScriptedMongodUpdates}' operators, multi or not; an upsert that matches nothing
     * inserts the filter's fields with the update applied. Change streams do not see updates.
     */
    private BsonDocument update(BsonDocument cmd) {
        String ns = ns(cmd, "update");
        List<BsonValue> updates = cmd.getArray("updates", new BsonArray()).getValues();
        for (BsonValue spec : updates) {
            try {
                ScriptedMongodUpdates.check(spec.asDocument().get("u", new BsonDocument()));
            } catch (IllegalArgumentException e) {
                throw new Unsupported(e.getMessage()); // refused whole, as nothing has changed yet
            }
        }
        List<BsonDocument> target = store.computeIfAbsent(ns, k -> new ArrayList<>());
        int matched = 0;
        int modified = 0;
        BsonArray upserted = new BsonArray();
        BsonArray writeErrors = new BsonArray();
        for (int i = 0; i < updates.size() && writeErrors.isEmpty(); i++) {
            BsonDocument spec = updates.get(i).asDocument();
            BsonDocument q = spec.getDocument("q", new BsonDocument());
            BsonDocument u = spec.getDocument("u");
            boolean multi = spec.getBoolean("multi", BsonBoolean.FALSE).getValue();
            try {
                int hits = 0;
                for (BsonDocument doc : target) {
                    if (matches(doc, q) && (multi || hits == 0)) {
                        hits++;
                        modified += ScriptedMongodUpdates.apply(doc, u) ? 1 : 0;
                    }
                }
                matched += hits;
                if (hits == 0 && spec.getBoolean("upsert", BsonBoolean.FALSE).getValue()) {
                    BsonDocument doc = withId(equalities(q));
                    ScriptedMongodUpdates.apply(doc, u);
                    target.add(doc);
                    changeStreams.inserted(ns, doc);
                    upserted.add(new BsonDocument("index", new BsonInt32(i)).append("_id", doc.get("_id")));
                }
            } catch (IllegalArgumentException e) { // a field of the wrong type: this update fails, as ordered stops there
                writeErrors.add(new BsonDocument("index", new BsonInt32(i)).append("code", new BsonInt32(14))
                        .append("codeName", new BsonString("TypeMismatch")).append("errmsg", new BsonString(e.getMessage())));
            }
        }
        BsonDocument reply = writeReply(matched + upserted.size());
        reply.put("nModified", new BsonInt32(modified));
        if (!upserted.isEmpty()) {
            reply.put("upserted", upserted);
        }
        if (!writeErrors.isEmpty()) {
            reply.put("writeErrors", writeErrors);
        }
        return reply;
    }

    /** The fields an upsert's new document takes from its filter: its equalities, those inside $and included. */
    private static BsonDocument equalities(BsonDocument filter) {
        BsonDocument fields = new BsonDocument();
        filter.forEach((key, value) -> {
            if (key.equals("$and")) {
                value.asArray().forEach(clause -> fields.putAll(equalities(clause.asDocument())));
            } else {
                fields.put(key, value);
            }
        });
        return fields;
    }

    private BsonDocument find(BsonDocument cmd) {
        String ns = ns(cmd, "find");
        rejectNonEmpty(cmd, "sort");
        rejectNonEmpty(cmd, "projection");
        long limit = cmd.isNumber("limit") ? cmd.getNumber("limit").longValue() : 0;
        long skip = cmd.isNumber("skip") ? cmd.getNumber("skip").longValue() : 0;
        if (limit < 0 || skip < 0) {
            return error(51024, "Location51024", "limit and skip must be non-negative");
        }
        List<BsonDocument> results = select(ns, cmd.getDocument("filter", new BsonDocument()), skip, limit);
        int batchSize = cmd.isNumber("batchSize") ? cmd.getNumber("batchSize").intValue() : DEFAULT_FIRST_BATCH;
        if (batchSize < 0) {
            return error(51024, "Location51024", "BatchSize value must be non-negative");
        }
        return cursorReply("firstBatch", ns, results, batchSize,
                cmd.getBoolean("singleBatch", BsonBoolean.FALSE).getValue());
    }

    private BsonDocument cursorReply(String batchField, String ns, List<BsonDocument> results, int batchSize,
                                     boolean singleBatch) {
        int take = Math.min(batchSize, results.size());
        List<BsonDocument> batch = new ArrayList<>(results.subList(0, take));
        List<BsonDocument> rest = results.subList(take, results.size());
        long id = 0;
        if (!rest.isEmpty() && !singleBatch) {
            do {
                id = ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
            } while (cursors.containsKey(id));
            cursors.put(id, new Cursor(ns, rest));
        }
        return cursorDocument(batchField, ns, batch, id);
    }

    private static BsonDocument cursorDocument(String batchField, String ns, List<BsonDocument> batch, long id) {
        return new BsonDocument("cursor", new BsonDocument(batchField, new BsonArray(new ArrayList<>(batch)))
                .append("id", new BsonInt64(id)).append("ns", new BsonString(ns)))
                .append("ok", new BsonDouble(1.0));
    }

    private BsonDocument getMore(BsonDocument cmd) {
        long id = cmd.getNumber("getMore").longValue();
        String ns = ns(cmd, "collection");
        Cursor c = cursors.get(id);
        if (c == null) {
            return error(43, "CursorNotFound", "cursor id " + id + " not found");
        }
        if (!c.ns.equals(ns)) {
            return error(13, "Unauthorized", "Requested getMore on namespace '" + ns
                    + "', but cursor belongs to a different namespace " + c.ns);
        }
        int batchSize = cmd.isNumber("batchSize") ? cmd.getNumber("batchSize").intValue() : Integer.MAX_VALUE;
        if (batchSize <= 0) {
            batchSize = Integer.MAX_VALUE;
        }
        List<BsonDocument> batch = new ArrayList<>();
        while (batch.size() < batchSize && !c.remaining.isEmpty()) {
            batch.add(c.remaining.poll());
        }
        if (c.remaining.isEmpty()) {
            cursors.remove(id);
            id = 0;
        }
        return cursorDocument("nextBatch", ns, batch, id);
    }

    private BsonDocument killCursors(BsonDocument cmd) {
        BsonArray killed = new BsonArray();
        BsonArray notFound = new BsonArray();
        for (BsonValue v : cmd.getArray("cursors", new BsonArray())) {
            long id = v.asNumber().longValue();
            (cursors.remove(id) != null || changeStreams.kill(id) ? killed : notFound).add(new BsonInt64(id));
        }
        return new BsonDocument("cursorsKilled", killed).append("cursorsNotFound", notFound)
                .append("cursorsAlive", new BsonArray()).append("cursorsUnknown", new BsonArray())
                .append("ok", new BsonDouble(1.0));
    }

    private BsonDocument count(BsonDocument cmd) {
        String ns = ns(cmd, "count");
        long limit = cmd.isNumber("limit") ? Math.abs(cmd.getNumber("limit").longValue()) : 0;
        long skip = cmd.isNumber("skip") ? cmd.getNumber("skip").longValue() : 0;
        List<BsonDocument> results = select(ns, cmd.getDocument("query", new BsonDocument()), skip, limit);
        return new BsonDocument("n", new BsonInt32(results.size())).append("ok", new BsonDouble(1.0));
    }

    /** $match (equality), $skip, $limit, $count, and $group with a constant _id and constant $sum. */
    private BsonDocument aggregate(BsonDocument cmd) {
        if (ScriptedMongodChangeStreams.involved(cmd)) {
            return changeStreams.aggregate(cmd);
        }
        if (!cmd.isString("aggregate")) {
            throw new Unsupported("ScriptedMongod implements only collection aggregates");
        }
        String ns = ns(cmd, "aggregate");
        List<BsonDocument> docs = select(ns, new BsonDocument(), 0, 0);
        for (BsonValue stageValue : cmd.getArray("pipeline")) {
            BsonDocument stage = stageValue.asDocument();
            String op = stage.getFirstKey();
            BsonValue arg = stage.get(op);
            switch (op) {
                case "$match" -> docs = docs.stream().filter(d -> matches(d, arg.asDocument())).toList();
                case "$skip" -> docs = docs.subList((int) Math.min(docs.size(), arg.asNumber().longValue()), docs.size());
                case "$limit" -> docs = docs.subList(0, (int) Math.min(docs.size(), arg.asNumber().longValue()));
                case "$count" -> docs = docs.isEmpty() ? List.of()
                        : List.of(new BsonDocument(arg.asString().getValue(), new BsonInt32(docs.size())));
                case "$group" -> docs = group(docs, arg.asDocument());
                default -> throw new Unsupported("ScriptedMongod does not implement pipeline stage " + op);
            }
        }
        BsonDocument cursorOpts = cmd.getDocument("cursor", new BsonDocument());
        int batchSize = cursorOpts.isNumber("batchSize") ? cursorOpts.getNumber("batchSize").intValue() : DEFAULT_FIRST_BATCH;
        return cursorReply("firstBatch", ns, new ArrayList<>(docs), batchSize, false);
    }

    private static List<BsonDocument> group(List<BsonDocument> docs, BsonDocument spec) {
        BsonValue id = spec.get("_id");
        if (id == null || (id.isString() && id.asString().getValue().startsWith("$")) || id.isDocument()) {
            throw new Unsupported("ScriptedMongod implements $group only with a constant _id");
        }
        if (docs.isEmpty()) {
            return List.of();
        }
        BsonDocument out = new BsonDocument("_id", id);
        for (Map.Entry<String, BsonValue> e : spec.entrySet()) {
            if (e.getKey().equals("_id")) {
                continue;
            }
            BsonValue acc = e.getValue();
            if (!acc.isDocument() || !acc.asDocument().containsKey("$sum") || !acc.asDocument().get("$sum").isNumber()) {
                throw new Unsupported("ScriptedMongod implements $group accumulators only as {$sum: <number>}");
            }
            long sum = acc.asDocument().getNumber("$sum").longValue() * docs.size();
            out.append(e.getKey(), sum == (int) sum ? new BsonInt32((int) sum) : new BsonInt64(sum));
        }
        return List.of(out);
    }

    private BsonDocument drop(BsonDocument cmd) {
        String ns = ns(cmd, "drop");
        boolean existed = store.remove(ns) != null;
        if (existed) {
            changeStreams.dropped(ns);
        }
        BsonDocument reply = existed
                ? new BsonDocument("nIndexesWas", new BsonInt32(1)).append("ns", new BsonString(ns)) : new BsonDocument();
        cursors.values().removeIf(c -> c.ns.equals(ns));
        return reply.append("ok", new BsonDouble(1.0));
    }

    // ---------------------------------------------------------------- querying

    private static void rejectNonEmpty(BsonDocument cmd, String field) {
        if (cmd.isDocument(field) && !cmd.getDocument(field).isEmpty()) {
            throw new Unsupported("ScriptedMongod does not implement find '" + field + "'");
        }
    }

    private List<BsonDocument> select(String ns, BsonDocument filter, long skip, long limit) {
        List<BsonDocument> out = new ArrayList<>();
        long skipped = 0;
        for (BsonDocument d : store.getOrDefault(ns, List.of())) {
            if (!matches(d, filter)) {
                continue;
            }
            if (skipped++ < skip) {
                continue;
            }
            out.add(d.clone());
            if (limit > 0 && out.size() >= limit) {
                break;
            }
        }
        return out;
    }

    /**
     * Top-level field equality (an array field matches if it contains the value; null matches missing),
     * and $and of such filters (the driver's Filters.and).
     */
    static boolean matches(BsonDocument doc, BsonDocument filter) {
        for (Map.Entry<String, BsonValue> e : filter.entrySet()) {
            String key = e.getKey();
            BsonValue want = e.getValue();
            if (key.equals("$and") && want.isArray()) {
                if (!want.asArray().stream().allMatch(clause -> matches(doc, clause.asDocument()))) {
                    return false;
                }
                continue;
            }
            if (key.startsWith("$") || key.contains(".")
                    || (want.isDocument() && !want.asDocument().isEmpty() && want.asDocument().getFirstKey().startsWith("$"))
                    || want.isRegularExpression()) {
                throw new Unsupported("ScriptedMongod implements only top-level equality filters, not {" + key + ": "
                        + want + "}");
            }
            BsonValue have = doc.get(key);
            if (have == null) {
                if (!want.isNull()) {
                    return false;
                }
            } else if (!valuesEqual(have, want)
                    && !(have.isArray() && have.asArray().stream().anyMatch(v -> valuesEqual(v, want)))) {
                return false;
            }
        }
        return true;
    }

    /** BSON equality as the server compares: numbers by value across int32/int64/double/decimal. */
    static boolean valuesEqual(BsonValue a, BsonValue b) {
        if (a == null || b == null) {
            return a == b;
        }
        if (a.isNumber() && b.isNumber()) { // int32, int64, double
            if (a.isDouble() || b.isDouble()) {
                return a.asNumber().doubleValue() == b.asNumber().doubleValue();
            }
            return a.asNumber().longValue() == b.asNumber().longValue();
        }
        if (a.isDocument() && b.isDocument()) {
            BsonDocument x = a.asDocument();
            BsonDocument y = b.asDocument();
            if (x.size() != y.size()) {
                return false;
            }
            Iterator<Map.Entry<String, BsonValue>> i = x.entrySet().iterator();
            Iterator<Map.Entry<String, BsonValue>> j = y.entrySet().iterator();
            while (i.hasNext()) {
                Map.Entry<String, BsonValue> p = i.next();
                Map.Entry<String, BsonValue> q = j.next();
                if (!p.getKey().equals(q.getKey()) || !valuesEqual(p.getValue(), q.getValue())) {
                    return false;
                }
            }
            return true;
        }
        if (a.isArray() && b.isArray()) {
            List<BsonValue> x = a.asArray().getValues();
            List<BsonValue> y = b.asArray().getValues();
            if (x.size() != y.size()) {
                return false;
            }
            for (int k = 0; k < x.size(); k++) {
                if (!valuesEqual(x.get(k), y.get(k))) {
                    return false;
                }
            }
            return true;
        }
        return a.equals(b);
    }

    private static BsonDocument withId(BsonDocument doc) {
        if (doc.containsKey("_id")) {
            return doc.clone();
        }
        BsonDocument d = new BsonDocument("_id", new BsonObjectId(new ObjectId()));
        d.putAll(doc.clone());
        return d;
    }

    // ---------------------------------------------------------------- test access

    synchronized List<BsonDocument> documents(String ns) {
        List<BsonDocument> out = new ArrayList<>();
        for (BsonDocument d : store.getOrDefault(ns, List.of())) {
            out.add(d.clone());
        }
        return out;
    }

    synchronized void seed(String ns, List<BsonDocument> docs) {
        List<BsonDocument> target = store.computeIfAbsent(ns, k -> new ArrayList<>());
        for (BsonDocument d : docs) {
            BsonDocument doc = withId(d);
            target.add(doc);
            changeStreams.inserted(ns, doc);
        }
    }

    synchronized Set<String> namespaces() {
        Set<String> out = new TreeSet<>();
        store.forEach((k, v) -> {
            if (!v.isEmpty()) {
                out.add(k);
            }
        });
        return out;
    }

    synchronized Set<Long> openCursorIds() {
        Set<Long> out = new TreeSet<>(cursors.keySet());
        out.addAll(changeStreams.cursorIds());
        return out;
    }
}
