package io.blackpipe.testcontainers;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;

/** Finds runs of consecutive TCP ports that are free on this machine right now. */
final class HostPorts {
    private static final int TRIES = 50;

    private HostPorts() {
    }

    /** The first of {@code count} consecutive free ports (an ephemeral port the OS offered, and the ones after it). */
    static int consecutiveFree(int count) {
        for (int attempt = 0; attempt < TRIES; attempt++) {
            int first = anyFree();
            if (first + count - 1 <= 65535 && allFree(first, count)) {
                return first;
            }
        }
        throw new IllegalStateException("found no " + count + " consecutive free ports on this host in " + TRIES + " tries");
    }

    private static int anyFree() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException("cannot open a server socket to find a free port: " + e.getMessage(), e);
        }
    }

    private static boolean allFree(int first, int count) {
        for (int port = first; port < first + count; port++) {
            try (ServerSocket socket = new ServerSocket()) {
                socket.setReuseAddress(false);
                socket.bind(new InetSocketAddress(InetAddress.getByName("0.0.0.0"), port));
            } catch (IOException e) {
                return false;
            }
        }
        return true;
    }
}
