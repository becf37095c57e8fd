package io.blackpipe.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;

/**
 * A loopback port kept for a server a test starts later: a socket bound to it that does not listen, as the proxy's
 * PortHold keeps a member's port while it is down. Connecting is refused, as to a server not started yet, and the
 * system gives the port to nobody who asks it for a free one. A port found free and let go at once ({@code new
 * ServerSocket(0)} closed) could be given to another process before the test binds it, failing the test for nothing.
 * Let it go ({@link #close}) just before the server binds the port.
 */
public final class HeldPort implements AutoCloseable {
    /** How long {@link #again} tries a port whose server has just closed (its socket may let it go a moment later). */
    private static final long RELEASE_WAIT_MILLIS = 1_000;
    private final SocketChannel socket;
    private final int port;

    private HeldPort(SocketChannel socket) throws IOException {
        this.socket = socket;
        this.port = ((InetSocketAddress) socket.getLocalAddress()).getPort();
    }

    /** A free loopback port, held from the moment the system picks it. */
    public static HeldPort any() {
        SocketChannel socket = null;
        try {
            socket = SocketChannel.open();
            socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            return new HeldPort(socket);
        } catch (IOException e) {
            closeQuietly(socket);
            throw new UncheckedIOException("no free loopback port to hold", e);
        }
    }

    /** Holds {@code port} when nothing is bound to it (no SO_REUSEADDR: a port in any use is refused), else throws. */
    static HeldPort exactly(int port) throws IOException {
        SocketChannel socket = SocketChannel.open();
        try {
            socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            return new HeldPort(socket);
        } catch (IOException e) {
            closeQuietly(socket);
            throw e;
        }
    }

    /**
     * Holds {@code port} again once the test's own server on it has closed, until the server starts there again. With
     * SO_REUSEADDR, since the server's closed connections may linger in TIME_WAIT on the port: another SO_REUSEADDR
     * socket could then still bind it by its number, but the system hands it to nobody asking for a free port.
     */
    public static HeldPort again(int port) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(RELEASE_WAIT_MILLIS);
        while (true) {
            SocketChannel socket = null;
            try {
                socket = SocketChannel.open();
                socket.setOption(StandardSocketOptions.SO_REUSEADDR, true);
                socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
                return new HeldPort(socket);
            } catch (BindException e) {
                closeQuietly(socket);
                if (System.nanoTime() - deadline >= 0) {
                    throw new UncheckedIOException("could not hold loopback port " + port + " again: still in use", e);
                }
                pause();
            } catch (IOException e) {
                closeQuietly(socket);
                throw new UncheckedIOException("could not hold loopback port " + port + " again", e);
            }
        }
    }

    public int port() {
        return port;
    }

    /** Lets the port go, for the server about to bind it; a second close does nothing. */
    @Override
    public void close() {
        closeQuietly(socket);
    }

    private static void pause() {
        try {
            Thread.sleep(5);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting to hold a port", e);
        }
    }

    private static void closeQuietly(SocketChannel socket) {
        if (socket != null) {
            try {
                socket.close();
            } catch (IOException ignored) {
                // bound, never connected: nothing was sent, nothing is lost
            }
        }
    }
}
