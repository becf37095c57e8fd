package io.blackpipe.cli;

import java.io.PrintWriter;
import java.util.List;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * Ctrl-C (SIGINT) and SIGTERM taken as a request to stop: the serving command closes the proxy and returns, and the
 * exit status is 0, as mongod's after a clean shutdown. Left to the JVM, the signal ended it with 130 or 143, so a
 * CI job's {@code kill $PID; wait $PID} failed under {@code set -e}. Taken from the command's start on: one that comes
 * while the upstream or the proxy still starts stops the command as soon as that start is done (a teardown that
 * fires early). The JDK has no supported API for this; sun.misc.Signal (module jdk.unsupported) is in every JDK and
 * JRE image that runs blackpipe.
 */
final class StopSignals implements AutoCloseable {
    private final CountDownLatch asked = new CountDownLatch(1);
    /** Each signal taken, with the JVM's handler to put back when the command returns (an in-process run leaves none). */
    private final Map<Signal, SignalHandler> jvms = new HashMap<>();
    private volatile boolean serving;

    private StopSignals() {
    }

    /**
     * Takes the first SIGINT or SIGTERM from now on as a request to stop. A second one, of either kind, ends the JVM as
     * the signal would have (its shutdown hooks run): the JVM's own handlers are put back. Where the JVM leaves these
     * signals alone ({@code -Xrs}) none is taken: a signal ends the JVM at once, as the JVM documents, without its
     * shutdown hooks.
     */
    static StopSignals install(PrintWriter err) {
        StopSignals stop = new StopSignals();
        synchronized (stop) { // a signal in the moment between a handler's install and its record waits for the record
            for (String name : List.of("INT", "TERM")) {
                try {
                    Signal signal = new Signal(name);
                    stop.jvms.put(signal, Signal.handle(signal, received -> stop.received(received, err)));
                } catch (IllegalArgumentException | UnsupportedOperationException e) {
                    // not ours to handle here: the JVM ends on it
                }
            }
        }
        return stop;
    }

    private synchronized void received(Signal signal, PrintWriter err) {
        putBack(); // both: a SIGTERM after a Ctrl-C ends the JVM too
        if (!serving && asked.getCount() > 0) {
            err.println("blackpipe: stopping once the start is done (SIG" + signal.getName() + " again to end it now)");
            err.flush();
        }
        asked.countDown();
    }

    /** Whether a stop was asked for: a command still starting gives up as soon as what it started can be closed. */
    boolean requested() {
        return asked.getCount() == 0;
    }

    /** Blocks until a stop is asked for (by a signal, or by {@link #request}); the command serves meanwhile. */
    void await() throws InterruptedException {
        serving = true;
        asked.await();
    }

    /** Asks for a stop otherwise than by a signal (the JVM ends). */
    void request() {
        asked.countDown();
    }

    /** The command returns: the JVM's handlers back, for a run inside another program (a test's). */
    @Override
    public synchronized void close() {
        putBack();
    }

    private void putBack() {
        jvms.forEach((signal, jvm) -> {
            try {
                Signal.handle(signal, jvm);
            } catch (IllegalArgumentException | UnsupportedOperationException e) {
                // put back as far as the JVM lets it
            }
        });
        jvms.clear();
    }
}
