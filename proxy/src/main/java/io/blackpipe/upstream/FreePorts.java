package io.blackpipe.upstream;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;

/**
 * Picks free loopback ports for servers that must be told their port up front (mongod members
 * need each other's addresses before they start).
 */
final class FreePorts {
    private FreePorts() {
    }

    /**
     * Returns {@code count} distinct ports that were free a moment ago. All sockets are held open
     * together so the kernel cannot hand out the same port twice; another process can still take
     * one before our server binds it, which the caller reports through the server's own error.
     */
    static int[] allocate(int count) throws IOException {
        List<ServerSocket> sockets = new ArrayList<>();
        try {
            int[] ports = new int[count];
            for (int i = 0; i < count; i++) {
                ServerSocket socket = new ServerSocket();
                sockets.add(socket);
                socket.setReuseAddress(true);
                socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
                ports[i] = socket.getLocalPort();
            }
            return ports;
        } finally {
            for (ServerSocket socket : sockets) {
                socket.close();
            }
        }
    }
}
