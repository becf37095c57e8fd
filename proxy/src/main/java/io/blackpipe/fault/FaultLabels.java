package io.blackpipe.fault;

import io.blackpipe.observe.CounterLabels;
import java.util.List;

/** Every label blackpipe_faults_injected_total (and the history's "fault") has: the rule actions' and the deployment faults'. */
public final class FaultLabels {
    public static final List<String> ALL = List.of("resetConnection", "closeConnection", "dropReply", "truncateReply", "hang",
            "errorReply", "writeConcernError", "delayReply", "trickleReply", "blockConnection", "cannedReply",
            DeploymentFaults.BLACKHOLE, DeploymentFaults.OUTAGE, DeploymentFaults.CONNECTIONS_RESET,
            DeploymentFaults.IDLE_TIMEOUT, DeploymentFaults.RESTART);

    private FaultLabels() {
    }

    /** {@code fault} when it is one of {@link #ALL}, else an IllegalArgumentException listing them. */
    public static String check(String fault) {
        return CounterLabels.oneOf("fault", fault, ALL);
    }
}
