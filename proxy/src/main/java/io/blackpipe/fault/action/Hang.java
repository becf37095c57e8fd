package io.blackpipe.fault.action;

import io.blackpipe.fault.FaultAction;
import io.blackpipe.fault.Interception;

/** Never forward, never answer: the client waits until its own socket timeout gives up. */
public final class Hang implements FaultAction {
    @Override
    public String name() {
        return "hang";
    }

    @Override
    public void apply(Interception command) {
        command.hang();
    }
}
