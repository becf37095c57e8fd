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
 * (a failCommand rule, {@code times} firings), and the attempts the spec allows.
 *
 * @param operation  what the driver runs: insert, find, getMore, updateMany, deleteMany or insertW0
 * @param command    the wire command the fault is injected on (insert, find, getMore, update, delete)
 * @param errorCode  the error code injected, or null for a network error (resetConnection)
 * @param times      how many attempts in a row meet the fault
 * @param retryable  whether the spec retries the operation after this fault (once, never twice)
 */
public record SpecCase(String group, String operation, String command, Integer errorCode, int times, boolean retryable) {
    /** Non-retryable codes that make sense as command errors: BadValue, Unauthorized, MaxTimeMSExpired, CommandNotFound, WriteConflict. */
    static final List<Integer> NON_RETRYABLE = List.of(2, 13, 50, 59, 112);
    /** The group of a retryable-write case on a deployment without retryable writes (see {@link #withoutWriteRetries}). */
    static final String WRITE_NOT_RETRIED_HERE = "write, no retry here";

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
     * there, whatever the fault, so a write case expects one attempt. Reads are retried anywhere.
     */
    SpecCase withoutWriteRetries() {
        boolean write = !command.equals("find") && !command.equals("getMore");
        return write && retryable ? new SpecCase(WRITE_NOT_RETRIED_HERE, operation, command, errorCode, times, false) : this;
    }

    /** The attempts the spec allows: a retry at most once, and only where retryable. */
    public int expectedAttempts() {
        return retryable ? 2 : 1;
    }

    /** e.g. "retry once (2 attempts)". */
    public String expectation() {
        if (!retryable) {
            return "never retry (1 attempt)";
        }
        return times > 1 ? "give up after 1 retry (2)" : "retry once (2 attempts)";
    }

    /** e.g. "10107 NotWritablePrimary x1" or "network reset x2". */
    public String fault() {
        String what = errorCode == null ? "network reset" : errorCode + " " + ErrorCodes.name(errorCode);
        return what + " x" + times;
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
        return new BsonDocument("configureFailPoint", new BsonString("failCommand"))
                .append("mode", new BsonDocument("times", new BsonInt32(times)))
                .append("data", data);
    }
}
