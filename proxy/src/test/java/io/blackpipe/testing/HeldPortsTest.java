package io.blackpipe.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.net.BindException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import org.junit.jupiter.api.Test;

/** A run of consecutive ports, held until each is let go for the server about to bind it. */
class HeldPortsTest {
    @Test
    void aRunIsHeldWholeAndEachPortIsLetGoAlone() throws Exception {
        try (HeldPorts run = HeldPorts.consecutive(3)) {
            int first = run.first();
            for (int port = first; port < first + 3; port++) {
                assertHeld(port);
            }
            run.letGo(first + 1);
            try (ServerSocket server = bind(first + 1)) {
                assertEquals(first + 1, server.getLocalPort(), "let go: the server binds it");
            }
            assertHeld(first);
            assertHeld(first + 2);
            run.letGo(first + 1); // again: nothing
            run.close();
            for (int port = first; port < first + 3; port++) {
                try (ServerSocket server = bind(port)) {
                    assertEquals(port, server.getLocalPort(), "closed: all let go");
                }
            }
        }
    }

    @Test
    void aPortOutsideTheRunOrAnEmptyRunIsAnErrorNamingIt() {
        try (HeldPorts run = HeldPorts.consecutive(2)) {
            int first = run.first();
            assertEquals("port " + (first + 2) + " is not one of " + first + "-" + (first + 1),
                    assertThrows(IllegalArgumentException.class, () -> run.letGo(first + 2)).getMessage());
            assertThrows(IllegalArgumentException.class, () -> run.letGo(first - 1));
        }
        assertEquals("count must be 1 or more, got 0", assertThrows(IllegalArgumentException.class, () -> HeldPorts.consecutive(0)).getMessage());
    }

    private static void assertHeld(int port) {
        assertThrows(ConnectException.class, () -> new Socket(InetAddress.getLoopbackAddress(), port).close(), "held, not listening: " + port);
        assertThrows(BindException.class, () -> bind(port).close(), "held: nobody else binds " + port);
    }

    private static ServerSocket bind(int port) throws IOException {
        return HeldPortTest.bind(port, true);
    }
}
