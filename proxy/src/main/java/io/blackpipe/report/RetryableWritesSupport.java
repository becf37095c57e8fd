package io.blackpipe.report;

import com.mongodb.client.MongoClient;
import com.mongodb.connection.ClusterDescription;
import com.mongodb.connection.ClusterType;

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

    /** Asks the deployment behind {@code direct} (a client straight to the upstream) through its hello. */
    static RetryableWritesSupport of(MongoClient direct) {
        ReportRunner.connect(direct);
        ClusterDescription cluster = direct.getClusterDescription();
        if (cluster.getType() == ClusterType.STANDALONE) {
            return new RetryableWritesSupport(false,
                    "a standalone: drivers do not retry writes on it, retryable writes need a replica set or a sharded cluster");
        }
        if (cluster.getLogicalSessionTimeoutMinutes() == null) {
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
