package io.blackpipe.fault;

/** One way of breaking a command; each lives in its own small class in {@code fault.action}. */
public interface FaultAction {
    /** The label this fault is counted under (blackpipe_faults_injected_total{fault=...}). */
    String name();

    void apply(Interception command);
}
