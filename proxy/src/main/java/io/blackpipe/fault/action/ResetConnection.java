package io.blackpipe.fault.action;

import io.blackpipe.fault.FaultAction;
import io.blackpipe.fault.Interception;

/** A TCP reset (SO_LINGER 0) before the command reaches the server: the server never sees it. */
public final class ResetConnection implements FaultAction {
    @Override
    public String name() {
        return "resetConnection";
    }

    @Override
    public void apply(Interception command) {
        command.reset();
    }
}
