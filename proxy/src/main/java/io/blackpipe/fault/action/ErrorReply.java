package io.blackpipe.fault.action;

import io.blackpipe.fault.ErrorReplies;
import io.blackpipe.fault.FaultAction;
import io.blackpipe.fault.Interception;
import io.blackpipe.fault.ErrorCodes;
import org.bson.BsonArray;
import org.bson.BsonDocument;

/** An ok:0 reply shaped as the member itself would send it; the command is not forwarded. */
public final class ErrorReply implements FaultAction {
    private final int code;
    private final String errmsg;
    private final BsonArray errorLabels;
    private final BsonDocument extraInfo;
    private final ErrorReplies.TopologyVersionMode topologyVersion;

    /**
     * @param errorLabels the labels to send exactly, or null to compute them as the server does
     * @param extraInfo   fields the reply carries after codeName (failCommand's errorExtraInfo), or null
     */
    public ErrorReply(int code, String errmsg, BsonArray errorLabels, BsonDocument extraInfo,
                      ErrorReplies.TopologyVersionMode topologyVersion) {
        this.code = code;
        this.errmsg = errmsg;
        this.errorLabels = errorLabels;
        this.extraInfo = extraInfo;
        this.topologyVersion = topologyVersion;
    }

    @Override
    public String name() {
        return "errorReply";
    }

    public int code() {
        return code;
    }

    @Override
    public void apply(Interception command) {
        BsonDocument version = ErrorCodes.STATE_CHANGE.contains(code) && topologyVersion != ErrorReplies.TopologyVersionMode.OMIT
                ? command.topologyVersion(topologyVersion == ErrorReplies.TopologyVersionMode.NEWER,
                        ErrorReplies.ANNOUNCE_STATE_CHANGE_AFTER_MILLIS) : null;
        String message = errmsg != null ? errmsg : ErrorReplies.notPrimaryWording(code, command.clientSaidHelloOk());
        BsonDocument reply = ErrorReplies.error(code, message, errorLabels, version, command.facts(), command.onChangeStream(),
                command.memberState());
        command.answer(extraInfo == null ? reply : ErrorReplies.withExtraInfo(reply, extraInfo));
    }
}
