package io.blackpipe.fault;

import static io.blackpipe.fault.RuleFields.atLeastOne;
import static io.blackpipe.fault.RuleFields.flag;
import static io.blackpipe.fault.RuleFields.nonNegative;
import static io.blackpipe.fault.RuleFields.string;

import io.blackpipe.fault.action.BlockConnection;
import io.blackpipe.fault.action.CannedReply;
import io.blackpipe.fault.action.CloseConnection;
import io.blackpipe.fault.action.DelayReply;
import io.blackpipe.fault.action.DropReply;
import io.blackpipe.fault.action.ErrorReply;
import io.blackpipe.fault.action.Hang;
import io.blackpipe.fault.action.NoError;
import io.blackpipe.fault.action.ResetConnection;
import io.blackpipe.fault.action.TrickleReply;
import io.blackpipe.fault.action.TruncateReply;
import io.blackpipe.fault.action.WriteConcernError;
import java.util.Locale;
import java.util.TreeSet;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * What a rule's {@code data} says to do, read into its {@link FaultAction}: the server's precedence
 * between the fields that break a command, and blackpipe's own; {@link RuleParser} reads the rest.
 */
final class RuleActions {
    private RuleActions() {
    }

    /** @param seeds the seed of each random generator an action needs (a jitter), so runs replay */
    static FaultAction action(BsonDocument data, java.util.function.LongSupplier seeds) {
        boolean hang = flag(data, "hang");
        boolean reset = flag(data, "resetConnection");
        boolean close = flag(data, "closeConnection");
        boolean drop = flag(data, "dropReply");
        flag(data, "failInternalCommands"); // accepted for compatibility: no internal commands pass a proxy
        flag(data, "failLocalClients"); // the same: it adds the clients without a network session, which a proxy never has
        Integer code = errorCode(data);
        // code 0 is OK: mongod raises a Status of code OK, i.e. nothing, and the command runs (after a block);
        // its failpoint was entered all the same, so alone it is still a rule that fires, not "nothing to do"
        boolean noError = code != null && code == 0;
        if (noError) {
            code = null;
        }
        BsonArray labels = labels(data);
        BsonDocument extraInfo = extraInfo(data, code);
        BsonDocument writeConcernError = null;
        if (data.containsKey("writeConcernError")) {
            if (!data.isDocument("writeConcernError")) {
                throw new RuleException("data.writeConcernError", "must be a document {code, codeName, errmsg, errInfo}");
            }
            writeConcernError = data.getDocument("writeConcernError");
            if (writeConcernError.containsKey("code") && !writeConcernError.isNumber("code")) {
                throw new RuleException("data.writeConcernError.code", "must be an integer" + RuleFields.got(writeConcernError.get("code")));
            }
        }
        Long delayReply = data.containsKey("delayReplyMS") ? nonNegative(data, "delayReplyMS", "data.delayReplyMS") : null;
        Long jitter = data.containsKey("delayReplyJitterMS") ? nonNegative(data, "delayReplyJitterMS", "data.delayReplyJitterMS") : null;
        if (jitter != null && delayReply == null) {
            throw new RuleException("data.delayReplyJitterMS", "only meaningful with delayReplyMS: the delay it varies");
        }
        if (jitter != null && jitter > Integer.MAX_VALUE) {
            throw new RuleException("data.delayReplyJitterMS", jitter + " is too large: at most " + Integer.MAX_VALUE + " ms");
        }
        TrickleReply trickle = trickle(data);
        if (trickle != null && delayReply != null) {
            // each holds the reply its own way; one would silently win
            throw new RuleException("data.delayReplyMS", "give delayReplyMS or trickleReplyBytes + trickleReplyIntervalMS, not both");
        }
        TruncateReply truncate = truncate(data, drop, trickle != null, delayReply != null);
        ErrorReplies.TopologyVersionMode topologyVersion = topologyVersion(data);

        FaultAction action;
        if (data.containsKey("cannedReply")) {
            action = CannedReply.of(data);
        } else if (hang) {
            action = new Hang();
        } else if (reset) {
            action = new ResetConnection();
        } else if (close) {
            action = new CloseConnection();
        } else if (drop) {
            action = new DropReply();
        } else if (truncate != null) {
            action = truncate;
        } else if (code != null) {
            action = new ErrorReply(code, null, labels, extraInfo, topologyVersion);
        } else if (writeConcernError != null) {
            action = new WriteConcernError(writeConcernError, labels, topologyVersion);
        } else if (trickle != null) {
            action = trickle;
        } else if (delayReply != null) {
            // a seed only for a jitter: a plain delay leaves the seeds of later rules as they were, so seeded runs replay
            action = jitter == null || jitter == 0 ? new DelayReply(delayReply) : new DelayReply(delayReply, jitter, seeds.getAsLong());
        } else {
            action = null;
        }
        if (flag(data, "blockConnection")) {
            if (!data.containsKey("blockTimeMS")) {
                throw new RuleException("data.blockTimeMS", "required with blockConnection");
            }
            return new BlockConnection(nonNegative(data, "blockTimeMS", "data.blockTimeMS"), action);
        }
        if (data.containsKey("blockTimeMS")) {
            throw new RuleException("data.blockTimeMS", "only meaningful with blockConnection: true");
        }
        if (action == null && noError) {
            return new NoError();
        }
        if (action == null) {
            throw new RuleException("data", "says nothing to do: give errorCode (or error), closeConnection, blockConnection, "
                    + "writeConcernError, resetConnection, dropReply, truncateReplyBytes, hang, delayReplyMS, trickleReplyBytes with "
                    + "trickleReplyIntervalMS or cannedReply");
        }
        return action;
    }

    /**
     * trickleReplyBytes (each piece) and trickleReplyIntervalMS (the pause between pieces) come
     * together, each a whole number from 1 (the interval as delayReplyMS takes it); null without both.
     */
    private static TrickleReply trickle(BsonDocument data) {
        Long bytes = data.containsKey("trickleReplyBytes") ? atLeastOne(data, "trickleReplyBytes") : null;
        Long interval = data.containsKey("trickleReplyIntervalMS") ? atLeastOne(data, "trickleReplyIntervalMS") : null;
        if (bytes == null && interval == null) {
            return null;
        }
        if (interval == null) {
            throw new RuleException("data.trickleReplyIntervalMS", "required with trickleReplyBytes: the pause between pieces");
        }
        if (bytes == null) {
            throw new RuleException("data.trickleReplyBytes", "required with trickleReplyIntervalMS: the bytes of each piece");
        }
        return new TrickleReply(bytes, interval);
    }

    /**
     * truncateReplyBytes, a whole number from 1: the reply cut after that many bytes, then a FIN. It decides how the
     * reply ends, as dropReply does (an RST before any byte) and a delay or a trickle do (whole, late): with one of
     * them it is refused, naming both, rather than one silently winning. Null without it.
     */
    private static TruncateReply truncate(BsonDocument data, boolean drop, boolean trickle, boolean delay) {
        if (!data.containsKey("truncateReplyBytes")) {
            return null;
        }
        long bytes = atLeastOne(data, "truncateReplyBytes");
        String other = drop ? "dropReply" : trickle ? "trickleReplyBytes + trickleReplyIntervalMS" : delay ? "delayReplyMS" : null;
        if (other != null) {
            throw new RuleException("data.truncateReplyBytes", "give " + other + " or truncateReplyBytes, not both: each decides"
                    + " how the reply reaches the client (truncateReplyBytes: its first bytes, then the connection closes)");
        }
        return new TruncateReply(bytes);
    }

    private static Integer errorCode(BsonDocument data) {
        if (data.containsKey("errorCode") && data.containsKey("error")) {
            throw new RuleException("data.error", "give errorCode or error, not both");
        }
        if (data.containsKey("errorCode")) {
            BsonValue code = data.get("errorCode");
            if (!code.isNumber() || code.asNumber().doubleValue() != code.asNumber().intValue()) {
                double number = code.isNumber() ? code.asNumber().doubleValue() : Double.NaN;
                boolean whole = Double.isFinite(number) && number == Math.rint(number);
                throw new RuleException("data.errorCode", (whole ? "must fit 32 bits, as the server's error codes do" : "must be an integer")
                        + RuleFields.got(code));
            }
            return code.asNumber().intValue();
        }
        if (data.containsKey("error")) {
            BsonValue name = data.get("error");
            if (!name.isString()) {
                throw new RuleException("data.error", "must be an error name such as \"NotWritablePrimary\" (errorCode takes a number)");
            }
            Integer code = ErrorCodes.code(name.asString().getValue());
            if (code == null) {
                throw new RuleException("data.error", "unknown error name " + name.asString().getValue() + "; known: "
                        + new TreeSet<>(ErrorCodes.presets().keySet()));
            }
            return code;
        }
        return null;
    }

    /**
     * failCommand's errorExtraInfo: fields the error reply carries after codeName, for a code whose
     * errors have them (mongod drops it for any other code, so a rule giving it there is a mistake).
     */
    private static BsonDocument extraInfo(BsonDocument data, Integer code) {
        if (!data.containsKey("errorExtraInfo")) {
            return null;
        }
        if (!data.isDocument("errorExtraInfo")) {
            throw new RuleException("data.errorExtraInfo", "must be a document: the fields the error reply carries after codeName,"
                    + " e.g. {keyPattern: {sku: 1}, keyValue: {sku: \"A1\"}} for 11000 DuplicateKey");
        }
        if (code == null) {
            throw new RuleException("data.errorExtraInfo", "only meaningful with errorCode (or error): the error it completes");
        }
        if (!ErrorCodes.WITH_EXTRA_INFO.contains(code)) {
            throw new RuleException("data.errorExtraInfo", "error " + code + " (" + ErrorCodes.name(code) + ") carries no extra"
                    + " information, and mongod drops it; codes that do include 11000 DuplicateKey, 121 DocumentValidationFailure,"
                    + " 150 StaleEpoch, 13388 StaleConfig, 361 CollectionUUIDMismatch");
        }
        BsonDocument extraInfo = data.getDocument("errorExtraInfo");
        for (String key : extraInfo.keySet()) {
            if (ErrorReplies.OWN_FIELDS.contains(key)) {
                throw new RuleException("data.errorExtraInfo", "'" + key + "' is the error reply's own field (errorCode,"
                        + " errorLabels and topologyVersion set it); extra information is what follows codeName");
            }
        }
        return extraInfo;
    }

    private static BsonArray labels(BsonDocument data) {
        if (!data.containsKey("errorLabels")) {
            return null;
        }
        BsonValue value = data.get("errorLabels");
        if (!value.isArray()) {
            throw new RuleException("data.errorLabels", "must be an array of strings");
        }
        for (BsonValue label : value.asArray()) {
            if (!label.isString()) {
                throw new RuleException("data.errorLabels", "must be an array of strings");
            }
            if (label.asString().getValue().isBlank()) {
                // mongod would send it as given; no driver acts on it, and it is a mistake (a label variable unset)
                throw new RuleException("data.errorLabels", "an error label must not be empty, got '" + label.asString().getValue()
                        + "' (labels are names such as RetryableWriteError; errorLabels: [] sends none)");
            }
        }
        return value.asArray();
    }

    private static ErrorReplies.TopologyVersionMode topologyVersion(BsonDocument data) {
        String mode = string(data, "topologyVersion");
        if (mode == null) {
            return ErrorReplies.TopologyVersionMode.NEWER;
        }
        try {
            return ErrorReplies.TopologyVersionMode.valueOf(mode.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new RuleException("data.topologyVersion", "must be \"newer\", \"current\" or \"omit\"");
        }
    }
}
