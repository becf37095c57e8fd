package io.blackpipe.fault.action;

import io.blackpipe.fault.FaultAction;
import io.blackpipe.fault.Interception;

/**
 * failCommand's {@code errorCode: 0}, alone: code 0 is OK, not an error. mongod enters its failpoint (the count
 * grows, a {@code times} is spent, waitForFailPoint sees it) and raises a Status of code OK, which is nothing:
 * the command runs. So does this rule: it fires, and the command goes on untouched; no fault is counted, as
 * none happened.
 */
public final class NoError implements FaultAction {
    @Override
    public String name() {
        return "none";
    }

    @Override
    public boolean injects() {
        return false;
    }

    @Override
    public void apply(Interception command) {
        command.forward();
    }
}
