package io.blackpipe.fault.action;

import io.blackpipe.fault.FaultAction;
import io.blackpipe.fault.Interception;

/** Forward at once and hold the reply: a slow server, as the client sees it. */
public final class DelayReply implements FaultAction {
    private final long millis;

    public DelayReply(long millis) {
        this.millis = millis;
    }

    @Override
    public String name() {
        return "delayReply";
    }

    @Override
    public void apply(Interception command) {
        command.forward(reply -> reply.passAfter(millis));
    }
}
