package io.blackpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import io.blackpipe.pipe.MemberListener;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.UpstreamLane;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** BlackPipe.resetConnections, as the CLI's `connections reset` and the admin API offer it. */
class BlackPipeConnectionsTest {

    @Test
    void resetConnectionsResetsTheAppsOpenConnectionsOfAMemberAndSaysHowMany() throws Exception {
        try (BlackPipe blackPipe = BlackPipe.start(UpstreamLane.uri())) {
            String address = new ConnectionString(blackPipe.connectionString()).getHosts().get(0);
            MemberListener listener = blackPipe.server().select("primary").get(0);
            try (Socket app = new Socket(address.substring(0, address.lastIndexOf(':')),
                    Integer.parseInt(address.substring(address.lastIndexOf(':') + 1)))) {
                app.setSoTimeout(5000);
                Await.until(Duration.ofSeconds(5), "the proxy has the app's connection", () -> listener.openConnections() == 1);

                assertEquals(1, blackPipe.resetConnections("primary"));

                InputStream in = app.getInputStream();
                IOException reset = assertThrows(IOException.class, () -> {
                    if (in.read() < 0) {
                        throw new AssertionError("closed with a FIN; a reset was expected");
                    }
                });
                assertTrue(reset instanceof SocketException && reset.getMessage().contains("reset"), reset.toString());
            }
            assertEquals(0, blackPipe.resetConnections("all"), "none left open");

            IllegalArgumentException typo = assertThrows(IllegalArgumentException.class, () -> blackPipe.resetConnections("primray"));
            assertTrue(typo.getMessage().startsWith("no member 'primray': did you mean 'primary'? (known: primary, all, "), typo.getMessage());
            assertThrows(IllegalArgumentException.class, () -> blackPipe.resetConnections(null));
        }
    }
}
