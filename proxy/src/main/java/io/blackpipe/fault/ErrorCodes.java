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
        define("Unauthorized", 13);
        define("AuthenticationFailed", 18);
        define("CursorNotFound", 43);
        define("MaxTimeMSExpired", 50);
        define("CommandNotFound", 59);
        define("WriteConcernFailed", 64);
        define("NetworkTimeout", 89);
        define("ShutdownInProgress", 91);
        define("OperationFailed", 96);
        define("UnsatisfiableWriteConcern", 100);
        define("WriteConflict", 112);
        define("ReadConcernMajorityNotAvailableYet", 134);
        define("PrimarySteppedDown", 189);
        define("NoSuchTransaction", 251);
        define("ExceededTimeLimit", 262);
        define("LegacyNotPrimary", 10058);
        define("NotWritablePrimary", 10107);
        define("DuplicateKey", 11000);
        define("InterruptedAtShutdown", 11600);
        define("InterruptedDueToReplStateChange", 11602);
        define("NotPrimaryNoSecondaryOk", 13435);
        define("NotPrimaryOrSecondary", 13436);
        define("SocketException", 9001);
    }

    /**
     * Codes a 4.4+ server labels RetryableWriteError (network-like and state-change errors).
     * WriteConcernFailed (64) was in the first retryable-writes spec but is no longer labelled.
     */
    public static final Set<Integer> RETRYABLE_WRITE = Set.of(11600, 11602, 10107, 13435, 13436, 189, 91, 7, 6, 89, 9001, 262);
    /** Codes the retryable reads spec retries. */
    public static final Set<Integer> RETRYABLE_READ = Set.of(11600, 11602, 10107, 13435, 13436, 189, 91, 7, 6, 89, 9001, 262, 134);
    /** SDAM's "not writable primary" and "node is recovering" codes: drivers re-check the member on these. */
    public static final Set<Integer> STATE_CHANGE = Set.of(10107, 13435, 10058, 11600, 11602, 13436, 189, 91);

    private ErrorCodes() {
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
