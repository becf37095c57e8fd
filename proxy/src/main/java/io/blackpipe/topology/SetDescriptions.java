package io.blackpipe.topology;

import io.blackpipe.wire.CommandFacts;
import java.util.List;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;

/**
 * The replies besides hello's that describe the replica set and its members, and where in each
 * reply that description is: replSetGetStatus (the whole reply), replSetGetConfig (its config),
 * serverStatus (its repl section, the member's hello) and a find or getMore on
 * local.system.replset (each configuration document of the batch; older tools read rs.conf()
 * there). A real set's replies name the proxy there ({@link HelloRewriter}); a simulated set's
 * tell the simulated members ({@link SimulatedReplicaSet}): each is a {@link View} of the same places.
 */
public final class SetDescriptions {
    private static final Set<String> COMMANDS = Set.of("replSetGetStatus", "replSetGetConfig", "serverStatus");

    private SetDescriptions() {
    }

    /** One way of telling the set; each method rewrites its part in place and returns whether it changed anything. */
    interface View {
        /** replSetGetStatus's reply. */
        boolean status(BsonDocument status);

        /** A replica set configuration: replSetGetConfig's config, or a document of local.system.replset. */
        boolean config(BsonDocument config);

        /** serverStatus's repl section of a replica set member (its hello, and more). */
        boolean repl(BsonDocument repl);
    }

    /**
     * Whether {@code command}'s reply describes the set or the member's role, as hello does;
     * decided from the command's name (and, for a find or getMore, its namespace) alone.
     */
    public static boolean describesTheSet(CommandFacts command) {
        return COMMANDS.contains(command.name()) || isStoredConfigRead(command);
    }

    private static boolean isStoredConfigRead(CommandFacts command) {
        return (command.name().equals("find") || command.name().equals("getMore"))
                && "local".equals(command.database()) && "system.replset".equals(command.collection());
    }

    /**
     * Rewrites the parts of the reply to a command that {@link #describesTheSet} through {@code view};
     * false when the reply holds none of them (a standalone's serverStatus, an empty batch) or the
     * view changed nothing.
     */
    static boolean rewrite(CommandFacts command, BsonDocument reply, View view) {
        if (isStoredConfigRead(command)) {
            return storedConfigs(reply, view);
        }
        return switch (command.name()) {
            case "replSetGetStatus" -> view.status(reply);
            case "replSetGetConfig" -> reply.isDocument("config") && view.config(reply.getDocument("config"));
            case "serverStatus" -> reply.isDocument("repl") && reply.getDocument("repl").containsKey("setName")
                    && view.repl(reply.getDocument("repl"));
            default -> false;
        };
    }

    /** The configuration documents a find or getMore on local.system.replset returned. */
    private static boolean storedConfigs(BsonDocument reply, View view) {
        if (!reply.isDocument("cursor")) {
            return false;
        }
        BsonDocument cursor = reply.getDocument("cursor");
        BsonValue batch = cursor.containsKey("firstBatch") ? cursor.get("firstBatch") : cursor.get("nextBatch");
        boolean changed = false;
        if (batch != null && batch.isArray()) {
            for (BsonValue config : batch.asArray()) {
                changed |= config.isDocument() && view.config(config.asDocument());
            }
        }
        return changed;
    }

    /**
     * A member's hello lastWrite as of now, in election {@code term}: for a simulated set over a node
     * that reports none (jongodb), as mongod's members report one and drivers judge a secondary's
     * staleness by its lastWriteDate. The simulated members never lag: they are the one node.
     */
    static BsonDocument lastWriteNow(long term) {
        long now = System.currentTimeMillis();
        BsonDocument opTime = new BsonDocument("ts", new BsonTimestamp((int) (now / 1000), 1)).append("t", new BsonInt64(term));
        return new BsonDocument("opTime", opTime).append("lastWriteDate", new BsonDateTime(now))
                .append("majorityOpTime", opTime.clone()).append("majorityWriteDate", new BsonDateTime(now));
    }

    /**
     * A one-node set's reply to replSetGetStatus or replSetGetConfig, with the fields of mongod's
     * that tools read (rs.status(), rs.conf()): the pattern a simulated set's reply is made from
     * where the real node lacks the command (jongodb); null for any other command.
     */
    public static BsonDocument ofOneNode(CommandFacts command, String setName, long term) {
        long now = System.currentTimeMillis();
        BsonDocument opTime = new BsonDocument("ts", new BsonTimestamp((int) (now / 1000), 1)).append("t", new BsonInt64(term));
        return switch (command.name()) {
            case "replSetGetStatus" -> new BsonDocument("set", new BsonString(setName)).append("date", new BsonDateTime(now))
                    .append("myState", new BsonInt32(1)).append("term", new BsonInt64(term))
                    .append("syncSourceHost", new BsonString("")).append("syncSourceId", new BsonInt32(-1))
                    .append("heartbeatIntervalMillis", new BsonInt64(2000))
                    .append("members", new BsonArray(List.of(new BsonDocument("_id", new BsonInt32(0)).append("name", new BsonString(""))
                            .append("health", new BsonDouble(1)).append("state", new BsonInt32(1)).append("stateStr", new BsonString("PRIMARY"))
                            .append("optime", opTime).append("optimeDate", new BsonDateTime(now))
                            .append("syncSourceHost", new BsonString("")).append("syncSourceId", new BsonInt32(-1))
                            .append("configVersion", new BsonInt32(1)).append("configTerm", new BsonInt64(term))
                            .append("self", BsonBoolean.TRUE))))
                    .append("ok", new BsonDouble(1));
            case "replSetGetConfig" -> new BsonDocument("config", new BsonDocument("_id", new BsonString(setName))
                    .append("version", new BsonInt32(1)).append("term", new BsonInt64(term))
                    .append("members", new BsonArray(List.of(new BsonDocument("_id", new BsonInt32(0)).append("host", new BsonString(""))
                            .append("arbiterOnly", BsonBoolean.FALSE).append("buildIndexes", BsonBoolean.TRUE)
                            .append("hidden", BsonBoolean.FALSE).append("priority", new BsonDouble(1)).append("tags", new BsonDocument())
                            .append("secondaryDelaySecs", new BsonInt64(0)).append("votes", new BsonInt32(1)))))
                    .append("protocolVersion", new BsonInt64(1)).append("writeConcernMajorityJournalDefault", BsonBoolean.TRUE)
                    .append("settings", new BsonDocument("chainingAllowed", BsonBoolean.TRUE)
                            .append("heartbeatIntervalMillis", new BsonInt32(2000)).append("heartbeatTimeoutSecs", new BsonInt32(10))
                            .append("electionTimeoutMillis", new BsonInt32(10000))))
                    .append("ok", new BsonDouble(1));
            default -> null;
        };
    }

    /**
     * Rewrites a replica set configuration as that of the set {@code setName} of {@code hosts} at {@code version}, one
     * member per host, each like the configuration's first entry; false when it has no member entry to start from.
     */
    static boolean asConfigOf(BsonDocument config, String setName, List<String> hosts, int version) {
        BsonDocument pattern = !config.isArray("members") ? null : config.getArray("members").stream().filter(BsonValue::isDocument)
                .map(BsonValue::asDocument).findFirst().orElse(null);
        if (pattern == null) {
            return false;
        }
        BsonArray entries = new BsonArray();
        for (int i = 0; i < hosts.size(); i++) {
            BsonDocument entry = pattern.clone();
            entry.put("_id", new BsonInt32(i));
            entry.put("host", new BsonString(hosts.get(i)));
            entries.add(entry);
        }
        config.put("_id", new BsonString(setName));
        config.put("version", new BsonInt32(version));
        config.put("members", entries);
        return true;
    }

    /** The real node's entry in replSetGetStatus's members: the one marked self, else the first. */
    static BsonDocument ownEntry(BsonDocument status) {
        if (!status.isArray("members")) {
            return null;
        }
        BsonDocument first = null;
        for (BsonValue value : status.getArray("members")) {
            if (!value.isDocument()) {
                continue;
            }
            if (value.asDocument().getBoolean("self", BsonBoolean.FALSE).getValue()) {
                return value.asDocument();
            }
            if (first == null) {
                first = value.asDocument();
            }
        }
        return first;
    }
}
