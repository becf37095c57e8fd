package io.blackpipe.admin;

import io.blackpipe.observe.Printable;
import java.lang.System.Logger.Level;

/**
 * The log line of each change made through the control API (the CLI's too): rules put and removed, resets, failovers.
 * Without them a log could not show that a test injected the fault that failed a job. The in-process Java API
 * (BlackPipe.fail in JUnit tests) says nothing, or each test's output would fill with them.
 */
final class ControlLog {
    private final System.Logger logger = System.getLogger("blackpipe");

    /**
     * {@code what} was done for a request from {@code from} (the admin client's address). What the caller chose (a rule
     * id, a member's name, a rule's namespace) is escaped: a rule id holding a newline wrote a log line of its making.
     */
    void changed(String what, String from) {
        logger.log(Level.INFO, Printable.of(what) + ", by the admin API from " + from);
    }
}
