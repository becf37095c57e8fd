package io.blackpipe.fault.action;

import io.blackpipe.fault.ErrorCodes;
import io.blackpipe.fault.ErrorReplies;
import io.blackpipe.fault.FaultAction;
import io.blackpipe.fault.Interception;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonDocument;

/** The command runs; its reply gains a writeConcernError (and the labels the server would add). */
public final class WriteConcernError implements FaultAction {
    /**
     * Commands that take a write concern on the server (aggregate and mapReduce when they write
     * out): the only ones a failCommand writeConcernError reaches.
     */
    public static final Set<String> COMMANDS = Set.of("insert", "update", "delete", "findAndModify",
            "findandmodify", "bulkWrite", "commitTransaction", "abortTransaction", "create", "createIndexes", "drop",
            "dropDatabase", "dropIndexes", "deleteIndexes", "collMod", "renameCollection", "convertToCapped",
            "cloneCollectionAsCapped", "applyOps", "aggregate", "mapReduce", "mapreduce", "createUser", "updateUser",
            "dropUser", "dropAllUsersFromDatabase", "grantRolesToUser", "revokeRolesFromUser", "createRole", "updateRole",
            "dropRole", "dropAllRolesFromDatabase", "grantRolesToRole", "revokeRolesFromRole", "grantPrivilegesToRole",
            "revokePrivilegesFromRole", "setFeatureCompatibilityVersion");

    private final BsonDocument writeConcernError;
    private final BsonArray errorLabels;
    private final ErrorReplies.TopologyVersionMode topologyVersion;

    /** @param topologyVersion what a state-change code's reply carries, as for an {@link ErrorReply} */
    public WriteConcernError(BsonDocument writeConcernError, BsonArray errorLabels, ErrorReplies.TopologyVersionMode topologyVersion) {
        this.writeConcernError = writeConcernError;
        this.errorLabels = errorLabels;
        this.topologyVersion = topologyVersion;
    }

    @Override
    public String name() {
        return "writeConcernError";
    }

    @Override
    public void apply(Interception command) {
        if (!COMMANDS.contains(command.facts().name())) {
            command.forward(); // a rule on every command, blocked first: the block applied, this does not (as on mongod)
            return;
        }
        command.forward(reply -> {
            BsonDocument body = ErrorReplies.withWriteConcernError(reply.body(), writeConcernError, errorLabels, command.facts(),
                    command.memberState());
            int code = body.getDocument("writeConcernError").getNumber("code").intValue();
            // as with an error reply: a state change's topologyVersion, mongod's for a not-primary code; without one
            // (or with the one it holds) a streaming driver waited out its monitor's held hello before it retried
            if (ErrorCodes.STATE_CHANGE.contains(code) && topologyVersion != ErrorReplies.TopologyVersionMode.OMIT) {
                BsonDocument version = command.topologyVersion(topologyVersion == ErrorReplies.TopologyVersionMode.NEWER,
                        ErrorReplies.ANNOUNCE_STATE_CHANGE_AFTER_MILLIS);
                if (version != null) {
                    body.put("topologyVersion", version);
                }
            }
            reply.replace(body);
        });
    }
}
