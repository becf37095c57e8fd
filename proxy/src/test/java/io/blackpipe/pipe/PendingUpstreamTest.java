package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.blackpipe.testing.Await;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.topology.Member;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A client connection that ends while its upstream connection is still being set up (the member
 * is slow to accept) must not leave that upstream connection behind: once the member accepts it,
 * the proxy closes it, as it closes the member's side of every pair whose client went away.
 */
class PendingUpstreamTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    @Test
    void anOutageWhileTheMemberIsSlowToAcceptLeavesNoUpstreamConnectionBehind() throws Exception {
        ScriptedMongod scripted = ScriptedMongod.start();
        int memberPort = Integer.parseInt(scripted.address().substring(scripted.address().lastIndexOf(':') + 1));
        ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(scripted.uri("replicaSet=" + ScriptedMongod.SET_NAME)));
        List<Socket> fillers = new ArrayList<>();
        try {
            scripted.close();
            // The member is now a socket whose accept queue is full: the proxy's SYN goes unanswered until it drains.
            try (ServerSocket slowMember = new ServerSocket()) {
                slowMember.setReuseAddress(true);
                slowMember.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), memberPort), 1);
                for (int i = 0; i < 4; i++) {
                    Socket filler = new Socket();
                    try {
                        filler.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), memberPort), 300);
                        fillers.add(filler);
                    } catch (SocketTimeoutException e) {
                        filler.close();
                        break; // the queue is full
                    }
                }
                Member member = proxy.members().get(0);
                try (RawClient client = RawClient.connect(member.advertised())) {
                    Await.until(WAIT, "the proxy to accept the client", () -> proxy.openConnections(member.upstream()) == 1);
                    proxy.outage("all", 0); // resets the client while its upstream connection is still pending
                    client.awaitClosedByPeer(WAIT);
                }
                proxy.restore("all");
                // Drain the queue: the proxy's retried SYN now completes, if its connection attempt is still alive.
                slowMember.setSoTimeout(200);
                for (int i = 0; i < fillers.size(); i++) {
                    slowMember.accept().close();
                }
                slowMember.setSoTimeout(4_000);
                Socket fromProxy;
                try {
                    fromProxy = slowMember.accept();
                } catch (SocketTimeoutException e) {
                    return; // the attempt was abandoned with the client: nothing reached the member
                }
                try (fromProxy) {
                    fromProxy.setSoTimeout(3_000);
                    InputStream in = fromProxy.getInputStream();
                    try {
                        assertEquals(-1, in.read(), "the proxy sent something on a connection whose client is gone");
                    } catch (SocketTimeoutException e) {
                        throw new AssertionError("the upstream connection of a client that is gone stayed open");
                    } catch (SocketException e) {
                        // reset by the proxy: closed too
                    }
                }
            }
        } finally {
            for (Socket filler : fillers) {
                filler.close();
            }
            proxy.close();
        }
    }
}
