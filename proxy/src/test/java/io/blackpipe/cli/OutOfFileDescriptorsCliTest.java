package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.UpstreamLane;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A sidecar whose process runs out of file descriptors (a container's nofile, ulimit -n): each client accepted past
 * the limit took three log lines, two of them stacks, blaming the upstream; and the SIGTERM after it exited 1, as the
 * shutdown's close of an upstream connection no socket could be made for threw. Now: a line a second that names the
 * limit, no stack, the clients counted as refused, the proxy serving again once they close, and SIGTERM exits 0.
 */
class OutOfFileDescriptorsCliTest {
    @TempDir
    Path temp;

    @Test
    void pastTheLimitClientsAreRefusedInAFewLinesAndSigtermStillExitsZero() throws Exception {
        try (CliChild child = CliChild.withOpenFileLimit(256, temp, Map.of(), "proxy", "--upstream", UpstreamLane.uri(),
                "--host", "127.0.0.1", "--port", "0", "--admin-port", "0")) {
            String admin = child.awaitLine("admin: ").split(" ")[1].replace("/metrics", "");
            String connection = child.awaitLine("connection string: ");
            int port = Integer.parseInt(connection.replaceAll(".*mongodb://[^:]+:(\\d+).*", "$1"));
            List<Socket> clients = new ArrayList<>();
            try {
                for (int i = 0; i < 200; i++) { // two descriptors each at the proxy: past 256 with the JVM's own
                    Socket socket = new Socket();
                    socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
                    clients.add(socket);
                }
                Thread.sleep(2_000);
                // scraped while the members' clients hold every descriptor: the admin API's listener may fail its accept
                // too, said as the members' listeners say it, and accepts it once one is free
                String metrics = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(admin + "/metrics"))
                        .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString()).body();
                double refused = metrics.lines().filter(l -> l.startsWith("blackpipe_connections_refused_total"))
                        .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
                assertTrue(refused > 0, "the clients past the limit counted as refused: " + metrics);
            } finally {
                for (Socket socket : clients) {
                    socket.close();
                }
            }
            // the limit passed, the proxy serves again: a command through it
            try (io.blackpipe.wire.BlockingCommandClient after = new io.blackpipe.wire.BlockingCommandClient("127.0.0.1", port, 5_000)) {
                assertEquals(1.0, after.run("admin", new org.bson.BsonDocument("ping", new org.bson.BsonInt32(1))).getNumber("ok").doubleValue());
            }
            child.close(); // SIGTERM
            assertEquals(0, child.awaitExit(), child::describe);
            String log = child.stderrText();
            assertTrue(log.contains("the proxy's process is out of file descriptors (Too many open files;"), log);
            assertFalse(log.contains("unreachable for client"), "the upstream was never the cause: " + log);
            assertFalse(log.contains("ProxyServer.close"), log);
            assertFalse(log.contains("reached at the tail of the pipeline"), "no stack of Netty's for an accept that failed: " + log);
            assertFalse(log.contains("\tat "), "no stack at all: " + log);
            long lines = log.lines().count();
            assertTrue(lines < 100, lines + " log lines: " + log);
        }
    }
}
