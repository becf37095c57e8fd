package io.blackpipe.testing;

import java.util.List;
import org.bson.BsonArray;
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
 * The diagnostic commands of a {@link ScriptedMongod} that speak of the server itself,
 * replSetGetStatus, replSetGetConfig, serverStatus and currentOp, shaped as mongod 7.0's (all but
 * serverStatus admin only, as there). What the server says of its role and its set comes from its
 * own hello reply, so they never disagree.
 */
final class ScriptedMongodStatus {
    private static final ObjectId REPLICA_SET_ID = new ObjectId();
    private static final long STARTED = System.currentTimeMillis();

    private ScriptedMongodStatus() {
    }

    static boolean handles(String name) {
        return name.equals("replSetGetStatus") || name.equals("replSetGetConfig") || name.equals("serverStatus")
                || name.equals("currentOp");
    }

    static BsonDocument run(ScriptedMongod server, String name, BsonDocument cmd, ScriptedMongodConnection conn) {
        if (!name.equals("serverStatus") && !"admin".equals(cmd.getString("$db").getValue())) {
            return ScriptedMongodCommands.error(13, "Unauthorized", name + " may only be run against the admin database.");
        }
        if (server.role() == ScriptedMongod.Role.STANDALONE && name.startsWith("replSet")) {
            return ScriptedMongodCommands.error(76, "NoReplicationEnabled", "not running with --replSet");
        }
        BsonDocument hello = server.helloReply("hello", new BsonDocument(), conn);
        return switch (name) {
            case "replSetGetStatus" -> replSetGetStatus(server, hello);
            case "replSetGetConfig" -> replSetGetConfig(hello);
            case "serverStatus" -> serverStatus(server, hello);
            default -> currentOp(cmd, conn);
        };
    }

    /** A one-member set: this server, in the role its hello states. */
    private static BsonDocument replSetGetStatus(ScriptedMongod server, BsonDocument hello) {
        boolean primary = hello.getBoolean("isWritablePrimary").getValue();
        BsonTimestamp now = server.clusterTime();
        BsonDocument opTime = new BsonDocument("ts", now).append("t", new BsonInt64(1));
        BsonDateTime wallTime = new BsonDateTime(now.getTime() * 1000L);
        String syncSource = primary || !hello.isString("primary") ? "" : hello.getString("primary").getValue();
        BsonDocument self = new BsonDocument("_id", new BsonInt32(0))
                .append("name", hello.get("me"))
                .append("health", new BsonDouble(1))
                .append("state", new BsonInt32(primary ? 1 : 2))
                .append("stateStr", new BsonString(primary ? "PRIMARY" : "SECONDARY"))
                .append("uptime", new BsonInt32(1))
                .append("optime", opTime)
                .append("optimeDate", wallTime)
                .append("lastAppliedWallTime", wallTime)
                .append("lastDurableWallTime", wallTime)
                .append("syncSourceHost", new BsonString(syncSource))
                .append("syncSourceId", new BsonInt32(syncSource.isEmpty() ? -1 : 1))
                .append("infoMessage", new BsonString(""));
        if (primary) {
            self.append("electionTime", now).append("electionDate", wallTime);
        }
        self.append("configVersion", new BsonInt32(1)).append("configTerm", new BsonInt64(1))
                .append("self", BsonBoolean.TRUE).append("lastHeartbeatMessage", new BsonString(""));
        BsonDocument reply = new BsonDocument("set", hello.get("setName"))
                .append("date", new BsonDateTime(System.currentTimeMillis()))
                .append("myState", new BsonInt32(primary ? 1 : 2))
                .append("term", new BsonInt64(1))
                .append("syncSourceHost", new BsonString(syncSource))
                .append("syncSourceId", new BsonInt32(syncSource.isEmpty() ? -1 : 1))
                .append("heartbeatIntervalMillis", new BsonInt64(2000))
                .append("majorityVoteCount", new BsonInt32(1))
                .append("writeMajorityCount", new BsonInt32(1))
                .append("votingMembersCount", new BsonInt32(1))
                .append("writableVotingMembersCount", new BsonInt32(1))
                .append("optimes", new BsonDocument("lastCommittedOpTime", opTime).append("appliedOpTime", opTime)
                        .append("durableOpTime", opTime).append("lastAppliedWallTime", wallTime));
        if (primary) {
            reply.append("electionCandidateMetrics", new BsonDocument("lastElectionReason", new BsonString("electionTimeout"))
                    .append("lastElectionDate", wallTime).append("electionTerm", new BsonInt64(1)));
        }
        return reply.append("members", new BsonArray(List.of(self))).append("ok", new BsonDouble(1));
    }

    /** The set's configuration: one member, under the name its hello gives itself. */
    private static BsonDocument replSetGetConfig(BsonDocument hello) {
        BsonDocument member = new BsonDocument("_id", new BsonInt32(0))
                .append("host", hello.get("me"))
                .append("arbiterOnly", BsonBoolean.FALSE)
                .append("buildIndexes", BsonBoolean.TRUE)
                .append("hidden", BsonBoolean.FALSE)
                .append("priority", new BsonDouble(1))
                .append("tags", new BsonDocument())
                .append("secondaryDelaySecs", new BsonInt64(0))
                .append("votes", new BsonInt32(1));
        BsonDocument config = new BsonDocument("_id", hello.get("setName"))
                .append("version", hello.get("setVersion"))
                .append("term", new BsonInt64(1))
                .append("members", new BsonArray(List.of(member)))
                .append("protocolVersion", new BsonInt64(1))
                .append("writeConcernMajorityJournalDefault", BsonBoolean.TRUE)
                .append("settings", new BsonDocument("chainingAllowed", BsonBoolean.TRUE)
                        .append("heartbeatIntervalMillis", new BsonInt32(2000))
                        .append("electionTimeoutMillis", new BsonInt32(10000))
                        .append("replicaSetId", new BsonObjectId(REPLICA_SET_ID)));
        return new BsonDocument("config", config).append("ok", new BsonDouble(1));
    }

    /**
     * A few of serverStatus's sections; its repl section is the server's hello (mongod 5.0+ names
     * the role isWritablePrimary there) and the rollback id. A standalone has no repl section.
     */
    private static BsonDocument serverStatus(ScriptedMongod server, BsonDocument hello) {
        long uptimeMillis = System.currentTimeMillis() - STARTED;
        BsonDocument reply = new BsonDocument("host", new BsonString(server.address()))
                .append("version", new BsonString("7.0.0"))
                .append("process", new BsonString("mongod"))
                .append("pid", new BsonInt64(ProcessHandle.current().pid()))
                .append("uptime", new BsonDouble(uptimeMillis / 1000.0))
                .append("uptimeMillis", new BsonInt64(uptimeMillis))
                .append("localTime", new BsonDateTime(System.currentTimeMillis()))
                .append("connections", new BsonDocument("current", new BsonInt32(server.openConnections())));
        if (hello.containsKey("setName")) {
            BsonDocument repl = new BsonDocument();
            for (String field : List.of("topologyVersion", "hosts", "setName", "setVersion", "isWritablePrimary", "secondary",
                    "primary", "me", "electionId", "lastWrite")) {
                if (hello.containsKey(field)) {
                    repl.append(field, hello.get(field));
                }
            }
            reply.append("repl", repl.append("rbid", new BsonInt32(1)));
        }
        return reply.append("ok", new BsonDouble(1));
    }

    /** The one operation in progress on a server that serves one request at a time per connection: this one. */
    private static BsonDocument currentOp(BsonDocument cmd, ScriptedMongodConnection conn) {
        BsonDocument op = new BsonDocument("type", new BsonString("op"))
                .append("desc", new BsonString("conn" + conn.id()))
                .append("connectionId", new BsonInt32(conn.id()))
                .append("active", BsonBoolean.TRUE)
                .append("opid", new BsonInt32(conn.id()))
                .append("op", new BsonString("command"))
                .append("ns", new BsonString("admin.$cmd.aggregate"))
                .append("command", cmd.clone());
        return new BsonDocument("inprog", new BsonArray(List.of(op))).append("ok", new BsonDouble(1));
    }
}
