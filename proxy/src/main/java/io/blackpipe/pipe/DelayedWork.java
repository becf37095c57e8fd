package io.blackpipe.pipe;

import io.netty.channel.EventLoop;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * One connection's delayed work (held commands, held replies) not yet run. It runs at once, in order, when the
 * connection closes: a task scheduled on a loop may never run once the proxy shuts it down, and each owns a buffer
 * to release. Used from the connection's event loop only.
 */
final class DelayedWork {
    private final Set<Runnable> pending = new LinkedHashSet<>();

    /** Runs {@code task} on {@code loop} after {@code millis}, unless {@link #runAllNow} ran it first. */
    void schedule(EventLoop loop, long millis, Runnable task) {
        Runnable once = new Runnable() {
            @Override
            public void run() {
                if (pending.remove(this)) {
                    task.run();
                }
            }
        };
        pending.add(once);
        loop.schedule(once, millis, TimeUnit.MILLISECONDS);
    }

    /** How many tasks wait. */
    int size() {
        return pending.size();
    }

    /** The connection closed: every task runs now (each sees the connection closed). */
    void runAllNow() {
        for (Runnable task : List.copyOf(pending)) {
            task.run();
        }
    }
}
