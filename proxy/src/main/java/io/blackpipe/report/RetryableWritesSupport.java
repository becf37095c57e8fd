package io.blackpipe.report;

import io.blackpipe.topology.Discovery;
import io.blackpipe.topology.UpstreamUri;
import org.bson.BsonDocument;

/**
 * Whether the upstream lets a driver retry writes at all, decided as drivers decide it (retryable
 * writes spec, "Determining Retryable Support"): a standalone has no retryable writes, nor has a
 * server whose hello carries no logicalSessionTimeoutMinutes. There, the spec's answer to every
 * write fault is one attempt, and a report that expected a retry would blame the driver.
 *
 * @param supported whether a driver retries a retryable write on this deployment
 * @param reason    why it does not, for the report's upstream line; null when supported
 */
record RetryableWritesSupport(boolean supported, String reason) {
    static final RetryableWritesSupport SUPPORTED = new RetryableWritesSupport(true, null);
    private static final int HELLO_TIMEOUT_MILLIS = 5000;

    /**
     * Asks the upstream's seeds as the proxy does at start ({@link Discovery}), so an upstream that
     * cannot be reached fails here at once and says so, as the proxy would.
     */
    static RetryableWritesSupport of(String upstreamUri) {
        Discovery.Deployment deployment = Discovery.discover(UpstreamUri.parse(upstreamUri), HELLO_TIMEOUT_MILLIS, passedOver -> { });
        if (deployment.kind().equals("standalone")) {
            return new RetryableWritesSupport(false,
                    "a standalone: drivers do not retry writes on it, retryable writes need a replica set or a sharded cluster");
        }
        BsonDocument hello = deployment.hello();
        if (hello != null && !hello.containsKey("logicalSessionTimeoutMinutes")) {
            return new RetryableWritesSupport(false,
                    "no sessions (its hello has no logicalSessionTimeoutMinutes): drivers do not retry writes on it");
        }
        return SUPPORTED;
    }

    /** {@code description} with the reason appended, when there is one. */
    String describe(String description) {
        return supported ? description : description + " (" + reason + ")";
    }
}
