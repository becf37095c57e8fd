package io.blackpipe.fault.action;

import io.blackpipe.fault.FaultAction;
import io.blackpipe.fault.Interception;

/** The hard case: the server applies the command, its reply is lost, the connection resets. */
public final class DropReply implements FaultAction {
    @Override
    public String name() {
        return "dropReply";
    }

    @Override
    public void apply(Interception command) {
        command.forward(reply -> reply.dropAndReset());
    }
}
