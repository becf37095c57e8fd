package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.LogCapture;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A member's port is kept while its listener is down. The listener's socket may still hold it for a moment after its
 * close (the JDK closes it at the event loop's next select, which a busy loop may not have reached): the hold then
 * failed at once, logged "could not keep port", and left the port to any process asking for a free one.
 */
class PortHoldTest {
    @Test
    void theHoldWaitsForAListenerThatLetsThePortGoAMomentLater() throws Exception {
        try (LogCapture log = LogCapture.start()) {
            ServerSocket listener = new ServerSocket();
            listener.setReuseAddress(true);
            listener.bind(new InetSocketAddress("127.0.0.1", 0));
            int port = listener.getLocalPort();
            CompletableFuture<Void> closedLater = CompletableFuture.runAsync(() -> closeQuietly(listener),
                    CompletableFuture.delayedExecutor(100, TimeUnit.MILLISECONDS));

            try (PortHold hold = PortHold.take("127.0.0.1", port, new ProxyLog())) {
                closedLater.get(5, TimeUnit.SECONDS);
                assertTrue(log.messages().stream().noneMatch(m -> m.startsWith("could not keep port")), log.messages()::toString);
                assertTrue(hold.holds(), "bound to the port, once the listener let it go");
                assertThrows(ConnectException.class, () -> new Socket("127.0.0.1", port).close(), "held, not listening: refused");
            }
        }
    }

    @Test
    void aPortThatStaysTakenIsNamedInTheLogAfterAWhile() throws Exception {
        try (LogCapture log = LogCapture.start(); ServerSocket other = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            long start = System.nanoTime();
            PortHold.take("127.0.0.1", other.getLocalPort(), new ProxyLog()).close();
            assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(PortHold.RELEASE_WAIT_MILLIS), "tried for a while");
            assertTrue(log.messages().stream().anyMatch(m -> m.startsWith("could not keep port 127.0.0.1:" + other.getLocalPort())),
                    log.messages()::toString);
        }
    }

    private static void closeQuietly(ServerSocket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // the test's own listener
        }
    }
}
