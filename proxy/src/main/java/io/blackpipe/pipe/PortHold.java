package io.blackpipe.pipe;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.SocketChannel;

/**
 * A member's port kept while its listener is down (an outage, a restart's time down): a socket bound to it that does
 * not listen. Connecting is refused, as to a stopped server, and the system hands the port to nobody who asks it for
 * a free one, so the member comes back where its clients know it. Without it, a process binding port 0 meanwhile
 * (another proxy started by a test running beside) could be given the port, and the member could not come back.
 * It is let go just before the listener binds again.
 */
final class PortHold implements AutoCloseable {
    private final SocketChannel socket;

    private PortHold(SocketChannel socket) {
        this.socket = socket;
    }

    /** Holds {@code host:port}; when it cannot (a system that refuses), says so in the log and holds nothing. */
    static PortHold take(String host, int port, ProxyLog log) {
        SocketChannel socket = null;
        try {
            socket = SocketChannel.open();
            socket.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            socket.bind(new InetSocketAddress(host, port));
            return new PortHold(socket);
        } catch (IOException | RuntimeException e) {
            closeQuietly(socket);
            log.warn("could not keep port " + host + ":" + port + " while its member is down (" + e + "): another process may take it meanwhile");
            return new PortHold(null);
        }
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
