package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.blackpipe.testing.NettyWarnings;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.topology.Member;
import io.netty.channel.group.ChannelGroup;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.net.Socket;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A client accepted while the proxy shuts down: the listener had accepted it, and by the time its channel
 * is set up the proxy has closed its connections' group, which closes it at once. It must end quietly.
 * Seen in `blackpipe report --spec`, which starts and stops a proxy per case while the driver reconnects:
 * the connection's handler saw the channel go inactive without ever seeing it active, and Netty logged a
 * NullPointerException from it, twice (channelInactive, then exceptionCaught).
 */
class ShutdownAcceptRaceTest {
    @Test
    void aConnectionAcceptedAsTheProxyClosesItsConnectionsEndsWithoutAnError() throws Exception {
        NettyWarnings warnings = NettyWarnings.capture();
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
            warnings.close();
        }
        assertEquals(List.of(), warnings.said(), "Netty logged nothing");
    }
}
