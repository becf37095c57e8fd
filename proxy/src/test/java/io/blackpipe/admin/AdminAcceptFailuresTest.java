package io.blackpipe.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.NettyWarnings;
import io.blackpipe.testing.ScriptedMongod;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The admin API's listener, out of file descriptors: its failed accept reached the tail of its pipeline as Netty's
 * warning with a 23-line stack (CI saw it while a test's clients held every descriptor). It is said as the members'
 * listeners say it, naming the listener as the log names addresses (no leading slash), and the listener accepts again.
 */
class AdminAcceptFailuresTest {
    @Test
    void anAcceptOutOfFileDescriptorsIsSaidInTheProxysLineAndTheListenerServesAgain() throws Exception {
        try (ScriptedMongod member = ScriptedMongod.start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(member.uri("replicaSet=" + ScriptedMongod.SET_NAME)));
             AdminServer admin = AdminServer.start(proxy, "127.0.0.1", 0);
             NettyWarnings netty = NettyWarnings.capture();
             LogCapture log = LogCapture.start()) {
            admin.listener().pipeline().fireExceptionCaught(new IOException("Too many open files"));
            String said = log.awaitContaining(Duration.ofSeconds(5), "could not accept a connection");
            assertTrue(said.startsWith("listener 127.0.0.1:" + admin.port() + " could not accept a connection: the proxy's process is out"
                    + " of file descriptors (Too many open files; 1 connection refused so since the last such line)"), said);
            HttpResponse<String> health = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + admin.port() + "/health")).timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, health.statusCode(), "accepting again a second later: " + health.body());
            assertEquals(java.util.List.of(), netty.said(), "nothing reached the tail of the listener's pipeline");
        }
    }
}
