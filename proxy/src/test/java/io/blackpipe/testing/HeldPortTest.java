package io.blackpipe.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.BindException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** A port held for a server a test starts later: refused meanwhile, bound by nobody else, free once let go. */
class HeldPortTest {
    @Test
    void aHeldPortRefusesConnectionsAndBindsForNobodyUntilLetGo() throws Exception {
        int port;
        try (HeldPort held = HeldPort.any()) {
            port = held.port();
            assertTrue(port > 0, "a port the system picked: " + port);
            assertThrows(ConnectException.class, () -> new Socket(InetAddress.getLoopbackAddress(), port).close(), "held, not listening");
            assertThrows(BindException.class, () -> bind(port, false).close(), "held: another socket cannot bind it");
            assertThrows(BindException.class, () -> bind(port, true).close(), "nor one with SO_REUSEADDR, as a ServerSocket has");
            held.close();
            held.close(); // a second close does nothing
            try (ServerSocket server = bind(port, false)) {
                assertEquals(port, server.getLocalPort(), "let go: the server the test starts binds it");
            }
        }
    }

    /** A test's server that stops and comes back on its port: held in between, with nothing else of the server there. */
    @Test
    void aServersPortIsHeldAgainWhileItIsDown() throws Exception {
        ServerSocket server = bind(0, true);
        int port = server.getLocalPort();
        try (Socket client = new Socket(InetAddress.getLoopbackAddress(), port); Socket accepted = server.accept()) {
            accepted.close(); // the server's side closes first: TIME_WAIT on its port, which a hold must bind past
        }
        server.close();
        try (HeldPort down = HeldPort.again(port)) {
            assertEquals(port, down.port());
            assertThrows(ConnectException.class, () -> new Socket(InetAddress.getLoopbackAddress(), port).close(), "down: refused");
            assertThrows(BindException.class, () -> bind(port, false).close(), "held");
            down.close();
            try (ServerSocket back = bind(port, true)) {
                assertEquals(port, back.getLocalPort(), "back on its port");
            }
        }
    }

    @Test
    void holdingAgainWaitsForAServerThatLetsThePortGoAMomentLater() throws Exception {
        ServerSocket server = bind(0, true);
        int port = server.getLocalPort();
        CompletableFuture<Void> closedLater = CompletableFuture.runAsync(() -> closeQuietly(server),
                CompletableFuture.delayedExecutor(100, TimeUnit.MILLISECONDS));
        try (HeldPort down = HeldPort.again(port)) {
            closedLater.get(5, TimeUnit.SECONDS);
            assertThrows(ConnectException.class, () -> new Socket(InetAddress.getLoopbackAddress(), port).close(), "held once let go");
        }
    }

    @Test
    void aPortThatStaysInUseIsAnErrorNamingIt() throws Exception {
        try (ServerSocket other = bind(0, false)) {
            UncheckedIOException e = assertThrows(UncheckedIOException.class, () -> HeldPort.again(other.getLocalPort()));
            assertEquals("could not hold loopback port " + other.getLocalPort() + " again: still in use", e.getMessage());
        }
    }

    /** A server socket bound to {@code port} on loopback, as another process would bind it (HeldPortsTest's too). */
    static ServerSocket bind(int port, boolean reuseAddress) throws IOException {
        ServerSocket socket = new ServerSocket();
        socket.setReuseAddress(reuseAddress);
        try {
            socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        } catch (IOException e) {
            socket.close();
            throw e;
        }
        return socket;
    }

    private static void closeQuietly(ServerSocket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // the test's own server
        }
    }
}
