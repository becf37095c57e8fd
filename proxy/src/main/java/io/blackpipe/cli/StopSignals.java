package io.blackpipe.cli;

import java.util.List;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * Ctrl-C (SIGINT) and SIGTERM taken as a request to stop: the serving command closes the proxy and returns, and the
 * exit status is 0, as mongod's after a clean shutdown. Left to the JVM, the signal ended it with 130 or 143, so a
 * CI job's {@code kill $PID; wait $PID} failed under {@code set -e}. The JDK has no supported API for this;
 * sun.misc.Signal (module jdk.unsupported) is in every JDK and JRE image that runs blackpipe.
 */
final class StopSignals {
    private StopSignals() {
    }

    /**
     * Runs {@code stop} on the first SIGINT or SIGTERM. A second one, while the proxy closes, ends the JVM as the signal
     * would have (its shutdown hooks run): the JVM's own handler is put back. Where the JVM keeps a signal to itself
     * ({@code -Xrs}) it ends the JVM as before, and the shutdown hook closes the proxy.
     */
    static void onFirst(Runnable stop) {
        for (String name : List.of("INT", "TERM")) {
            try {
                Signal signal = new Signal(name);
                SignalHandler[] jvms = new SignalHandler[1];
                jvms[0] = Signal.handle(signal, received -> {
                    Signal.handle(received, jvms[0]);
                    stop.run();
                });
            } catch (IllegalArgumentException | UnsupportedOperationException e) {
                // not ours to handle here: the JVM ends on it, and its shutdown hook closes everything
            }
        }
    }
}
