package io.blackpipe.fault;

/** One way of breaking a command; each lives in its own small class in {@code fault.action}. */
public interface FaultAction {
    /** The label this fault is counted under (blackpipe_faults_injected_total{fault=...}). */
    String name();

    void apply(Interception command);

    /**
     * Whether firing it breaks the command, and is counted as a fault under {@link #name()}; false for a rule that
     * fires and lets the command run (failCommand's errorCode 0, see {@link io.blackpipe.fault.action.NoError}).
     */
    default boolean injects() {
        return true;
    }
}
