package io.blackpipe.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.testing.NettyWarnings;
import io.blackpipe.testing.ScriptedMongod;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * An admin server closed while clients keep their connections open (an HTTP client's keep-alive, a scrape's): a
 * connection's teardown goes from its I/O loop to the work executor and back, and the close shut the I/O loop down
 * first. Netty logged "Unexpected exception from an event executor: RejectedExecutionException" with its trace at
 * about one close in four (a concurrency user saw it in 10 of 40). The close now waits for the teardowns.
 */
class AdminServerCloseTest {
    @Test
    void closingWithKeptAliveConnectionsLogsNothing() throws Exception {
        NettyWarnings warnings = NettyWarnings.capture();
        try (ScriptedMongod upstream = ScriptedMongod.start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded("mongodb://" + upstream.address() + "/?replicaSet="
                     + ScriptedMongod.SET_NAME))) {
            for (int i = 0; i < 20; i++) {
                HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
                AdminServer admin = AdminServer.start(proxy, "127.0.0.1", 0);
                for (int request = 0; request < 3; request++) { // one connection, kept alive by the client
                    HttpResponse<String> metrics = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + admin.port() + "/metrics"))
                            .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
                    assertEquals(200, metrics.statusCode());
                }
                admin.close();
                admin.close(); // again: nothing more, where it threw a RejectedExecutionException
            }
            Thread.sleep(200); // a refused teardown step is logged as the executor rejects it, just after the close
        } finally {
            warnings.close();
        }
        assertEquals(List.of(), warnings.said(), "Netty logged nothing as the admin servers closed");
    }
}
