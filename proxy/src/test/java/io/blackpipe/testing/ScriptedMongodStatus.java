package io.blackpipe.testing;

import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonTimestamp;

/**
 * The diagnostic commands of a {@link ScriptedMongod} that speak of the server itself,
 * replSetGetStatus and currentOp, shaped as mongod 7.0's (admin only, as there). What the server
 * says of its role comes from its own hello reply, so the two never disagree.
 */
final class ScriptedMongodStatus {
    private ScriptedMongodStatus() {
    }

    static boolean handles(String name) {
        return name.equals("replSetGetStatus") || name.equals("currentOp");
    }

    static BsonDocument run(ScriptedMongod server, String name, BsonDocument cmd, ScriptedMongodConnection conn) {
        if (!"admin".equals(cmd.getString("$db").getValue())) {
            return ScriptedMongodCommands.error(13, "Unauthorized", name + " may only be run against the admin database.");
        }
        if (server.role() == ScriptedMongod.Role.STANDALONE && name.equals("replSetGetStatus")) {
            return ScriptedMongodCommands.error(76, "NoReplicationEnabled", "not running with --replSet");
        }
        BsonDocument hello = server.helloReply("hello", new BsonDocument(), conn);
        return name.equals("replSetGetStatus") ? replSetGetStatus(server, hello) : currentOp(cmd, conn);
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
