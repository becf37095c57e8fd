package io.blackpipe.report;

import io.blackpipe.fault.ErrorCodes;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;

/**
 * One check of the retryable reads/writes specs: an operation, the fault injected on its command
 * (a failCommand rule, {@code times} firings), the attempts the spec allows and what it requires of
 * their transaction ID.
 *
 * @param operation     what the driver runs: insert, find, getMore, updateMany, deleteMany or insertW0
 * @param command       the wire command the fault is injected on (insert, find, getMore, update, delete)
 * @param errorCode     the error code injected, or null for a network error (resetConnection)
 * @param errorLabels   the labels the error carries exactly, or null for those the server would add
 * @param times         how many attempts in a row meet the fault
 * @param retryable     whether the spec retries the operation after this fault (once, never twice)
 * @param transactionId what the spec requires of the attempts' lsid and txnNumber
 */
public record SpecCase(String group, String operation, String command, Integer errorCode, List<String> errorLabels, int times,
                       boolean retryable, TransactionId transactionId) {
    /** Non-retryable codes that make sense as command errors: BadValue, Unauthorized, MaxTimeMSExpired, CommandNotFound, WriteConflict. */
    static final List<Integer> NON_RETRYABLE = List.of(2, 13, 50, 59, 112);
    /** The group of a retryable-write case on a deployment without retryable writes (see {@link #withoutWriteRetries}). */
    static final String WRITE_NOT_RETRIED_HERE = "write, no retry here";
    /**
     * The group of the cases that tell a driver retrying a write by the server's label (4.4+) from one
     * retrying by the code: a listed code without the label, an unlisted code with it. Left out
     * before 4.4 (see {@link RetryableWritesSupport#labelsDecide()}).
     */
    static final String BY_LABEL = "by label (4.4+)";

    /** A case whose error carries the labels the server would add, and the transaction ID its operation calls for. */
    public SpecCase(String group, String operation, String command, Integer errorCode, int times, boolean retryable) {
        this(group, operation, command, errorCode, null, times, retryable, transactionIdOf(operation, command));
    }

    /** Where retryable writes are supported: reads are not judged, an acknowledged insertOne must carry one, other writes must not. */
    private static TransactionId transactionIdOf(String operation, String command) {
        if (command.equals("find") || command.equals("getMore")) {
            return TransactionId.NOT_JUDGED;
        }
        return operation.equals("insert") ? TransactionId.SAME_ON_EVERY_ATTEMPT : TransactionId.NONE;
    }

    /** The spec's cases, in report order. */
    public static List<SpecCase> all() {
        List<SpecCase> cases = new ArrayList<>();
        addCodes(cases, "retryable write", "insert", "insert", ErrorCodes.RETRYABLE_WRITE);
        addCodes(cases, "retryable read", "find", "find", ErrorCodes.RETRYABLE_READ);
        for (Integer fault : java.util.Arrays.asList(null, 10107)) { // a network error, and a code retryable elsewhere
            cases.add(new SpecCase("never retried", "getMore", "getMore", fault, 1, false));
            cases.add(new SpecCase("never retried", "updateMany", "update", fault, 1, false));
            cases.add(new SpecCase("never retried", "deleteMany", "delete", fault, 1, false));
        }
        cases.add(new SpecCase("never retried", "insertW0", "insert", 10107, 1, false));
        cases.add(new SpecCase("one retry only", "insert", "insert", null, 2, true));
        cases.add(new SpecCase("one retry only", "insert", "insert", 10107, 2, true));
        cases.add(new SpecCase("one retry only", "find", "find", null, 2, true));
        cases.add(new SpecCase("one retry only", "find", "find", 10107, 2, true));
        // 4.4+ servers label what drivers retry: the label decides, not the code (writes only; reads go by code)
        cases.add(new SpecCase(BY_LABEL, "insert", "insert", 10107, List.of(), 1, false, TransactionId.SAME_ON_EVERY_ATTEMPT));
        cases.add(new SpecCase(BY_LABEL, "insert", "insert", 2, List.of("RetryableWriteError"), 1, true,
                TransactionId.SAME_ON_EVERY_ATTEMPT));
        return cases;
    }

    private static void addCodes(List<SpecCase> cases, String group, String operation, String command, java.util.Set<Integer> retryable) {
        cases.add(new SpecCase(group, operation, command, null, 1, true));
        for (int code : new TreeSet<>(retryable)) {
            cases.add(new SpecCase(group, operation, command, code, 1, true));
        }
        for (int code : NON_RETRYABLE) {
            cases.add(new SpecCase(group.replace("retryable", "non-retryable"), operation, command, code, 1, false));
        }
    }

    /**
     * This case on a deployment without retryable writes (a standalone): the spec retries no write
     * there, whatever the fault, so a write case expects one attempt, and no transaction ID ("drivers
     * MUST NOT include a transaction ID in the command"). Reads are retried anywhere.
     */
    SpecCase withoutWriteRetries() {
        if (!isWrite()) {
            return this;
        }
        return new SpecCase(retryable ? WRITE_NOT_RETRIED_HERE : group, operation, command, errorCode, errorLabels, times, false,
                TransactionId.NONE);
    }

    boolean isWrite() {
        return !command.equals("find") && !command.equals("getMore");
    }

    /** Whether the error carries labels chosen by the case, not the server's. */
    boolean byLabel() {
        return errorLabels != null;
    }

    /** The attempts the spec allows: a retry at most once, and only where retryable. */
    public int expectedAttempts() {
        return retryable ? 2 : 1;
    }

    /** e.g. "retry once (2 attempts)", or for a write "retry once (2), same txnNumber". */
    public String expectation() {
        String transaction = transactionId.shown();
        if (transaction.isEmpty()) {
            if (!retryable) {
                return "never retry (1 attempt)";
            }
            return times > 1 ? "give up after 1 retry (2)" : "retry once (2 attempts)";
        }
        if (!retryable) { // one attempt: "same" would compare it with none
            return "never retry (1), " + (transactionId == TransactionId.NONE ? transaction : "with txnNumber");
        }
        return (times > 1 ? "1 retry only (2), " : "retry once (2), ") + transaction;
    }

    /** e.g. "10107 NotWritablePrimary x1", "network reset x2" or "2 BadValue x1, labels [RetryableWriteError]". */
    public String fault() {
        String what = errorCode == null ? "network reset" : errorCode + " " + ErrorCodes.name(errorCode);
        return what + " x" + times + (errorLabels == null ? "" : ", labels [" + String.join(", ", errorLabels) + "]");
    }

    /** e.g. "insert: 10107 NotWritablePrimary x1". */
    public String name() {
        return operation + ": " + fault();
    }

    /** The failCommand rule that injects the fault. */
    BsonDocument rule() {
        BsonDocument data = new BsonDocument("failCommands", new BsonArray(List.of(new BsonString(command))));
        if (errorCode == null) {
            data.append("resetConnection", BsonBoolean.TRUE);
        } else {
            data.append("errorCode", new BsonInt32(errorCode));
        }
        if (errorLabels != null) {
            data.append("errorLabels", new BsonArray(errorLabels.stream().map(BsonString::new).toList()));
        }
        return new BsonDocument("configureFailPoint", new BsonString("failCommand"))
                .append("mode", new BsonDocument("times", new BsonInt32(times)))
                .append("data", data);
    }
}
