package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * An upstream URI that points at something that is not a MongoDB server (a web server, a port that
 * closes every connection, one that never answers, a plain server given tls=true): `blackpipe
 * proxy` exits 1 saying what that port did, in words, not "(null)" or "bad reply length 1347703880".
 */
class ForeignUpstreamTest {
    private final List<ServerSocket> servers = new ArrayList<>();

    /** What a foreign server does with each connection it accepts. */
    private interface Behaviour {
        void serve(Socket connection) throws IOException;
    }

    private int foreignServer(Behaviour behaviour) throws IOException {
        ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        servers.add(server);
        Thread thread = new Thread(() -> {
            while (!server.isClosed()) {
                try (Socket connection = server.accept()) {
                    behaviour.serve(connection);
                } catch (IOException e) {
                    // closed by the test's end, or the proxy left first
                }
            }
        }, "foreign-server");
        thread.setDaemon(true);
        thread.start();
        return server.getLocalPort();
    }

    @AfterEach
    void closeServers() throws IOException {
        for (ServerSocket server : servers) {
            server.close();
        }
    }

    private static void answerInHttp(Socket connection) throws IOException {
        InputStream in = connection.getInputStream();
        in.read(new byte[1024]); // whatever came first: a hello, or a TLS ClientHello
        connection.getOutputStream().write("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
    }

    private static CliRun proxyTo(String uri) {
        return CliRun.of("proxy", "--upstream", uri, "--host", "127.0.0.1", "--port", "0", "--admin-port", "-1",
                "--connect-timeout-ms", "1000");
    }

    private static void assertFailsSaying(CliRun run, String... words) {
        assertEquals(1, run.exitCode(), run::toString);
        assertTrue(run.err().contains("no upstream seed answered hello"), run::toString);
        for (String word : words) {
            assertTrue(run.err().contains(word), "says '" + word + "': " + run);
        }
        assertFalse(run.err().contains("(null)"), run::toString);
        assertEquals("", run.out(), run::toString);
    }

    @Test
    void aWebServerIsNamedForItsHttpAnswer() throws IOException {
        int port = foreignServer(ForeignUpstreamTest::answerInHttp);
        assertFailsSaying(proxyTo("mongodb://127.0.0.1:" + port + "/"), "127.0.0.1:" + port,
                "it answered in HTTP (\"HTTP/1.1 400 Bad...\"), not in MongoDB's wire protocol: is this a MongoDB server's port?");
    }

    @Test
    void anotherProtocolsAnswerIsNoMongoDbMessage() throws IOException {
        int port = foreignServer(connection -> {
            connection.getInputStream().read(new byte[1024]);
            connection.getOutputStream().write("-ERR unknown command, with args beginning with\r\n".getBytes(StandardCharsets.US_ASCII));
        });
        assertFailsSaying(proxyTo("mongodb://127.0.0.1:" + port + "/"),
                "its reply is no MongoDB message (the length in its header is 1381123373): is this a MongoDB server's port?");
    }

    @Test
    void aServerThatClosesUnansweredIsHintedAtTls() throws IOException {
        int port = foreignServer(connection -> connection.getInputStream().read(new byte[1024]));
        assertFailsSaying(proxyTo("mongodb://127.0.0.1:" + port + "/"), "it closed the connection without replying, as a"
                + " server that requires TLS does to a client without it: add tls=true to the URI if so");
    }

    @Test
    void aServerThatNeverAnswersIsNamedWithTheTimeout() throws IOException {
        int port = foreignServer(connection -> {
            connection.getInputStream().read(new byte[1024]);
            connection.getInputStream().read(); // holds the connection until the proxy gives up
        });
        assertFailsSaying(proxyTo("mongodb://127.0.0.1:" + port + "/"), "no reply within 1000 ms");
    }

    @Test
    void aPlainServerGivenTlsIsSaidToAnswerWithoutIt() throws IOException {
        int port = foreignServer(ForeignUpstreamTest::answerInHttp);
        assertFailsSaying(proxyTo("mongodb://127.0.0.1:" + port + "/?tls=true"), "TLS handshake with 127.0.0.1:" + port,
                "(it answered without TLS: leave tls=true out of the URI if it does not use TLS)");
    }
}
