package io.blackpipe.testing;

import java.util.ArrayList;
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
 * own hello reply (its hosts, primary and me: a member of a set of several scripted servers names
 * them all, by their real addresses), so they never disagree; members hello does not list are its
 * {@link ScriptedMongod#setHiddenHosts hidden hosts}.
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
        if (server.role().outsideASet() && name.startsWith("replSet")) {
            return ScriptedMongodCommands.error(76, "NoReplicationEnabled", "not running with --replSet");
        }
        BsonDocument hello = server.helloReply("hello", new BsonDocument(), conn);
        return switch (name) {
            case "replSetGetStatus" -> replSetGetStatus(server, hello);
            case "replSetGetConfig" -> replSetGetConfig(server, hello);
            case "serverStatus" -> serverStatus(server, cmd, hello);
            default -> currentOp(cmd, conn);
        };
    }

    /** A configured member: its address, whether it is this server, the primary, or hidden (never in hello). */
    private record ConfigMember(int id, String host, boolean self, boolean primary, boolean hidden) {
    }

    /**
     * The set's members as this server's configuration holds them: hello's hosts, passives and
     * arbiters, then the hidden ones, numbered in that order. A single server without a set around
     * it (the default) is a one-member set of itself.
     */
    private static List<ConfigMember> configMembers(ScriptedMongod server, BsonDocument hello) {
        String me = hello.getString("me").getValue();
        String primary = hello.isString("primary") ? hello.getString("primary").getValue() : null;
        List<String> hosts = new ArrayList<>();
        for (String list : List.of("hosts", "passives", "arbiters")) {
            if (hello.isArray(list)) {
                hello.getArray(list).forEach(h -> hosts.add(h.asString().getValue()));
            }
        }
        if (!hosts.contains(me)) {
            hosts.add(me);
        }
        List<ConfigMember> members = new ArrayList<>();
        for (String host : hosts) {
            members.add(new ConfigMember(members.size(), host, host.equals(me), host.equals(primary), false));
        }
        for (String host : server.hiddenHosts()) {
            members.add(new ConfigMember(members.size(), host, false, false, true));
        }
        return members;
    }

    /**
     * The set as this server sees it, shaped as mongod 7.0/8.0's (TopologyCoordinator::prepareStatusResponse):
     * its own entry, and one per other member as its heartbeats tell; a secondary syncs from the primary.
     */
    private static BsonDocument replSetGetStatus(ScriptedMongod server, BsonDocument hello) {
        boolean primary = hello.getBoolean("isWritablePrimary").getValue();
        BsonTimestamp now = server.clusterTime();
        BsonDocument opTime = new BsonDocument("ts", now).append("t", new BsonInt64(1));
        BsonDateTime wallTime = new BsonDateTime(now.getTime() * 1000L);
        List<ConfigMember> members = configMembers(server, hello);
        ConfigMember primaryMember = members.stream().filter(ConfigMember::primary).findFirst().orElse(null);
        String syncSource = primary || primaryMember == null ? "" : primaryMember.host();
        int syncSourceId = syncSource.isEmpty() ? -1 : primaryMember.id();
        BsonArray entries = new BsonArray();
        for (ConfigMember member : members) {
            boolean memberIsPrimary = member.self() ? primary : member.primary();
            String memberSyncSource = memberIsPrimary || primaryMember == null ? "" : primaryMember.host();
            BsonDocument entry = new BsonDocument("_id", new BsonInt32(member.id()))
                    .append("name", new BsonString(member.host()))
                    .append("health", new BsonDouble(1))
                    .append("state", new BsonInt32(memberIsPrimary ? 1 : 2))
                    .append("stateStr", new BsonString(memberIsPrimary ? "PRIMARY" : "SECONDARY"))
                    .append("uptime", new BsonInt32(1))
                    .append("optime", opTime);
            if (!member.self()) {
                entry.append("optimeDurable", opTime);
            }
            entry.append("optimeDate", wallTime);
            if (!member.self()) {
                entry.append("optimeDurableDate", wallTime);
            }
            entry.append("lastAppliedWallTime", wallTime).append("lastDurableWallTime", wallTime);
            if (!member.self()) {
                entry.append("lastHeartbeat", new BsonDateTime(System.currentTimeMillis()))
                        .append("lastHeartbeatRecv", new BsonDateTime(System.currentTimeMillis()))
                        .append("pingMs", new BsonInt64(0))
                        .append("lastHeartbeatMessage", new BsonString(""));
            }
            entry.append("syncSourceHost", new BsonString(memberSyncSource))
                    .append("syncSourceId", new BsonInt32(memberSyncSource.isEmpty() ? -1 : primaryMember.id()))
                    .append("infoMessage", new BsonString(""));
            if (memberIsPrimary) {
                entry.append("electionTime", now).append("electionDate", wallTime);
            }
            entry.append("configVersion", new BsonInt32(1)).append("configTerm", new BsonInt64(1));
            if (member.self()) {
                entry.append("self", BsonBoolean.TRUE).append("lastHeartbeatMessage", new BsonString(""));
            }
            entries.add(entry);
        }
        int voting = (int) members.stream().filter(m -> !m.hidden()).count();
        BsonDocument reply = new BsonDocument("set", hello.get("setName"))
                .append("date", new BsonDateTime(System.currentTimeMillis()))
                .append("myState", new BsonInt32(primary ? 1 : 2))
                .append("term", new BsonInt64(1))
                .append("syncSourceHost", new BsonString(syncSource))
                .append("syncSourceId", new BsonInt32(syncSourceId))
                .append("heartbeatIntervalMillis", new BsonInt64(2000))
                .append("majorityVoteCount", new BsonInt32(voting / 2 + 1))
                .append("writeMajorityCount", new BsonInt32(voting / 2 + 1))
                .append("votingMembersCount", new BsonInt32(voting))
                .append("writableVotingMembersCount", new BsonInt32(voting))
                .append("optimes", new BsonDocument("lastCommittedOpTime", opTime).append("appliedOpTime", opTime)
                        .append("durableOpTime", opTime).append("lastAppliedWallTime", wallTime));
        if (primary) {
            reply.append("electionCandidateMetrics", new BsonDocument("lastElectionReason", new BsonString("electionTimeout"))
                    .append("lastElectionDate", wallTime).append("electionTerm", new BsonInt64(1)));
        }
        return reply.append("members", entries).append("ok", new BsonDouble(1));
    }

    /** The set's configuration: every member under the name hello gives it (hidden ones too, which hello leaves out). */
    private static BsonDocument replSetGetConfig(ScriptedMongod server, BsonDocument hello) {
        BsonArray members = new BsonArray();
        for (ConfigMember member : configMembers(server, hello)) {
            members.add(new BsonDocument("_id", new BsonInt32(member.id()))
                    .append("host", new BsonString(member.host()))
                    .append("arbiterOnly", BsonBoolean.FALSE)
                    .append("buildIndexes", BsonBoolean.TRUE)
                    .append("hidden", BsonBoolean.valueOf(member.hidden()))
                    .append("priority", new BsonDouble(member.hidden() ? 0 : 1))
                    .append("tags", new BsonDocument())
                    .append("secondaryDelaySecs", new BsonInt64(0))
                    .append("votes", new BsonInt32(member.hidden() ? 0 : 1)));
        }
        BsonDocument config = new BsonDocument("_id", hello.get("setName"))
                .append("version", hello.get("setVersion"))
                .append("term", new BsonInt64(1))
                .append("members", members)
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
     * the role isWritablePrimary there) and the rollback id, and with {@code repl: 1} or more each
     * member's replicationProgress. A standalone has no repl section, nor has a serverStatus that
     * asks for none ({@code repl: 0}).
     */
    private static BsonDocument serverStatus(ScriptedMongod server, BsonDocument cmd, BsonDocument hello) {
        long uptimeMillis = System.currentTimeMillis() - STARTED;
        BsonDocument reply = new BsonDocument("host", new BsonString(server.address()))
                .append("version", new BsonString("7.0.0"))
                .append("process", new BsonString("mongod"))
                .append("pid", new BsonInt64(ProcessHandle.current().pid()))
                .append("uptime", new BsonDouble(uptimeMillis / 1000.0))
                .append("uptimeMillis", new BsonInt64(uptimeMillis))
                .append("localTime", new BsonDateTime(System.currentTimeMillis()))
                .append("connections", new BsonDocument("current", new BsonInt32(server.openConnections())));
        int replLevel = cmd.isNumber("repl") ? cmd.getNumber("repl").intValue() : -1;
        if (hello.containsKey("setName") && replLevel != 0) {
            BsonDocument repl = new BsonDocument();
            for (String field : List.of("topologyVersion", "hosts", "setName", "setVersion", "isWritablePrimary", "secondary",
                    "primary", "me", "electionId", "lastWrite")) {
                if (hello.containsKey(field)) {
                    repl.append(field, hello.get(field));
                }
            }
            if (replLevel > 0) {
                BsonDocument opTime = new BsonDocument("ts", server.clusterTime()).append("t", new BsonInt64(1));
                BsonArray progress = new BsonArray();
                for (ConfigMember member : configMembers(server, hello)) {
                    progress.add(new BsonDocument("host", new BsonString(member.host())).append("optime", opTime)
                            .append("lastAppliedOpTime", opTime).append("heartbeatAppliedOpTime", opTime)
                            .append("heartbeatDurableOpTime", opTime).append("memberId", new BsonInt32(member.id())));
                }
                repl.append("replicationProgress", progress);
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
