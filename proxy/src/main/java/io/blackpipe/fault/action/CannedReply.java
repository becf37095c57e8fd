package io.blackpipe.fault.action;

import io.blackpipe.fault.FaultAction;
import io.blackpipe.fault.Interception;
import io.blackpipe.fault.RuleException;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * A reply written in the rule, sent exactly as given in the member's place (MockupDB's canned
 * replies, for one command of a real conversation); the member never sees the command. For the
 * shapes errorCode cannot make: a write's writeErrors, an error's errInfo, a cursor of documents
 * the member does not hold.
 */
public final class CannedReply implements FaultAction {
    /** The rule fields a canned reply cannot go with: each decides the reply, or what becomes of the command, too. */
    public static final String[] EXCLUSIVE_WITH = {"errorCode", "error", "errorLabels", "writeConcernError", "delayReplyMS", "delayReplyJitterMS",
            "trickleReplyBytes", "trickleReplyIntervalMS", "dropReply", "truncateReplyBytes", "hang", "resetConnection", "closeConnection",
            "topologyVersion", "errorExtraInfo"};

    private final BsonDocument reply;

    private CannedReply(BsonDocument reply) {
        this.reply = reply;
    }

    /**
     * The action of a rule's {@code data.cannedReply}.
     *
     * @throws RuleException when it is not a document with a numeric {@code ok}, or comes with a field that decides the reply too
     */
    public static CannedReply of(BsonDocument data) {
        BsonValue value = data.get("cannedReply");
        if (!value.isDocument()) {
            throw new RuleException("data.cannedReply", "must be a document: the reply to send, e.g. {ok: 1, n: 1}");
        }
        if (!value.asDocument().isNumber("ok")) {
            throw new RuleException("data.cannedReply.ok", "required, a number (1, or 0 with code, codeName and errmsg): "
                    + "drivers read it first");
        }
        for (String field : EXCLUSIVE_WITH) {
            if (data.containsKey(field) && !BsonBoolean.FALSE.equals(data.get(field))) { // hang: false says nothing
                throw new RuleException("data.cannedReply", "is the whole reply, sent as given: not with " + field
                        + " (put what it would add into the reply; blockConnection may come before it)");
            }
        }
        return new CannedReply(value.asDocument().clone());
    }

    @Override
    public String name() {
        return "cannedReply";
    }

    @Override
    public void apply(Interception command) {
        command.answer(reply); // only read from here on, by every event loop
    }
}
