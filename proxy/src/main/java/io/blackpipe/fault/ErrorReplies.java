package io.blackpipe.fault;

import io.blackpipe.topology.MemberState;
import io.blackpipe.wire.CommandFacts;
import java.util.Map;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * Error replies shaped as a real server of the member's version sends them: code, codeName,
 * errmsg, the error labels the server computes, and for state-change errors a topologyVersion
 * (newer than the member's current one by default, so drivers re-check the member as after a
 * real stepdown), then the $clusterTime and operationTime a replica-set member puts on every reply.
 */
public final class ErrorReplies {
    /** Which topologyVersion a state-change error carries. */
    public enum TopologyVersionMode { NEWER, CURRENT, OMIT }

    /**
     * How long after a state-change error with a newer topologyVersion the member's held hellos hear of it. Told at
     * once, the driver's monitor could hear first: the error then read as stale and was ignored (no Unknown, no pool
     * clear for a shutdown code, in most runs of a streaming driver), and the Java driver, which reads a
     * writeConcernError's topologyVersion from inside it, kept the member Unknown for its monitor's next whole wait. A
     * moment later, the monitor hears after the error, as after a real stepdown.
     */
    public static final long ANNOUNCE_STATE_CHANGE_AFTER_MILLIS = 100;

    /** The fields of an error reply that extra information may not replace. */
    public static final Set<String> OWN_FIELDS = Set.of("ok", "errmsg", "code", "codeName", "errorLabels",
            "topologyVersion", "$clusterTime", "operationTime");

    /** maxWireVersion of MongoDB 4.4, from which drivers retry writes only on the RetryableWriteError label. */
    public static final int WIRE_4_4 = 9;
    /** maxWireVersion of MongoDB 6.0, whose servers also add NoWritesPerformed. */
    private static final int WIRE_6_0 = 17;
    /** maxWireVersion of MongoDB 8.2, whose servers label their overload codes SystemOverloadedError. */
    private static final int WIRE_8_2 = 27;

    private ErrorReplies() {
    }

    /** @param topologyVersion sent with state-change errors; null to send none */
    public static BsonDocument error(int code, String errmsg, BsonArray errorLabels, BsonDocument topologyVersion,
                                     CommandFacts facts, MemberState member) {
        return error(code, errmsg, errorLabels, topologyVersion, facts, facts.changeStream(), member);
    }

    /**
     * @param topologyVersion sent with state-change errors; null to send none
     * @param onChangeStream  the command opens or reads a change stream (see {@link Interception#onChangeStream})
     */
    public static BsonDocument error(int code, String errmsg, BsonArray errorLabels, BsonDocument topologyVersion,
                                     CommandFacts facts, boolean onChangeStream, MemberState member) {
        BsonDocument reply = new BsonDocument("ok", new BsonDouble(0))
                .append("errmsg", new BsonString(errmsg != null ? errmsg : defaultMessage(code, facts)))
                .append("code", new BsonInt32(code))
                .append("codeName", new BsonString(ErrorCodes.name(code)));
        BsonArray labels = errorLabels != null ? errorLabels : labels(code, null, facts, onChangeStream, member, true);
        if (!labels.isEmpty()) {
            reply.append("errorLabels", labels);
        }
        if (topologyVersion != null) {
            reply.append("topologyVersion", topologyVersion);
        }
        reply.putAll(member.times()); // last, as mongod appends them to its error replies
        return reply;
    }

    /** {@code error} with {@code extraInfo}'s fields after codeName, where mongod serializes an error's extra information. */
    public static BsonDocument withExtraInfo(BsonDocument error, BsonDocument extraInfo) {
        BsonDocument reply = new BsonDocument();
        for (Map.Entry<String, BsonValue> field : error.entrySet()) {
            reply.append(field.getKey(), field.getValue());
            if (field.getKey().equals("codeName")) {
                reply.putAll(extraInfo.clone()); // a copy: the rule's document is used again by its next reply
            }
        }
        return reply;
    }

    /**
     * The upstream's reply with a writeConcernError added, as after a write that did not replicate; a failed reply (one a
     * member that stepped down during a rule's block gave) keeps its code and labels.
     */
    public static BsonDocument withWriteConcernError(BsonDocument reply, BsonDocument writeConcernError, BsonArray errorLabels,
                                                     CommandFacts facts, MemberState member) {
        BsonDocument copy = reply.clone();
        BsonDocument error = writeConcernError.clone();
        int code = error.isNumber("code") ? error.getNumber("code").intValue() : 64;
        error.putIfAbsent("code", new BsonInt32(code));
        error.putIfAbsent("codeName", new BsonString(ErrorCodes.name(code)));
        // a replication timeout's words, or those of the state change that cut the wait (the primary stepped down, shuts down)
        error.putIfAbsent("errmsg", new BsonString(code == 64 ? "waiting for replication timed out" : defaultMessage(code, facts)));
        copy.put("writeConcernError", error);
        BsonArray labels = copy.isArray("errorLabels") ? copy.getArray("errorLabels").clone() : new BsonArray();
        // a reply that failed keeps its own labels (a NotWritablePrimary's RetryableWriteError): the driver reads those first
        for (BsonValue label : errorLabels != null ? errorLabels : labels(null, code, facts, false, member, false)) {
            if (!labels.contains(label)) {
                labels.add(label);
            }
        }
        if (!labels.isEmpty()) {
            copy.put("errorLabels", labels);
        }
        return copy;
    }

    /**
     * The labels the server adds (src/mongo/db/error_labels.cpp): TransientTransactionError for an
     * error in a transaction command that the whole transaction may be retried after; else
     * RetryableWriteError (4.4+) for a retriable code, as the error or as the writeConcernError, on
     * a retryable write (txnNumber) or a commit/abort, with NoWritesPerformed (6.0+) when the
     * command never ran; else ResumableChangeStreamError (4.4+) for a resumable code on a change
     * stream's aggregate or getMore; NonResumableChangeStreamError for its codes on any command;
     * and, after those, SystemOverloadedError (8.2+) for an overload code on any command. Never
     * RetryableError: mongod's label builder, which failCommand's errors go through, does not add
     * it; a server sends it (with NoWritesPerformed) on the requests its rate limiter turns away.
     *
     * @param code           the reply's error code, null when it only carries a writeConcernError
     * @param wcCode         the writeConcernError's code, or null
     * @param onChangeStream the command opens or reads a change stream
     */
    static BsonArray labels(Integer code, Integer wcCode, CommandFacts facts, boolean onChangeStream, MemberState member,
                            boolean nothingWritten) {
        BsonArray labels = new BsonArray();
        boolean commitOrAbort = facts.name().equals("commitTransaction") || facts.name().equals("abortTransaction");
        boolean transactionCommand = facts.inTransaction() || commitOrAbort;
        boolean retryableWrite = facts.hasTxnNumber() && !facts.inTransaction() || commitOrAbort;
        boolean retriable = code != null && ErrorCodes.SERVER_RETRIABLE.contains(code)
                || wcCode != null && ErrorCodes.SERVER_RETRIABLE.contains(wcCode);
        if (transactionCommand && code != null && isTransientTransactionError(code, wcCode != null, commitOrAbort)) {
            labels.add(new BsonString("TransientTransactionError"));
        } else if (retryableWrite && retriable && member.maxWireVersion() >= WIRE_4_4) {
            labels.add(new BsonString("RetryableWriteError"));
            if (nothingWritten && member.maxWireVersion() >= WIRE_6_0) {
                labels.add(new BsonString("NoWritesPerformed"));
            }
        }
        if (labels.isEmpty() && isResumableChangeStreamError(code, wcCode, facts, onChangeStream, member)) {
            labels.add(new BsonString("ResumableChangeStreamError"));
        } else if (code != null && ErrorCodes.NON_RESUMABLE_CHANGE_STREAM.contains(code)) {
            labels.add(new BsonString("NonResumableChangeStreamError"));
        }
        if (code != null && ErrorCodes.SYSTEM_OVERLOADED.contains(code) && member.maxWireVersion() >= WIRE_8_2) {
            labels.add(new BsonString("SystemOverloadedError"));
        }
        return labels;
    }

    /** error_labels.cpp's isResumableChangeStreamError; drivers resume a 4.4+ server's change stream only on this label. */
    private static boolean isResumableChangeStreamError(Integer code, Integer wcCode, CommandFacts facts, boolean onChangeStream,
                                                        MemberState member) {
        boolean aggregateOrGetMore = facts.name().equals("aggregate") || facts.name().equals("getMore");
        return onChangeStream && aggregateOrGetMore && code != null && wcCode == null
                && ErrorCodes.RESUMABLE_CHANGE_STREAM.contains(code) && member.maxWireVersion() >= WIRE_4_4;
    }

    /** error_labels.cpp's isTransientTransactionError. */
    private static boolean isTransientTransactionError(int code, boolean hasWriteConcernError, boolean commitOrAbort) {
        if (code == 358) {
            return false; // InternalTransactionNotSupported: a retryable write error, never transient
        }
        if (ErrorCodes.TRANSIENT_IN_ANY_TRANSACTION_COMMAND.contains(code)) {
            return true;
        }
        if (commitOrAbort) {
            return code == 251 && !hasWriteConcernError; // NoSuchTransaction: nothing of it can have been committed
        }
        return ErrorCodes.SERVER_RETRIABLE.contains(code) || code == 251;
    }

    /**
     * mongod's words for a not-primary error to this client (service_entry_point_common.cpp), or null
     * for another code: "not master" ("not master and slaveOk=false") to a client that never said
     * helloOk: true, as every server before 4.4.2 said it to all; drivers older than hello retry
     * on those words (the Ruby driver 2.5 retries a write refused "not master", not "not primary").
     */
    public static String notPrimaryWording(int code, boolean clientSaidHelloOk) {
        switch (code) {
            case 10107: return clientSaidHelloOk ? "not primary" : "not master";
            case 13435: return clientSaidHelloOk ? "not primary and secondaryOk=false" : "not master and slaveOk=false";
            default: return null;
        }
    }

    private static String defaultMessage(int code, CommandFacts facts) {
        switch (code) {
            case 10107: return "not primary";
            case 13435: return "not primary and secondaryOk=false";
            case 13436: return "not primary or secondary; cannot currently read from this replSet member";
            case 11602: return "operation was interrupted because of a replica set state change";
            case 11600: return "interrupted at shutdown";
            case 91: return "The server is in quiesce mode and will shut down";
            case 189: return "primary stepped down";
            case 13: return "not authorized on " + facts.database() + " to execute command { " + facts.name() + " }";
            default: return "Failing command " + facts.name() + " via blackpipe's failCommand";
        }
    }

    /** An ok:0 reply for a bad wire command (e.g. an invalid configureFailPoint): code 2 BadValue. */
    public static BsonDocument badValue(String errmsg) {
        return commandError(2, errmsg);
    }

    /** An ok:0 reply without labels, for a command the proxy answers itself: code, codeName, errmsg. */
    public static BsonDocument commandError(int code, String errmsg) {
        return new BsonDocument("ok", new BsonDouble(0)).append("errmsg", new BsonString(errmsg))
                .append("code", new BsonInt32(code)).append("codeName", new BsonString(ErrorCodes.name(code)));
    }
}
