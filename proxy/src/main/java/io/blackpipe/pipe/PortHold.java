package io.blackpipe.pipe;

import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;

/**
 * A member's port kept while its listener is down (an outage, a restart's time down): a socket bound to it that does
 * not listen. Connecting is refused, as to a stopped server, and the system hands the port to nobody who asks it for
 * a free one, so the member comes back where its clients know it. Without it, a process binding port 0 meanwhile
 * (another proxy started by a test running beside) could be given the port, and the member could not come back.
 * It is let go just before the listener binds again.
 */
final class PortHold implements AutoCloseable {
    static final long RELEASE_WAIT_MILLIS = 1_000;
    private final SocketChannel socket;

    private PortHold(SocketChannel socket) {
        this.socket = socket;
    }

    /**
     * Holds {@code host:port}; when it cannot (a system that refuses), says so in the log and holds nothing. The closed
     * listener's socket may still hold the port for a moment (the JDK closes it at its selector's next select, which a
     * busy event loop may not have reached): the port in use is tried again, for {@value #RELEASE_WAIT_MILLIS} ms.
     */
    static PortHold take(String host, int port, ProxyLog log) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(RELEASE_WAIT_MILLIS);
        while (true) {
            SocketChannel socket = null;
            try {
                socket = SocketChannel.open();
                socket.setOption(StandardSocketOptions.SO_REUSEADDR, true);
                socket.bind(new InetSocketAddress(host, port));
                return new PortHold(socket);
            } catch (BindException e) {
                closeQuietly(socket);
                if (System.nanoTime() - deadline >= 0 || !pause()) {
                    return nothingHeld(host, port, e, log);
                }
            } catch (IOException | RuntimeException e) {
                closeQuietly(socket);
                return nothingHeld(host, port, e, log);
            }
        }
    }

    private static PortHold nothingHeld(String host, int port, Exception e, ProxyLog log) {
        log.warn("could not keep port " + host + ":" + port + " while its member is down (" + e + "): another process may take it meanwhile");
        return new PortHold(null);
    }

    /** False when interrupted (the interrupt kept): no more tries. */
    private static boolean pause() {
        try {
            Thread.sleep(5);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Whether it holds the port (not when the system refused). */
    boolean holds() {
        return socket != null;
    }

    @Override
    public void close() {
        closeQuietly(socket);
    }

    private static void closeQuietly(SocketChannel socket) {
        if (socket != null) {
            try {
                socket.close();
            } catch (IOException ignored) {
                // a bound, unconnected socket: nothing was sent, nothing is lost
            }
        }
    }
}
