package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.topology.Member;
import io.netty.channel.group.ChannelGroup;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

/**
 * A client accepted while the proxy shuts down: the listener had accepted it, and by the time its channel
 * is set up the proxy has closed its connections' group, which closes it at once. It must end quietly.
 * Seen in `blackpipe report --spec`, which starts and stops a proxy per case while the driver reconnects:
 * the connection's handler saw the channel go inactive without ever seeing it active, and Netty logged a
 * NullPointerException from it, twice (channelInactive, then exceptionCaught).
 */
class ShutdownAcceptRaceTest {
    /** Held strongly: java.util.logging keeps loggers only weakly. Netty logs through it here (no SLF4J binding). */
    private static final Logger NETTY = Logger.getLogger("io.netty");

    @Test
    void aConnectionAcceptedAsTheProxyClosesItsConnectionsEndsWithoutAnError() throws Exception {
        List<LogRecord> warnings = new CopyOnWriteArrayList<>();
        Handler handler = new Handler() {
            @Override
            public void publish(LogRecord record) {
                if (record.getLevel().intValue() >= Level.WARNING.intValue()) {
                    warnings.add(record);
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        NETTY.addHandler(handler);
        try (ScriptedMongod upstream = ScriptedMongod.start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(upstream.uri()))) {
            Member member = proxy.members().get(0);
            // close()'s second step, with the listener still open: what a connection accepted between the two meets
            Field group = ProxyServer.class.getDeclaredField("openConnections");
            group.setAccessible(true);
            ((ChannelGroup) group.get(proxy)).close().syncUninterruptibly();

            try (Socket socket = new Socket(member.advertised().host(), member.advertised().port())) {
                socket.setSoTimeout(5000);
                InputStream in = socket.getInputStream();
                assertEquals(-1, in.read(), "the proxy closes a connection it accepts while closing");
            }
            Thread.sleep(300); // the channel's inactive event runs after its close, on its event loop
        } finally {
            NETTY.removeHandler(handler);
        }
        assertTrue(warnings.isEmpty(), () -> "Netty logged: " + warnings.stream()
                .map(r -> r.getMessage() + (r.getThrown() == null ? "" : " / " + r.getThrown())).toList());
    }
}
