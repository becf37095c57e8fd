package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.blackpipe.testing.LogCapture;
import io.blackpipe.topology.Member;
import io.blackpipe.topology.MemberAddress;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.ssl.NotSslRecordException;
import java.time.Duration;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.Test;

/** What the log says of a TLS failure depends on the side: an app's handshake with a listener, or the proxy's with a member. */
class ProxyLogTest {
    private static final SSLHandshakeException REFUSED = new SSLHandshakeException("Received fatal alert: bad_certificate");

    @Test
    void anAppsFailedHandshakeSaysWhatToCheck() throws Exception {
        try (LogCapture log = LogCapture.start()) {
            new ProxyLog().clientConnectionFailed("client 127.0.0.1:5 on member db1:27017", new DecoderException(REFUSED));
            assertEquals("closing client 127.0.0.1:5 on member db1:27017: TLS failed: Received fatal alert: bad_certificate (the app"
                    + " did not accept the proxy's certificate (--tls-cert): give it the CA that signed the certificate (the driver's"
                    + " tlsCAFile; for a Java app, its trust store: -Djavax.net.ssl.trustStore), and connect by a name or address the"
                    + " certificate holds)",
                    log.awaitContaining(Duration.ofSeconds(5), "client 127.0.0.1:5"));
        }
    }

    /** Netty's OutOfMemoryError for a large message was a SEVERE line and a 25-line stack: a sizing, said as one. */
    @Test
    void runningOutOfDirectMemoryIsOneLineSayingWhatToGive() throws Exception {
        try (LogCapture log = LogCapture.start()) {
            new ProxyLog().clientConnectionFailed("client 127.0.0.1:6 on member db1:27017",
                    new OutOfMemoryError("Cannot reserve 50331648 bytes of direct buffer memory"));
            assertEquals("closing client 127.0.0.1:6 on member db1:27017: out of memory for its messages (Cannot reserve 50331648"
                    + " bytes of direct buffer memory); give the proxy more (-Xmx, or -XX:MaxDirectMemorySize: see the README's Memory)",
                    log.awaitContaining(Duration.ofSeconds(5), "client 127.0.0.1:6"));
        }
    }

    /** A member refusing the proxy's client certificate is no app refusing the proxy's: no hint about --tls-cert. */
    @Test
    void aMembersRefusalGivesNoListenerHint() throws Exception {
        try (LogCapture log = LogCapture.start()) {
            new ProxyLog().connectionFailed("upstream db1:27017", REFUSED);
            assertEquals("closing upstream db1:27017: TLS failed: Received fatal alert: bad_certificate",
                    log.awaitContaining(Duration.ofSeconds(5), "upstream db1:27017"));
        }
    }

    /**
     * Plaintext on a TLS listener: the app is told where apps turn TLS on, a C or PHP app in code too. On a member's
     * connection, the proxy's own upstream URI is at fault, and no app is: no such hint.
     */
    @Test
    void plaintextOnAListenerSaysWhereAnAppTurnsTlsOnAndOnAMemberNothingOfApps() throws Exception {
        NotSslRecordException plaintext = new NotSslRecordException("an OP_MSG message in plaintext (header 00)");
        try (LogCapture log = LogCapture.start()) {
            new ProxyLog().clientConnectionFailed("client 127.0.0.1:7 on member db1:27017", new DecoderException(plaintext));
            new ProxyLog().connectionFailed("upstream db1:27017", new DecoderException(plaintext));
            assertEquals("closing client 127.0.0.1:7 on member db1:27017: it did not speak TLS (plaintext on a TLS connection); this"
                    + " listener takes TLS only: connect with tls=true in the URI, or in code: mongoc_uri_set_option_as_bool(uri,"
                    + " MONGOC_URI_TLS, true) in C, ['tls' => true] in PHP's URI options",
                    log.awaitContaining(Duration.ofSeconds(5), "client 127.0.0.1:7"));
            assertEquals("closing upstream db1:27017: it did not speak TLS (plaintext on a TLS connection)",
                    log.awaitContaining(Duration.ofSeconds(5), "upstream db1:27017"));
        }
    }

    /**
     * A member that exits closes all of its connections at once: one line a second for each member, the next one saying
     * how many went unsaid. One counter for all members mixed their counts, and hid a second member's first close.
     */
    @Test
    void membersClosingConnectionsAreSaidOnceASecondEachCountingTheUnsaid() throws Exception {
        ProxyLog proxyLog = new ProxyLog();
        Member a = member("db1:27017", 40001);
        Member b = member("db2:27017", 40002);
        try (LogCapture log = LogCapture.start()) {
            proxyLog.memberClosed(a, new OpenConnection(1, "db1:27017", "127.0.0.1:5001", "", 0));
            proxyLog.memberClosed(a, new OpenConnection(2, "db1:27017", "127.0.0.1:5002", "", 0));
            proxyLog.memberClosed(a, new OpenConnection(3, "db1:27017", "127.0.0.1:5003", "", 0));
            proxyLog.memberClosed(b, new OpenConnection(4, "db2:27017", "127.0.0.1:5004", "", 0));
            Thread.sleep(1_100);
            proxyLog.memberClosed(a, new OpenConnection(5, "db1:27017", "127.0.0.1:5005", "", 0));
            java.util.List<String> said = log.messages().stream().filter(m -> m.contains("closed the proxy's connection")).toList();
            assertEquals(java.util.List.of(
                    "member db1:27017 closed the proxy's connection to it for client 127.0.0.1:5001 (connection 1): the client's connection closes too",
                    "member db2:27017 closed the proxy's connection to it for client 127.0.0.1:5004 (connection 4): the client's connection closes too",
                    "member db1:27017 closed the proxy's connection to it for client 127.0.0.1:5005 (connection 5): the client's connection closes too"
                            + " (and 2 more of this member's connections closed so, unsaid, since its last such line)"), said);
        }
    }

    private static Member member(String upstream, int port) {
        MemberAddress address = MemberAddress.parse(upstream);
        return new Member(address, MemberAddress.parse("127.0.0.1:" + port), address);
    }
}
