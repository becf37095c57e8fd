package io.blackpipe.observe;

import java.time.Instant;
import java.util.UUID;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;

/**
 * One application command in the operation history, in the shape of Jepsen's model: when it was
 * invoked and completed, what it was, and its outcome as the client can know it — ok, fail (a
 * server error: it did not happen) or info (a network error or dropped reply: it may have).
 */
public record HistoryEntry(long invokedAtMicros, long completedAtMicros, String member, String app, long connectionId,
                           String command, String database, String collection, UUID lsid, long txnNumber, int attempt,
                           String fault, String outcome, String type, int errorCode) {
    private static final JsonWriterSettings JSON = JsonWriterSettings.builder().outputMode(JsonMode.RELAXED).build();
    /**
     * The longest name an entry keeps (command, database, collection, app), in chars; a longer one is cut there and ends
     * in "…". mongod refuses namespaces past 255 bytes and appNames past 128, but a client may send any: a soak test's
     * 64 KiB collection names filled the 10,000 entries kept in memory with 200 MB, and the sidecar stalled in GC.
     */
    public static final int MAX_NAME_LENGTH = 256;

    public HistoryEntry {
        app = clipped(app);
        command = clipped(command);
        database = clipped(database);
        collection = clipped(collection);
    }

    private static String clipped(String name) {
        if (name == null || name.length() <= MAX_NAME_LENGTH) {
            return name;
        }
        // not between the two halves of a surrogate pair: a lone one prints as "?" and is no valid UTF-8 in the file
        int end = Character.isHighSurrogate(name.charAt(MAX_NAME_LENGTH - 1)) ? MAX_NAME_LENGTH - 1 : MAX_NAME_LENGTH;
        return name.substring(0, end) + "…";
    }

    /** database.collection, or the database alone for commands without a collection; built only when read. */
    public String namespace() {
        return collection.isEmpty() ? database : database + "." + collection;
    }

    public String toJson() {
        BsonDocument line = new BsonDocument()
                .append("type", new BsonString(type))
                .append("invoke", new BsonString(time(invokedAtMicros)))
                .append("complete", new BsonString(time(completedAtMicros)))
                .append("member", new BsonString(member))
                .append("app", new BsonString(app))
                .append("connection", new BsonInt64(connectionId))
                .append("command", new BsonString(command))
                .append("ns", new BsonString(namespace()))
                .append("lsid", lsid == null ? BsonNull.VALUE : new BsonString(lsid.toString()))
                .append("txnNumber", txnNumber < 0 ? BsonNull.VALUE : new BsonInt64(txnNumber))
                .append("attempt", new BsonInt32(attempt))
                .append("fault", fault == null ? BsonNull.VALUE : new BsonString(fault))
                .append("outcome", new BsonString(outcome));
        if (errorCode != 0) {
            line.append("code", (BsonValue) new BsonInt32(errorCode));
        }
        return line.toJson(JSON);
    }

    /**
     * The entry a {@link #toJson()} line describes, as a client of the admin API's history reads it back: the same
     * entry, field for field (a namespace splits at its first '.', which no database name holds).
     *
     * @throws IllegalArgumentException when the line is not such a line
     */
    public static HistoryEntry fromJson(String line) {
        try {
            BsonDocument json = BsonDocument.parse(line);
            String ns = json.getString("ns").getValue();
            int dot = ns.indexOf('.');
            return new HistoryEntry(micros(json.getString("invoke").getValue()), micros(json.getString("complete").getValue()),
                    json.getString("member").getValue(), json.getString("app").getValue(), json.getNumber("connection").longValue(),
                    json.getString("command").getValue(), dot < 0 ? ns : ns.substring(0, dot), dot < 0 ? "" : ns.substring(dot + 1),
                    json.isNull("lsid") ? null : UUID.fromString(json.getString("lsid").getValue()),
                    json.isNull("txnNumber") ? -1 : json.getNumber("txnNumber").longValue(), json.getNumber("attempt").intValue(),
                    json.isNull("fault") ? null : json.getString("fault").getValue(), json.getString("outcome").getValue(),
                    json.getString("type").getValue(), json.containsKey("code") ? json.getNumber("code").intValue() : 0);
        } catch (RuntimeException e) { // a missing field, a wrong type, not JSON at all
            throw new IllegalArgumentException("not a history line (" + e.getMessage() + "): " + line, e);
        }
    }

    private static long micros(String time) {
        Instant instant = Instant.parse(time);
        return Math.addExact(Math.multiplyExact(instant.getEpochSecond(), 1_000_000L), instant.getNano() / 1000);
    }

    private static String time(long micros) {
        return Instant.ofEpochSecond(micros / 1_000_000, (micros % 1_000_000) * 1000).toString();
    }
}
