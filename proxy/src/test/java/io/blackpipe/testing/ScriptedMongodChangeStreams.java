package io.blackpipe.testing;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.bson.BsonArray;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;

/**
 * Change streams of a {@link ScriptedMongod}, served as a mongod 7.0 replica-set primary serves
 * them to a driver: an event log (the oplog's part a change stream sees), {@code aggregate} with a
 * first {@code $changeStream} stage, awaiting {@code getMore}, and killCursors.
 *
 * <p><b>Events.</b> Every insert, delete and drop the responder applies appends one event, shaped
 * as mongod 7.0 shows it without showExpandedEvents: {@code _id} (the resume token),
 * {@code operationType}, {@code clusterTime}, {@code wallTime}, {@code fullDocument} (inserts),
 * {@code ns: {db, coll}}, {@code documentKey: {_id}} (inserts, deletes). Each event takes its own
 * tick of the server's cluster time, so replies never gossip a time behind an event they could
 * return. A collection-level stream ends with an {@code invalidate} after its collection's drop, as
 * mongod's does. The log keeps the latest {@link #MAX_EVENTS} events, as a capped oplog does:
 * resuming from before what is kept fails with ChangeStreamHistoryLost (286).
 *
 * <p><b>Resume tokens.</b> {@code {_data: <upper-case hex>}} begins as mongod's KeyString does
 * (0x82, then the cluster time's seconds and increment, big-endian), so tokens sort by cluster
 * time as strings; the rest is this responder's own: {@code 00} for a high-water mark, or
 * {@code 01}, {@code 00}/{@code 01} (fromInvalidate) and the collection's UUID for an event, so a
 * high-water mark sorts before an event of its time and an event before its invalidate, as in
 * mongod. Another deployment's token (a real mongod's, or another ScriptedMongod's) is never found.
 *
 * <p>Lock order: {@link ScriptedMongodCommands} (writes) then this object. A getMore waits on this
 * object's monitor only, so writes go on while it waits and wake it.
 */
final class ScriptedMongodChangeStreams {
    /** Events kept (the "oplog" size); resuming from before the oldest kept fails with 286. */
    static final int MAX_EVENTS = 10_000;
    /** mongod's await for a tailable awaitData getMore that gives no maxTimeMS. */
    private static final long DEFAULT_AWAIT_MS = 1000;
    private static final int DEFAULT_FIRST_BATCH = 101;
    private static final String NON_RESUMABLE = "NonResumableChangeStreamError";
    /** The fields of mongod 7.0's $changeStream spec; any other is refused as mongod's IDL parser does. */
    private static final Set<String> SPEC_FIELDS = Set.of("resumeAfter", "startAfter", "startAtOperationTime",
            "fullDocument", "fullDocumentBeforeChange", "allChangesForCluster", "showMigrationEvents",
            "showSystemEvents", "allowToRunOnConfigDB", "allowToRunOnSystemNS", "showExpandedEvents",
            "showRawUpdateDescription");
    private static final Pattern TOKEN = Pattern.compile("82([0-9A-F]{8})([0-9A-F]{8})([0-9A-F]*)");
    private static final Pattern OWN_EVENT = Pattern.compile("01(0[01])[0-9A-F]{32}");

    private final ScriptedMongod server;
    private final List<Event> log = new ArrayList<>(); // in cluster-time (= token) order
    /** Cluster time of the oldest entry the log still holds once the cap dropped events; null before (see {@link #oplogStart()}). */
    private BsonTimestamp oplogStart;
    /** Collection UUIDs by namespace; a drop forgets one, so the collection made again has another, as in mongod. */
    private final Map<String, UUID> uuids = new HashMap<>();
    private final Map<Long, Stream> streams = new HashMap<>();

    private record Event(String token, BsonTimestamp clusterTime, String db, String coll, String operationType,
                         BsonDocument document) {
    }

    /** An open change stream cursor. */
    private static final class Stream {
        final long id;
        final String db;
        final String coll; // null: every collection of db
        final String cursorNs;
        final List<BsonDocument> matches; // $match stages after $changeStream
        /** Events whose token sorts after this are still to scan. */
        String position;
        /** The client's event token (resumeAfter / startAfter) not yet seen in the log. */
        String mustFind;
        /** startAfter an invalidate: the drop {@link #mustFind} names ends nothing. */
        boolean startAfterInvalidate;
        BsonDocument pendingInvalidate;
        boolean inUse;

        Stream(long id, String db, String coll, List<BsonDocument> matches) {
            this.id = id;
            this.db = db;
            this.coll = coll;
            this.cursorNs = db + "." + (coll == null ? "$cmd.aggregate" : coll);
            this.matches = matches;
        }

        boolean sees(Event e) {
            return e.db.equals(db) && (coll == null ? !e.coll.startsWith("system.") : e.coll.equals(coll));
        }

        boolean passes(BsonDocument event) {
            return matches.stream().allMatch(m -> ScriptedMongodCommands.matches(event, m));
        }
    }

    /** One batch: the events, the postBatchResumeToken, and whether the stream ended (invalidate). */
    private record Batch(List<BsonDocument> events, String postBatchResumeToken, boolean ended) {
    }

    /** The client's resume token sorts before an event of the stream, and the stream never had it. */
    private static final class TokenNotFound extends Exception {
        final BsonDocument surpassingId;

        TokenNotFound(BsonDocument surpassingId) {
            super(null, null, false, false);
            this.surpassingId = surpassingId;
        }
    }

    ScriptedMongodChangeStreams(ScriptedMongod server) {
        this.server = server;
    }

    /**
     * The oldest cluster time a stream may start at: the server's first (its seconds never change;
     * the increment starts at 1, the set's initiation), until the cap drops events.
     */
    private BsonTimestamp oplogStart() {
        return oplogStart != null ? oplogStart : new BsonTimestamp(server.clusterTime().getTime(), 1);
    }

    // ---------------------------------------------------------------- the event log

    synchronized void inserted(String ns, BsonDocument doc) {
        append(ns, "insert", doc, new BsonDocument("_id", doc.get("_id")));
    }

    synchronized void deleted(String ns, BsonDocument doc) {
        append(ns, "delete", null, new BsonDocument("_id", doc.get("_id")));
    }

    synchronized void dropped(String ns) {
        append(ns, "drop", null, null);
        uuids.remove(ns);
    }

    private void append(String ns, String operationType, BsonDocument fullDocument, BsonDocument documentKey) {
        int dot = ns.indexOf('.');
        String db = ns.substring(0, dot);
        String coll = ns.substring(dot + 1);
        BsonTimestamp ts = server.tick(); // under this lock: the log stays in cluster-time order
        String token = eventToken(ts, false, uuids.computeIfAbsent(ns, k -> UUID.randomUUID()));
        BsonDocument event = new BsonDocument("_id", tokenDocument(token))
                .append("operationType", new BsonString(operationType))
                .append("clusterTime", ts)
                .append("wallTime", new BsonDateTime(System.currentTimeMillis()));
        if (fullDocument != null) {
            event.append("fullDocument", fullDocument.clone());
        }
        event.append("ns", new BsonDocument("db", new BsonString(db)).append("coll", new BsonString(coll)));
        if (documentKey != null) {
            event.append("documentKey", documentKey.clone());
        }
        log.add(new Event(token, ts, db, coll, operationType, event));
        if (log.size() > MAX_EVENTS) {
            log.subList(0, log.size() - MAX_EVENTS).clear();
            oplogStart = log.get(0).clusterTime;
        }
        notifyAll(); // wake awaiting getMores
    }

    /** Copies of the events kept, oldest first. */
    synchronized List<BsonDocument> events() {
        List<BsonDocument> out = new ArrayList<>();
        for (Event e : log) {
            out.add(e.document.clone());
        }
        return out;
    }

    // ---------------------------------------------------------------- aggregate

    /** Whether any stage of this aggregate is $changeStream (then this class answers it). */
    static boolean involved(BsonDocument cmd) {
        if (!cmd.isArray("pipeline")) {
            return false;
        }
        for (BsonValue stage : cmd.getArray("pipeline")) {
            if (stage.isDocument() && stage.asDocument().containsKey("$changeStream")) {
                return true;
            }
        }
        return false;
    }

    synchronized BsonDocument aggregate(BsonDocument cmd) {
        List<BsonValue> pipeline = cmd.getArray("pipeline").getValues();
        for (int i = 1; i < pipeline.size(); i++) {
            if (pipeline.get(i).asDocument().containsKey("$changeStream")) {
                return ScriptedMongodCommands.error(40602, "Location40602",
                        "$changeStream is only valid as the first stage in a pipeline");
            }
        }
        String db = cmd.getString("$db").getValue();
        BsonValue target = cmd.get("aggregate");
        String coll;
        if (target.isString()) {
            coll = target.asString().getValue();
        } else if (target.isNumber() && target.asNumber().intValue() == 1) {
            coll = null;
        } else {
            return ScriptedMongodCommands.error(14, "TypeMismatch",
                    "Invalid command format: the 'aggregate' field must specify a collection name or 1");
        }
        if (!pipeline.get(0).asDocument().isDocument("$changeStream")) {
            return ScriptedMongodCommands.error(50808, "Location50808", "$changeStream stage expects a document as argument");
        }
        BsonDocument spec = pipeline.get(0).asDocument().getDocument("$changeStream");
        BsonDocument refused = refusedSpec(db, coll, spec);
        if (refused != null) {
            return refused;
        }
        List<BsonDocument> matches = new ArrayList<>();
        for (BsonValue stageValue : pipeline.subList(1, pipeline.size())) {
            BsonDocument stage = stageValue.asDocument();
            if (!stage.getFirstKey().equals("$match") || stage.size() != 1 || !stage.isDocument("$match")) {
                return ScriptedMongodCommands.error(2, "BadValue", "ScriptedMongod implements only $match after "
                        + "$changeStream, not " + stage.getFirstKey());
            }
            BsonDocument filter = stage.getDocument("$match");
            for (String key : filter.keySet()) {
                // Throws (answered BadValue) for what matches() does not implement, now rather than on a later getMore.
                ScriptedMongodCommands.matches(new BsonDocument(), new BsonDocument(key, filter.get(key)));
            }
            matches.add(filter);
        }
        BsonDocument cursorOptions = cmd.getDocument("cursor", new BsonDocument());
        int batchSize = cursorOptions.isNumber("batchSize") ? cursorOptions.getNumber("batchSize").intValue() : DEFAULT_FIRST_BATCH;
        if (batchSize < 0) {
            return ScriptedMongodCommands.error(51024, "Location51024", "BatchSize value must be non-negative");
        }

        Stream s = new Stream(newCursorId(), db, coll, matches);
        BsonTimestamp start;
        if (spec.containsKey("resumeAfter") || spec.containsKey("startAfter")) {
            boolean startAfter = spec.containsKey("startAfter");
            String option = startAfter ? "startAfter" : "resumeAfter";
            if (!spec.isDocument(option) || !spec.getDocument(option).isString("_data")) {
                return ScriptedMongodCommands.error(9, "FailedToParse", "$changeStream." + option
                        + " must be a resume token document {_data: <hex string>}, not " + spec.get(option));
            }
            String data = spec.getDocument(option).getString("_data").getValue().toUpperCase(java.util.Locale.ROOT);
            Matcher m = TOKEN.matcher(data);
            if (!m.matches()) {
                return ScriptedMongodCommands.error(9, "FailedToParse", "invalid resume token: " + spec.get(option));
            }
            start = new BsonTimestamp((int) Long.parseLong(m.group(1), 16), (int) Long.parseLong(m.group(2), 16));
            String rest = m.group(3);
            Matcher own = OWN_EVENT.matcher(rest);
            boolean fromInvalidate = own.matches() && own.group(1).equals("01");
            if (rest.equals("00")) { // a high-water mark: no event to find, events from its time on
                s.position = data;
            } else if (fromInvalidate && !startAfter) {
                return ScriptedMongodCommands.error(260, "InvalidResumeToken", "Attempting to resume a change stream "
                        + "using 'resumeAfter' is not allowed from an invalidate notification.");
            } else {
                s.position = highWaterMark(start);
                // startAfter an invalidate: find the drop it followed, which then ends nothing.
                s.mustFind = fromInvalidate ? data.substring(0, 20) + "00" + data.substring(22) : data;
                s.startAfterInvalidate = fromInvalidate;
            }
        } else if (spec.containsKey("startAtOperationTime")) {
            if (!spec.isTimestamp("startAtOperationTime")) {
                return ScriptedMongodCommands.error(14, "TypeMismatch",
                        "BSON field '$changeStream.startAtOperationTime' is the wrong type, expected type 'timestamp'");
            }
            start = spec.getTimestamp("startAtOperationTime");
            s.position = highWaterMark(start);
        } else {
            // As mongod: one tick beyond the latest operation, so the stream does not return it.
            BsonTimestamp now = server.clusterTime();
            start = new BsonTimestamp(now.getTime(), now.getInc() + 1);
            s.position = highWaterMark(start);
        }
        if (Long.compareUnsigned(start.getValue(), oplogStart().getValue()) < 0) {
            return ScriptedMongodCommands.error(286, "ChangeStreamHistoryLost", "Executor error during aggregate command "
                    + "on namespace: " + s.cursorNs + " :: caused by :: Resume of change stream was not possible, as "
                    + "the resume point may no longer be in the oplog.").append("errorLabels", nonResumable());
        }
        Batch batch;
        try {
            batch = collect(s, batchSize);
        } catch (TokenNotFound e) {
            return tokenNotFound("aggregate command on namespace: " + s.cursorNs, e);
        }
        long id = 0;
        if (!batch.ended) {
            streams.put(s.id, s);
            id = s.id;
        }
        return reply("firstBatch", batch, id, s.cursorNs);
    }

    /** The error mongod gives for a $changeStream spec this responder does not serve, or null if it serves it. */
    private static BsonDocument refusedSpec(String db, String coll, BsonDocument spec) {
        for (String key : spec.keySet()) {
            if (!SPEC_FIELDS.contains(key)) {
                return ScriptedMongodCommands.error(40415, "Location40415",
                        "BSON field '$changeStream." + key + "' is an unknown field.");
            }
        }
        if (spec.getBoolean("allChangesForCluster", org.bson.BsonBoolean.FALSE).getValue()) {
            return unimplemented("allChangesForCluster: true (whole-cluster change streams)");
        }
        if (db.equals("admin") || db.equals("local") || db.equals("config")) {
            return ScriptedMongodCommands.error(73, "InvalidNamespace",
                    "$changeStream may not be opened on the internal " + db + " database");
        }
        if (coll != null && coll.startsWith("system.")) {
            return ScriptedMongodCommands.error(73, "InvalidNamespace",
                    "$changeStream may not be opened on the internal " + db + "." + coll + " collection");
        }
        for (String flag : List.of("showMigrationEvents", "showSystemEvents", "allowToRunOnConfigDB",
                "allowToRunOnSystemNS", "showExpandedEvents", "showRawUpdateDescription")) {
            if (spec.getBoolean(flag, org.bson.BsonBoolean.FALSE).getValue()) {
                return unimplemented(flag + ": true");
            }
        }
        // There are no update events here, so "updateLookup" (which only adds to updates) is exact.
        // "whenAvailable" / "required" need post-images enabled on the collection, which this server has no notion of.
        String fullDocument = spec.getString("fullDocument", new BsonString("default")).getValue();
        if (!fullDocument.equals("default") && !fullDocument.equals("updateLookup")) {
            return List.of("whenAvailable", "required").contains(fullDocument)
                    ? unimplemented("fullDocument: '" + fullDocument + "'")
                    : ScriptedMongodCommands.error(2, "BadValue", "Enumeration value '" + fullDocument
                            + "' for field '$changeStream.fullDocument' is not a valid value.");
        }
        String before = spec.getString("fullDocumentBeforeChange", new BsonString("off")).getValue();
        if (!before.equals("off")) {
            return unimplemented("fullDocumentBeforeChange: '" + before + "'");
        }
        int startOptions = (spec.containsKey("resumeAfter") ? 1 : 0) + (spec.containsKey("startAfter") ? 1 : 0)
                + (spec.containsKey("startAtOperationTime") ? 1 : 0);
        if (startOptions > 1) {
            return ScriptedMongodCommands.error(40674, "Location40674",
                    "Only one type of resume option is allowed, but multiple were found.");
        }
        return null;
    }

    private static BsonDocument unimplemented(String what) {
        return ScriptedMongodCommands.error(2, "BadValue", "ScriptedMongod does not implement $changeStream " + what);
    }

    // ---------------------------------------------------------------- getMore and killCursors

    synchronized boolean isCursor(BsonValue id) {
        return id != null && id.isNumber() && streams.containsKey(id.asNumber().longValue());
    }

    /**
     * getMore on a change stream cursor: the events after its position, at once if there are any,
     * else the first to come within maxTimeMS (default 1 s), else an empty batch whose
     * postBatchResumeToken is the high-water mark. Waits on this monitor only.
     */
    synchronized BsonDocument getMore(BsonDocument cmd) throws InterruptedException {
        long id = cmd.getNumber("getMore").longValue();
        Stream s = streams.get(id);
        if (s == null) {
            return ScriptedMongodCommands.error(43, "CursorNotFound", "cursor id " + id + " not found");
        }
        String ns = cmd.getString("$db").getValue() + "." + cmd.getString("collection").getValue();
        if (!s.cursorNs.equals(ns)) {
            return ScriptedMongodCommands.error(13, "Unauthorized", "Requested getMore on namespace '" + ns
                    + "', but cursor belongs to a different namespace " + s.cursorNs);
        }
        if (s.inUse) {
            return ScriptedMongodCommands.error(292, "CursorInUse", "cursor id " + id + " is already in use");
        }
        int batchSize = cmd.isNumber("batchSize") ? cmd.getNumber("batchSize").intValue() : Integer.MAX_VALUE;
        if (batchSize <= 0) {
            batchSize = Integer.MAX_VALUE;
        }
        long awaitMs = cmd.isNumber("maxTimeMS") ? cmd.getNumber("maxTimeMS").longValue() : DEFAULT_AWAIT_MS;
        long deadline = System.nanoTime() + Math.max(0, awaitMs) * 1_000_000L;
        s.inUse = true;
        try {
            while (true) {
                Batch batch = collect(s, batchSize);
                long leftMs = (deadline - System.nanoTime()) / 1_000_000L;
                if (!batch.events.isEmpty() || batch.ended || leftMs <= 0 || server.isClosed()) {
                    if (batch.ended) {
                        streams.remove(id);
                    }
                    return reply("nextBatch", batch, batch.ended ? 0 : id, s.cursorNs);
                }
                wait(Math.min(leftMs, 100)); // releases this monitor; append() and kill() notify
                if (streams.get(id) != s) {
                    return ScriptedMongodCommands.error(237, "CursorKilled", "cursor id " + id + " was killed");
                }
            }
        } catch (TokenNotFound e) {
            streams.remove(id); // an error ends a cursor, as on mongod
            return tokenNotFound("getMore", e);
        } finally {
            s.inUse = false;
        }
    }

    /** Ends the change stream cursor {@code id}; false if there is none. */
    synchronized boolean kill(long id) {
        boolean killed = streams.remove(id) != null;
        if (killed) {
            notifyAll(); // a getMore awaiting on it ends
        }
        return killed;
    }

    synchronized Set<Long> cursorIds() {
        return Set.copyOf(streams.keySet());
    }

    // ---------------------------------------------------------------- scanning

    /**
     * Up to {@code max} events of {@code s} after its position, advancing it. Throws when an event
     * sorts after the client's resume token before the token was seen (mongod's
     * DocumentSourceChangeStreamEnsureResumeTokenPresent).
     */
    private Batch collect(Stream s, int max) throws TokenNotFound {
        List<BsonDocument> out = new ArrayList<>();
        if (s.pendingInvalidate != null) { // the batch before was full at the drop
            BsonDocument invalidate = s.pendingInvalidate;
            s.pendingInvalidate = null;
            if (s.passes(invalidate)) {
                out.add(invalidate);
            }
            return new Batch(out, tokenOf(invalidate), true);
        }
        int i = firstAfter(s.position);
        for (; i < log.size() && out.size() < max; i++) {
            Event e = log.get(i);
            if (!s.sees(e)) {
                continue;
            }
            boolean deliver = true;
            boolean found = false;
            if (s.mustFind != null) {
                int c = e.token.compareTo(s.mustFind);
                if (c > 0) {
                    throw new TokenNotFound(e.document.getDocument("_id"));
                }
                found = c == 0;
                if (found) {
                    s.mustFind = null;
                }
                deliver = false; // the client's own event, or one before it: the client has seen it
            }
            s.position = e.token;
            if (deliver && s.passes(e.document)) {
                out.add(e.document.clone());
            }
            // A collection's drop ends its stream with an invalidate, also when resuming from the drop
            // itself; resuming with startAfter from that invalidate starts after it instead.
            boolean ownDrop = s.coll != null && e.operationType.equals("drop");
            if (ownDrop && (deliver || found && !s.startAfterInvalidate)) {
                BsonDocument invalidate = invalidate(e);
                if (out.size() < max) {
                    if (s.passes(invalidate)) {
                        out.add(invalidate);
                    }
                    return new Batch(out, tokenOf(invalidate), true);
                }
                s.pendingInvalidate = invalidate;
                return new Batch(out, s.position, false);
            }
        }
        String pbrt;
        if (s.mustFind != null) {
            pbrt = s.mustFind;
        } else if (i >= log.size()) { // read to the end: the high-water mark of what was read
            String hwm = highWaterMark(server.clusterTime());
            pbrt = hwm.compareTo(s.position) > 0 ? hwm : s.position;
        } else {
            pbrt = s.position;
        }
        return new Batch(out, pbrt, false);
    }

    private int firstAfter(String token) {
        int lo = 0;
        int hi = log.size();
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (log.get(mid).token.compareTo(token) <= 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    private static BsonDocument invalidate(Event drop) {
        String token = drop.token.substring(0, 20) + "01" + drop.token.substring(22);
        return new BsonDocument("_id", tokenDocument(token))
                .append("operationType", new BsonString("invalidate"))
                .append("clusterTime", drop.document.getTimestamp("clusterTime"))
                .append("wallTime", drop.document.get("wallTime"));
    }

    // ---------------------------------------------------------------- replies and tokens

    private static BsonDocument reply(String batchField, Batch batch, long id, String ns) {
        return new BsonDocument("cursor", new BsonDocument(batchField, new BsonArray(new ArrayList<>(batch.events)))
                .append("postBatchResumeToken", tokenDocument(batch.postBatchResumeToken))
                .append("id", new BsonInt64(id))
                .append("ns", new BsonString(ns)))
                .append("ok", new BsonDouble(1.0));
    }

    private static BsonDocument tokenNotFound(String during, TokenNotFound e) {
        return ScriptedMongodCommands.error(280, "ChangeStreamFatalError", "Executor error during " + during
                + " :: caused by :: cannot resume stream; the resume token was not found. " + e.surpassingId.toJson())
                .append("errorLabels", nonResumable());
    }

    private static BsonArray nonResumable() {
        return new BsonArray(List.of(new BsonString(NON_RESUMABLE)));
    }

    private static String tokenOf(BsonDocument event) {
        return event.getDocument("_id").getString("_data").getValue();
    }

    private static BsonDocument tokenDocument(String data) {
        return new BsonDocument("_data", new BsonString(data));
    }

    static String highWaterMark(BsonTimestamp ts) {
        return String.format("82%08X%08X00", ts.getTime(), ts.getInc());
    }

    private static String eventToken(BsonTimestamp ts, boolean fromInvalidate, UUID collection) {
        return String.format("82%08X%08X01%s%016X%016X", ts.getTime(), ts.getInc(), fromInvalidate ? "01" : "00",
                collection.getMostSignificantBits(), collection.getLeastSignificantBits());
    }

    private long newCursorId() {
        long id;
        do {
            id = ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
        } while (streams.containsKey(id));
        return id;
    }
}
