package io.blackpipe.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * A run of consecutive loopback ports, each held ({@link HeldPort}) from the moment it is found: for a proxy whose
 * members take a base port and the ones after it. Each port is let go just before the proxy binds it, at its start or
 * when a member that appears later gets its listener; whatever is still held goes at {@link #close}.
 */
public final class HeldPorts implements AutoCloseable {
    private static final int TRIES = 100;
    private final List<HeldPort> ports;

    private HeldPorts(List<HeldPort> ports) {
        this.ports = ports;
    }

    /**
     * {@code count} consecutive free loopback ports: the first one the system picks (so none is given to anybody else
     * asking it for a free one), the ones after it held by number if nothing is bound there, else another try.
     */
    public static HeldPorts consecutive(int count) {
        if (count < 1) {
            throw new IllegalArgumentException("count must be 1 or more, got " + count);
        }
        for (int attempt = 0; attempt < TRIES; attempt++) {
            List<HeldPort> held = new ArrayList<>();
            held.add(HeldPort.any());
            int first = held.get(0).port();
            try {
                for (int port = first + 1; port < first + count && port <= 65_535; port++) {
                    held.add(HeldPort.exactly(port));
                }
            } catch (IOException inUse) {
                // one of the next ports is taken: another try
            }
            if (held.size() == count) {
                return new HeldPorts(held);
            }
            held.forEach(HeldPort::close);
        }
        throw new UncheckedIOException(new IOException("found no " + count + " consecutive free loopback ports in " + TRIES + " tries"));
    }

    /** The first port of the run. */
    public int first() {
        return ports.get(0).port();
    }

    /** Lets {@code port}, one of the run, go: for the server about to bind it. Letting it go again does nothing. */
    public void letGo(int port) {
        int index = port - first();
        if (index < 0 || index >= ports.size()) {
            throw new IllegalArgumentException("port " + port + " is not one of " + first() + "-" + (first() + ports.size() - 1));
        }
        ports.get(index).close();
    }

    /** Lets every port still held go; a second close does nothing. */
    @Override
    public void close() {
        ports.forEach(HeldPort::close);
    }
}
