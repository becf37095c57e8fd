package io.blackpipe.cli;

import java.io.PrintWriter;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
 *
 * <p>The handlers are the process's, the commands taking signals perhaps several (runs inside another program, a
 * test's, side by side): a signal asks each of them to stop, and the JVM's handlers come back when the last returns,
 * whichever order they return in.
 */
final class StopSignals implements AutoCloseable {
    /** The commands taking signals now, and the JVM's handlers while ours stand in for them; both guarded by the class. */
    private static final Set<StopSignals> taking = new LinkedHashSet<>();
    private static final Map<Signal, SignalHandler> jvms = new HashMap<>();
    /** A signal came while commands still take them: a command started before they return takes none (the next ends the JVM). */
    private static boolean signalled;

    private final CountDownLatch asked = new CountDownLatch(1);
    private final PrintWriter err;
    private volatile boolean serving;

    private StopSignals(PrintWriter err) {
        this.err = err;
    }

    /**
     * Takes the first SIGINT or SIGTERM from now on as a request to stop. A second one, of either kind, ends the JVM as
     * the signal would have (its shutdown hooks run): the JVM's own handlers are put back. Where the JVM leaves these
     * signals alone ({@code -Xrs}) none is taken: a signal ends the JVM at once, as the JVM documents, without its
     * shutdown hooks.
     */
    static StopSignals install(PrintWriter err) {
        StopSignals stop = new StopSignals(err);
        synchronized (StopSignals.class) { // a signal in the moment between a handler's install and its record waits for the record
            taking.add(stop);
            if (jvms.isEmpty() && !signalled) {
                for (String name : List.of("INT", "TERM")) {
                    try {
                        Signal signal = new Signal(name);
                        jvms.put(signal, Signal.handle(signal, StopSignals::received));
                    } catch (IllegalArgumentException | UnsupportedOperationException e) {
                        // not ours to handle here: the JVM ends on it
                    }
                }
            }
        }
        return stop;
    }

    private static void received(Signal signal) {
        List<StopSignals> told;
        synchronized (StopSignals.class) {
            putBack(); // both: a SIGTERM after a Ctrl-C ends the JVM too
            signalled = true;
            told = List.copyOf(taking);
        }
        told.forEach(stop -> stop.asked(signal));
    }

    private synchronized void asked(Signal signal) {
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

    /** The command returns: when it is the last taking signals, the JVM's handlers are back, for a run inside another program. */
    @Override
    public void close() {
        synchronized (StopSignals.class) {
            if (taking.remove(this) && taking.isEmpty()) {
                putBack();
                signalled = false;
            }
        }
    }

    private static void putBack() {
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
