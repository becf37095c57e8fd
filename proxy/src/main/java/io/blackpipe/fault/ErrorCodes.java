package io.blackpipe.fault;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/** Server error codes by name, and the sets the retryable reads/writes and SDAM specs define. */
public final class ErrorCodes {
    private static final Map<String, Integer> BY_NAME = new LinkedHashMap<>();
    private static final Map<Integer, String> BY_CODE = new LinkedHashMap<>();

    static {
        define("InternalError", 1);
        define("BadValue", 2);
        define("HostUnreachable", 6);
        define("HostNotFound", 7);
        define("FailedToParse", 9);
        define("Unauthorized", 13);
        define("TypeMismatch", 14);
        define("AuthenticationFailed", 18);
        define("LockTimeout", 24);
        define("NamespaceNotFound", 26);
        define("CursorNotFound", 43);
        define("MaxTimeMSExpired", 50);
        define("CommandNotFound", 59);
        define("WriteConcernFailed", 64);
        define("NetworkTimeout", 89);
        define("ShutdownInProgress", 91);
        define("OperationFailed", 96);
        define("UnsatisfiableWriteConcern", 100);
        define("WriteConflict", 112);
        define("DocumentValidationFailure", 121);
        define("FailedToSatisfyReadPreference", 133);
        define("ReadConcernMajorityNotAvailableYet", 134);
        define("CappedPositionLost", 136);
        define("StaleEpoch", 150);
        define("PrimarySteppedDown", 189);
        define("IncompleteTransactionHistory", 217);
        define("TransactionTooOld", 225);
        define("RetryChangeStream", 234);
        define("CursorKilled", 237);
        define("SnapshotTooOld", 239);
        define("SnapshotUnavailable", 246);
        define("StaleDbVersion", 249);
        define("StaleChunkHistory", 250);
        define("NoSuchTransaction", 251);
        define("TransactionCommitted", 256);
        define("ExceededTimeLimit", 262);
        define("FailPointSetFailed", 266);
        define("OperationNotSupportedInTransaction", 263);
        define("PreparedTransactionInProgress", 267);
        define("MigrationConflict", 272);
        define("ChangeStreamFatalError", 280);
        define("ChangeStreamHistoryLost", 286);
        define("APIStrictError", 323);
        define("ShardCannotRefreshDueToLocksHeld", 343);
        define("InternalTransactionNotSupported", 358);
        define("TemporarilyUnavailable", 365);
        define("ResourceExhausted", 402);
        define("MigrationBlockingOperationCoordinatorCleaningUp", 406);
        define("PooledConnectionAcquisitionExceededTimeLimit", 407);
        define("UpdatesStillPending", 412);
        define("AdmissionQueueOverflow", 433);
        define("InterruptedDueToReshardingCriticalSection", 453);
        define("IngressRequestRateLimitExceeded", 462);
        define("LegacyNotPrimary", 10058);
        define("NotWritablePrimary", 10107);
        define("DuplicateKey", 11000);
        define("InterruptedAtShutdown", 11600);
        define("Interrupted", 11601);
        define("InterruptedDueToReplStateChange", 11602);
        define("NotPrimaryNoSecondaryOk", 13435);
        define("StaleConfig", 13388);
        define("NotPrimaryOrSecondary", 13436);
        define("BackupCursorOpenConflictWithCheckpoint", 50915);
        define("RetriableRemoteCommandFailure", 91331);
        define("InterruptedDueToFCVChange", 10045600);
        define("SocketException", 9001);
    }

    /**
     * The codes the retryable writes spec lists as retryable (network-like and state-change errors):
     * what the --spec report injects. WriteConcernFailed (64) was in the first version of the spec
     * but no server labels it.
     */
    public static final Set<Integer> RETRYABLE_WRITE = Set.of(11600, 11602, 10107, 13435, 13436, 189, 91, 7, 6, 89, 9001, 262);
    /** Codes the retryable reads spec retries. */
    public static final Set<Integer> RETRYABLE_READ = Set.of(11600, 11602, 10107, 13435, 13436, 189, 91, 7, 6, 89, 9001, 262, 134);
    /**
     * The server's RetriableError category (src/mongo/base/error_codes.yml), less its codes that
     * never reach a client: a 4.4+ server labels these RetryableWriteError on a retryable write
     * (and commit/abort), and TransientTransactionError on a statement inside a transaction. The
     * spec's list above plus ReadConcernMajorityNotAvailableYet (134) and codes of newer servers.
     */
    public static final Set<Integer> SERVER_RETRIABLE = Set.of(6, 7, 89, 91, 134, 189, 262, 358, 402, 406, 407, 412, 453, 462,
            9001, 10107, 11600, 11602, 13435, 13436, 50915, 91331, 10045600);
    /**
     * Codes a server labels TransientTransactionError in any transaction command, commit and abort
     * included (error_labels.cpp): WriteConflict, LockTimeout, PreparedTransactionInProgress,
     * ShardCannotRefreshDueToLocksHeld, StaleDbVersion, the snapshot errors and the re-targeting ones.
     */
    static final Set<Integer> TRANSIENT_IN_ANY_TRANSACTION_COMMAND = Set.of(112, 24, 267, 343, 249, 239, 246, 250, 272, 150, 13388);
    /**
     * Codes a 4.4+ server labels ResumableChangeStreamError on a change stream's aggregate or
     * getMore (error_labels.cpp): the RetriableError category, the NetworkError and
     * NeedRetargettingError ones, RetryChangeStream and FailedToSatisfyReadPreference.
     */
    static final Set<Integer> RESUMABLE_CHANGE_STREAM = union(SERVER_RETRIABLE, Set.of(6, 7, 89, 9001, 150, 13388, 234, 133));
    /**
     * Codes whose errors carry extra information in their reply (error_codes.yml's {@code extra}), the
     * only ones mongod's failCommand keeps errorExtraInfo for: e.g. 11000 DuplicateKey's keyPattern and
     * keyValue, 121 DocumentValidationFailure's errInfo, 13388 StaleConfig's versions. Internal-only ones left out.
     */
    public static final Set<Integer> WITH_EXTRA_INFO = Set.of(65, 91, 121, 143, 150, 169, 227, 236, 249, 271, 283, 284, 318,
            343, 346, 348, 351, 356, 359, 361, 409, 413, 435, 11000, 13388, 1003141);
    /**
     * The server's SystemOverloadedError category (error_codes.yml), which an 8.2+ server labels
     * SystemOverloadedError on any command: TemporarilyUnavailable and AdmissionQueueOverflow (the
     * category as 8.0 defines it) and the 8.2 ingress rate limiter's IngressRequestRateLimitExceeded.
     * Codes that only later or Atlas servers send (463, 473, 512) are not in it.
     */
    static final Set<Integer> SYSTEM_OVERLOADED = Set.of(365, 433, 462);
    /** The server's NonResumableChangeStreamError category, labelled so on any command. */
    static final Set<Integer> NON_RESUMABLE_CHANGE_STREAM = Set.of(280, 286);
    /** WriteConflict: in a transaction, the whole transaction may run again (TransientTransactionError). */
    public static final int WRITE_CONFLICT = 112;
    /** No such command: what a server without it answers (jongodb has no replSetGetStatus, say). */
    public static final int COMMAND_NOT_FOUND = 59;
    /** What a mongod that quiesces for its shutdown answers every hello. */
    public static final int SHUTDOWN_IN_PROGRESS = 91;
    /** What a mongod answers the operations it interrupts as it shuts down. */
    public static final int INTERRUPTED_AT_SHUTDOWN = 11600;
    /** A retried write whose first run the server no longer has the history of: refused, never run again. */
    public static final int INCOMPLETE_TRANSACTION_HISTORY = 217;

    /**
     * The server's NotPrimaryError category: after one of these on a w:0 (moreToCome) write, mongod
     * closes the connection so that the client selects a server again (OP_MSG spec).
     */
    public static final Set<Integer> NOT_PRIMARY = Set.of(10107, 13435, 13436, 11602, 189, 10058);
    /** SDAM's "not writable primary" and "node is recovering" codes: drivers re-check the member on these. */
    public static final Set<Integer> STATE_CHANGE = Set.of(10107, 13435, 10058, 11600, 11602, 13436, 189, 91);

    private ErrorCodes() {
    }

    private static Set<Integer> union(Set<Integer> a, Set<Integer> b) {
        Set<Integer> all = new java.util.HashSet<>(a);
        all.addAll(b);
        return Set.copyOf(all);
    }

    private static void define(String name, int code) {
        BY_NAME.put(name, code);
        BY_CODE.put(code, name);
    }

    /** The code of a named error, or null. */
    public static Integer code(String name) {
        return BY_NAME.get(name);
    }

    /** The codeName a server sends with {@code code} ("UnknownError(n)"-like fallback for unnamed codes). */
    public static String name(int code) {
        return BY_CODE.getOrDefault(code, "Location" + code);
    }

    public static Map<String, Integer> presets() {
        return Map.copyOf(BY_NAME);
    }
}
