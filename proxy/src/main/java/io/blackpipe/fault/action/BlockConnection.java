package io.blackpipe.fault.action;

import io.blackpipe.fault.FaultAction;
import io.blackpipe.fault.Interception;

/**
 * failCommand's blockConnection: the command waits blockTimeMS before anything else happens to
 * it (then it is forwarded, or the rule's other action applies, as the server does).
 */
public final class BlockConnection implements FaultAction {
    private final long millis;
    private final FaultAction then;

    /** @param then what follows the wait; null forwards the command */
    public BlockConnection(long millis, FaultAction then) {
        this.millis = millis;
        this.then = then;
    }

    @Override
    public String name() {
        return then == null ? "blockConnection" : then.name();
    }

    @Override
    public void apply(Interception command) {
        if (then == null) {
            command.blockThenForward(millis);
        } else {
            command.after(millis, () -> then.apply(command));
        }
    }
}
