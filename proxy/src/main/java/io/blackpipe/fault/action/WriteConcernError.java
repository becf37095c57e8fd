package io.blackpipe.fault.action;

import io.blackpipe.fault.ErrorReplies;
import io.blackpipe.fault.FaultAction;
import io.blackpipe.fault.Interception;
import org.bson.BsonArray;
import org.bson.BsonDocument;

/** The command runs; its reply gains a writeConcernError (and the labels the server would add). */
public final class WriteConcernError implements FaultAction {
    private final BsonDocument writeConcernError;
    private final BsonArray errorLabels;

    public WriteConcernError(BsonDocument writeConcernError, BsonArray errorLabels) {
        this.writeConcernError = writeConcernError;
        this.errorLabels = errorLabels;
    }

    @Override
    public String name() {
        return "writeConcernError";
    }

    @Override
    public void apply(Interception command) {
        command.forward(reply -> reply.replace(ErrorReplies.withWriteConcernError(reply.body(), writeConcernError,
                errorLabels, command.facts(), command.memberState())));
    }
}
