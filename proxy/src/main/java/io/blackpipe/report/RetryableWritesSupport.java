package io.blackpipe.report;

import io.blackpipe.fault.ErrorReplies;
import io.blackpipe.topology.Discovery;
import io.blackpipe.topology.UpstreamUri;
import org.bson.BsonDocument;

/**
 * Whether the upstream lets a driver retry writes at all, decided as drivers decide it (retryable
 * writes spec, "Determining Retryable Support"): a standalone has no retryable writes, nor has a
 * server whose hello carries no logicalSessionTimeoutMinutes. There, the spec's answer to every
 * write fault is one attempt, and a report that expected a retry would blame the driver.
 *
 * <p>Its maxWireVersion says how a driver decides which write errors to retry: by the server's
 * RetryableWriteError label from MongoDB 4.4 (wire version 9), by the error code before.
 *
 * @param supported      whether a driver retries a retryable write on this deployment
 * @param reason         why it does not, for the report's upstream line; null when supported
 * @param maxWireVersion the answering member's hello's, 0 when it said none
 */
record RetryableWritesSupport(boolean supported, String reason, int maxWireVersion) {
    /** MongoDB 4.4's: from it, a driver retries a write on the server's RetryableWriteError label only. */
    static final int LABELS_DECIDE_WIRE_VERSION = ErrorReplies.WIRE_4_4;
    private static final int HELLO_TIMEOUT_MILLIS = 5000;

    /**
     * Asks the upstream's seeds as the proxy does at start ({@link Discovery}), so an upstream that
     * cannot be reached fails here at once and says so, as the proxy would.
     */
    static RetryableWritesSupport of(String upstreamUri) {
        Discovery.Deployment deployment = Discovery.discover(UpstreamUri.parse(upstreamUri), HELLO_TIMEOUT_MILLIS, passedOver -> { });
        BsonDocument hello = deployment.hello();
        int wire = hello != null && hello.isNumber("maxWireVersion") ? hello.getNumber("maxWireVersion").intValue() : 0;
        if (deployment.kind().equals("standalone")) {
            return new RetryableWritesSupport(false,
                    "a standalone: drivers do not retry writes on it, retryable writes need a replica set or a sharded cluster", wire);
        }
        if (hello != null && !hello.containsKey("logicalSessionTimeoutMinutes")) {
            return new RetryableWritesSupport(false,
                    "no sessions (its hello has no logicalSessionTimeoutMinutes): drivers do not retry writes on it", wire);
        }
        return new RetryableWritesSupport(true, null, wire);
    }

    /** Whether a driver retries a write by the server's label, not its code: 4.4 and later. */
    boolean labelsDecide() {
        return maxWireVersion >= LABELS_DECIDE_WIRE_VERSION;
    }

    /** {@code description} with the reason appended, when there is one. */
    String describe(String description) {
        return supported ? description : description + " (" + reason + ")";
    }

    /**
     * {@link #describe} for {@code report --spec}, which also says when it leaves out the cases that
     * tell retrying by label from retrying by code: before 4.4 a driver adds the label itself from
     * the code, and either answer to those cases can be right.
     */
    String describeForSpec(String description) {
        String described = describe(description);
        if (labelsDecide()) {
            return described;
        }
        String wire = maxWireVersion == 0 ? "no maxWireVersion in its hello" : "maxWireVersion " + maxWireVersion;
        return described + " (" + wire + ", before MongoDB 4.4's 9: drivers retry writes by code there, so the "
                + SpecCase.BY_LABEL + " cases are left out)";
    }
}
