package io.blackpipe.fault.action;

import io.blackpipe.fault.FaultAction;
import io.blackpipe.fault.Interception;

/** failCommand's closeConnection: the server closes the socket (FIN) without running the command. */
public final class CloseConnection implements FaultAction {
    @Override
    public String name() {
        return "closeConnection";
    }

    @Override
    public void apply(Interception command) {
        command.close();
    }
}
