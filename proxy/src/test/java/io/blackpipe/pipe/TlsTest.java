package io.blackpipe.pipe;

import static com.mongodb.client.model.Filters.eq;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.blackpipe.fault.Bandwidth;
import io.blackpipe.fault.Direction;
import io.blackpipe.fault.Latency;
import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.ScriptedScramServer;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.topology.MemberAddress;
import io.blackpipe.wire.BsonIo;
import io.blackpipe.wire.OpCode;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import javax.net.ssl.SSLContext;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * TLS on both legs, with certificates openssl makes for this run: the real driver connects to the
 * proxy over TLS (optionally with a client certificate), and the proxy dials a TLS upstream (a TLS
 * relay in front of a scripted mongod) from the URI's tls options.
 */
class TlsTest {
    @TempDir
    static Path dir;
    private static TestCertificates certs;

    @BeforeAll
    static void makeCertificates() throws Exception {
        certs = TestCertificates.generate(dir);
    }

    private static ProxyServer tlsProxy(Path clientCa) {
        return ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri())
                .withListenerTls(new ProxyConfig.ListenerTls(certs.serverCert, certs.serverKey, clientCa)));
    }

    private static MongoClient tlsDriver(ProxyServer proxy, SSLContext context, int selectionSeconds) {
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(proxy.connectionString()))
                .applyToSslSettings(b -> b.enabled(true).context(context))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(selectionSeconds, TimeUnit.SECONDS))
                .build());
    }

    private static Set<String> proxyAddresses(ProxyServer proxy) {
        return proxy.members().stream().map(m -> m.advertised().toString()).collect(Collectors.toSet());
    }

    private static void insertAndFind(MongoClient client, String database) {
        MongoCollection<Document> collection = client.getDatabase(database).getCollection("tls");
        collection.insertOne(new Document("_id", 1).append("over", "tls"));
        Document found = collection.find(eq("_id", 1)).first();
        assertNotNull(found, "the document inserted over TLS must be found");
        assertEquals("tls", found.getString("over"));
    }

    @Test
    void driverConnectsOverTlsAndSeesOnlyProxyAddresses() throws Exception {
        try (ProxyServer proxy = tlsProxy(null);
             MongoClient client = tlsDriver(proxy, certs.clientContext(false), 15)) {
            assertTrue(proxy.connectionString().contains("tls=true"), proxy.connectionString());
            insertAndFind(client, UpstreamLane.freshDatabaseName("tls"));
            Set<String> seen = client.getClusterDescription().getServerDescriptions().stream()
                    .map(d -> d.getAddress().toString()).collect(Collectors.toSet());
            assertEquals(proxyAddresses(proxy), seen, "the driver must know the members only by their proxy addresses");
        }
    }

    /**
     * A member's latency delays the TLS records themselves (the link sits under TLS): a new connection's handshake
     * crosses it and works, a command's reply is late by it, and a connections reset under it ends the commands at
     * once for the proxy, while the driver, which hears of the reset later, connects again once it is restored.
     */
    @Test
    void aSlowLinkCarriesTlsHandshakesAndRecordsLateAndInOrder() throws Exception {
        String db = UpstreamLane.freshDatabaseName("tlsSlow");
        try (ProxyServer proxy = tlsProxy(null)) {
            proxy.latency("all", new Latency(300, 0), 0);
            try (MongoClient client = tlsDriver(proxy, certs.clientContext(false), 20)) { // every handshake crosses the link
                long started = System.nanoTime();
                insertAndFind(client, db);
                long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
                assertTrue(tookMillis >= 600, "an insert and a find, each answered 300 ms late, took " + tookMillis + " ms");

                int reset = proxy.select("all").stream().mapToInt(MemberListener::resetConnections).sum();
                assertTrue(reset >= 1, "the driver's connections: " + reset);
                proxy.restore("all");
                MongoCollection<Document> collection = client.getDatabase(db).getCollection("tls");
                Document found = null;
                for (int attempt = 0; attempt < 5 && found == null; attempt++) { // the first may meet the reset
                    try {
                        found = collection.find(eq("_id", 1)).first();
                    } catch (MongoSocketException e) {
                        Thread.sleep(100);
                    }
                }
                assertNotNull(found, "after the reset and the restore, the driver connects again over TLS");
            }
        }
    }

    /**
     * A narrow link cuts the TLS records into pieces (it sits under TLS): the driver's TLS layer puts them together,
     * the handshake included, and a large reply arrives whole, at the rate; the proxy's TLS layer puts together the
     * pieces of a large insert the same way.
     */
    @Test
    void aNarrowLinkCarriesTlsRecordsInPiecesThatTheClientPutsTogether() throws Exception {
        String db = UpstreamLane.freshDatabaseName("tlsNarrow");
        try (ProxyServer proxy = tlsProxy(null)) {
            proxy.bandwidth("all", new Bandwidth(100_000), 0); // 1,000-byte pieces: a 16 KiB record in seventeen
            try (MongoClient client = tlsDriver(proxy, certs.clientContext(false), 20)) {
                insertAndFind(client, db);
                MongoCollection<Document> collection = client.getDatabase(db).getCollection("tls");
                long inserting = System.nanoTime();
                collection.insertOne(new Document("_id", 2).append("payload", "y".repeat(200_000)));
                long insertMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - inserting);
                assertTrue(insertMillis >= 2_000, "a 200 KB insert at 100 KB a second took " + insertMillis + " ms");
                long started = System.nanoTime();
                assertEquals(200_000, collection.find(eq("_id", 2)).first().getString("payload").length());
                long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
                assertTrue(tookMillis >= 2_000, "a 200 KB reply at 100 KB a second took " + tookMillis + " ms");
            }
        }
    }

    /** Over TLS too, a client's end comes behind what it sent: an insert it gave up on reaches the member at the rate. */
    @Test
    void aClientThatGivesUpOnAnInsertOverTlsClosesBehindWhatItSent() throws Exception {
        String db = UpstreamLane.freshDatabaseName("tlsFin");
        SSLContext context = certs.clientContext(false);
        try (ProxyServer proxy = tlsProxy(null)) {
            try (MongoClient client = MongoClients.create(MongoClientSettings.builder()
                    .applyConnectionString(new ConnectionString(proxy.connectionString()))
                    .applyToSslSettings(b -> b.enabled(true).context(context))
                    .applyToSocketSettings(b -> b.readTimeout(1, TimeUnit.SECONDS))
                    .retryWrites(false).build())) {
                MongoCollection<Document> collection = client.getDatabase(db).getCollection("tls");
                collection.insertOne(new Document("_id", 1));
                proxy.bandwidth("all", new Bandwidth(10_000, Direction.REQUESTS), 0); // 60 KB: six seconds
                assertThrows(com.mongodb.MongoSocketReadTimeoutException.class,
                        () -> collection.insertOne(new Document("_id", 2).append("payload", "z".repeat(60_000))));
            }
            long started = System.nanoTime();
            try (MongoClient direct = UpstreamLane.directClient()) {
                MongoCollection<Document> onTheServer = direct.getDatabase(db).getCollection("tls");
                io.blackpipe.testing.Await.until(java.time.Duration.ofSeconds(30), "the insert the client gave up on to land",
                        () -> onTheServer.countDocuments(eq("_id", 2)) == 1);
            }
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            assertTrue(tookMillis >= 4_000, "it landed " + tookMillis + " ms after the client closed, ahead of what it had sent");
        }
    }

    /**
     * The proxy's own limit on a client's TLS handshake counts only its own time, not the link's: a handshake that a
     * member's narrow, slow link makes take longer than that limit still completes, as it would with the server.
     */
    @Test
    void aSlowNarrowLinkSlowsAClientsTlsHandshakeButNeverFailsIt() throws Exception {
        ProxyConfig.ListenerTls halfASecond = new ProxyConfig.ListenerTls(certs.serverCert, certs.serverKey, null, 500);
        IllegalArgumentException negative = assertThrows(IllegalArgumentException.class,
                () -> new ProxyConfig.ListenerTls(certs.serverCert, certs.serverKey, null, -1));
        assertEquals("the TLS handshake timeout must not be negative, got -1 ms", negative.getMessage());
        assertEquals(500, halfASecond.handshakeTimeoutMillisOn(null, null), "a plain link adds nothing");
        assertEquals(500 + 2 * (300 + 50), halfASecond.handshakeTimeoutMillisOn(new Latency(300, 50), null), "two round trips' latency");
        assertEquals(500 + 4 * 300, halfASecond.handshakeTimeoutMillisOn(new Latency(300, 0, Direction.BOTH), null),
                "two round trips, each delayed each way");
        assertEquals(500 + 2 * 16_384, halfASecond.handshakeTimeoutMillisOn(null, new Bandwidth(1_000)),
                "16 KiB each way at a thousand bytes a second");
        assertEquals(500 + 16_384, halfASecond.handshakeTimeoutMillisOn(null, new Bandwidth(1_000, Direction.REPLIES)),
                "16 KiB the one way it narrows");
        try (LogCapture log = LogCapture.start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()).withListenerTls(halfASecond))) {
            proxy.latency("all", new Latency(300, 0), 0);
            proxy.bandwidth("all", new Bandwidth(2_000), 0); // a handshake's few KB take seconds at this rate
            try (MongoClient client = tlsDriver(proxy, certs.clientContext(false), 30)) {
                long started = System.nanoTime();
                assertEquals(1.0, client.getDatabase("admin").runCommand(new Document("ping", 1)).get("ok", Number.class).doubleValue());
                long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
                assertTrue(tookMillis >= 500, "a handshake slower than the 500 ms the proxy gives it: took " + tookMillis + " ms");
            }
            assertTrue(log.messages().stream().noneMatch(m -> m.contains("TLS failed")), "no handshake timed out: " + log.messages());
        }
    }

    /** Netty closes a connection whose handshake timed out without raising it: the log still names it. */
    @Test
    void aClientSilentInTheHandshakeIsClosedAtTheTimeoutAndNamedInTheLog() throws Exception {
        ProxyConfig.ListenerTls halfASecond = new ProxyConfig.ListenerTls(certs.serverCert, certs.serverKey, null, 500);
        try (LogCapture log = LogCapture.start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()).withListenerTls(halfASecond));
             RawClient raw = RawClient.connect(proxy.members().get(0).advertised())) {
            raw.send(new byte[] {0x16, 0x03, 0x01, 0x00, (byte) 0xf0}); // a ClientHello's record header, and no more
            long started = System.nanoTime();
            raw.awaitClosedByPeer(Duration.ofSeconds(5));
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            assertTrue(tookMillis >= 400, "closed at the 500 ms handshake timeout, not before: took " + tookMillis + " ms");
            String line = log.awaitContaining(Duration.ofSeconds(5), raw.logName(), "TLS failed");
            assertTrue(line.contains("handshake timed out after 500ms") && line.contains("on member "), line);
        }
    }

    @Test
    void clientCertificateIsRequiredWhenAClientCaIsGiven() throws Exception {
        try (LogCapture log = LogCapture.start(); ProxyServer proxy = tlsProxy(certs.ca)) {
            try (MongoClient anonymous = tlsDriver(proxy, certs.clientContext(false), 2)) {
                assertThrows(MongoTimeoutException.class,
                        () -> anonymous.getDatabase("admin").runCommand(new Document("ping", 1)),
                        "a client without a certificate must not get through");
            }
            String line = log.awaitContaining(Duration.ofSeconds(5), "on member", "TLS failed");
            assertFalse(line.contains("unexpected error"), line);
            assertTrue(line.contains("(--tls-client-ca requires a client certificate its CA signed, and the app gave none"), line);
            try (MongoClient withCertificate = tlsDriver(proxy, certs.clientContext(true), 15)) {
                insertAndFind(withCertificate, UpstreamLane.freshDatabaseName("tlsClientCert"));
            }
        }
    }

    /**
     * A client certificate another CA signed is refused, and the log says by which option: a Java app gives none (the
     * JDK presents only one the proxy's CA list names), an OpenSSL-based one gives it, and the proxy finds no path.
     */
    @Test
    void aClientCertificateOfAnotherCaIsRefusedAndTheLogSaysWhy() throws Exception {
        try (LogCapture log = LogCapture.start(); ProxyServer proxy = tlsProxy(certs.otherCa)) {
            try (MongoClient client = tlsDriver(proxy, certs.clientContext(true), 2)) {
                assertThrows(MongoTimeoutException.class, () -> client.getDatabase("admin").runCommand(new Document("ping", 1)));
            }
            String line = log.awaitContaining(Duration.ofSeconds(5), "on member", "TLS failed");
            assertTrue(line.contains("a Java app gives none when its certificate's CA is another)"), line);
        }
        try (LogCapture log = LogCapture.start(); ProxyServer proxy = tlsProxy(certs.otherCa)) {
            String said = openSsl(proxy, "-CAfile", certs.ca.toString(), "-cert", certs.clientCert.toString(),
                    "-key", certs.clientKey.toString());
            String line = log.awaitContaining(Duration.ofSeconds(5), "on member", "TLS failed");
            assertTrue(line.contains("(the app's client certificate is not signed by the CA in --tls-client-ca)"), line + "\n" + said);
        }
    }

    /**
     * An app that does not trust the proxy's certificate ends the handshake with an alert: the log says what to give it.
     * OpenSSL's alert (Node.js, Python, mongosh) left only the JDK's "Insufficient buffer remaining for AEAD cipher
     * fragment", which names neither the certificate nor the CA.
     */
    @Test
    void anAppThatDoesNotTrustTheProxysCertificateIsToldOfInTheLog() throws Exception {
        SSLContext trustingAnotherCa = ((io.netty.handler.ssl.JdkSslContext) io.netty.handler.ssl.SslContextBuilder.forClient()
                .sslProvider(io.netty.handler.ssl.SslProvider.JDK).trustManager(certs.otherCa.toFile()).build()).context();
        try (LogCapture log = LogCapture.start(); ProxyServer proxy = tlsProxy(null)) {
            try (MongoClient client = tlsDriver(proxy, trustingAnotherCa, 2)) {
                assertThrows(MongoTimeoutException.class, () -> client.getDatabase("admin").runCommand(new Document("ping", 1)));
            }
            String line = log.awaitContaining(Duration.ofSeconds(5), "on member", "TLS failed");
            assertTrue(line.contains("(the app did not accept the proxy's certificate (--tls-cert): give it the CA"), line);
        }
        try (LogCapture log = LogCapture.start(); ProxyServer proxy = tlsProxy(null)) {
            String said = openSsl(proxy, "-CAfile", certs.otherCa.toString(), "-verify_return_error");
            assertTrue(said.contains("certificate verify failed"), said);
            String line = log.awaitContaining(Duration.ofSeconds(5), "on member", "TLS failed");
            assertTrue(line.contains("did not accept the proxy's certificate (--tls-cert): give it the CA"), line);
        }
    }

    /**
     * A requestID whose low byte is 2 or 3 made Netty's TLS layer read the plaintext header as an SSLv2 record's and
     * wait for the rest: the connection sat out the handshake timeout, with nothing logged (about one driver in 256).
     */
    @ParameterizedTest
    @ValueSource(ints = {7, 2, 3, 0x0103})
    void plaintextClientOnTlsPortIsClosedAndNamedInTheLog(int requestId) throws Exception {
        try (LogCapture log = LogCapture.start(); ProxyServer proxy = tlsProxy(null);
             MongoClient tlsClient = tlsDriver(proxy, certs.clientContext(false), 15)) {
            tlsClient.getDatabase("admin").runCommand(new Document("ping", 1)); // an open TLS connection, before
            try (RawClient raw = RawClient.connect(proxy.members().get(0).advertised())) {
                raw.send(hello(requestId));
                raw.awaitClosedByPeer(Duration.ofSeconds(5));
                String line = log.awaitContaining(Duration.ofSeconds(5), raw.logName(), "did not speak TLS");
                assertFalse(line.contains("unexpected error"), line);
            }
            assertTrue(log.messages().stream().noneMatch(m -> m.contains("unexpected error")), "no stack traces: " + log.messages());
            // Other connections are unaffected.
            insertAndFind(tlsClient, UpstreamLane.freshDatabaseName("tlsAfterPlaintext"));
        }
    }

    @Test
    void proxyDialsATlsUpstreamFromTheUriOptions() throws Exception {
        try (TlsRelay relay = new TlsRelay(certs);
             ScriptedMongod mongod = ScriptedMongod.builder().hosts(List.of(relayAddress(relay)))
                     .me(relayAddress(relay)).primary(relayAddress(relay)).start()) {
            relay.relayTo(mongod.port());
            String uri = "mongodb://" + relay.address() + "/?replicaSet=" + ScriptedMongod.SET_NAME
                    + "&tls=true&tlsCAFile=" + certs.ca + "&tlsCertificateKeyFile=" + certs.clientCombined;
            try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(uri))) {
                assertEquals(List.of(MemberAddress.parse(relay.address())),
                        proxy.members().stream().map(m -> m.upstream()).toList(), "every member is the TLS relay");
                int afterDiscovery = relay.handshakes();
                assertTrue(afterDiscovery >= 1, "discovery must have talked TLS to the relay");
                try (MongoClient client = MongoClients.create(MongoClientSettings.builder()
                        .applyConnectionString(new ConnectionString(proxy.connectionString()))
                        .applyToClusterSettings(b -> b.serverSelectionTimeout(15, TimeUnit.SECONDS)).build())) {
                    insertAndFind(client, "tlsupstream");
                }
                assertTrue(relay.handshakes() > afterDiscovery, "the proxied connections must be TLS to the relay too");
                assertEquals(0, relay.failedHandshakes(), "every handshake with the relay must succeed");
                assertEquals(1, mongod.documents("tlsupstream", "tls").size(), "the insert must reach the upstream behind the relay");
            }
        }
    }

    /** The URI options drivers take for a relay whose certificate nobody vouches for, and for an encrypted client key. */
    @Test
    void tlsAllowInvalidCertificatesAndAnEncryptedClientKeyAreHonoured() throws Exception {
        Path encryptedKey = dir.resolve("client-encrypted.key");
        Process openssl = new ProcessBuilder("openssl", "pkcs8", "-topk8", "-in", certs.clientKey.toString(), "-out", encryptedKey.toString(),
                "-v2", "aes-256-cbc", "-passout", "pass:k3y pass").redirectErrorStream(true).start();
        String output = new String(openssl.getInputStream().readAllBytes());
        assertEquals(0, openssl.waitFor(), output);
        Path combined = dir.resolve("client-combined-encrypted.pem");
        java.nio.file.Files.writeString(combined, java.nio.file.Files.readString(certs.clientCert) + java.nio.file.Files.readString(encryptedKey));
        try (TlsRelay relay = new TlsRelay(certs);
             ScriptedMongod mongod = ScriptedMongod.builder().hosts(List.of(relayAddress(relay)))
                     .me(relayAddress(relay)).primary(relayAddress(relay)).start()) {
            relay.relayTo(mongod.port());
            // no tlsCAFile: the JVM's trust store does not know the test CA
            String uri = "mongodb://" + relay.address() + "/?replicaSet=" + ScriptedMongod.SET_NAME
                    + "&tlsAllowInvalidCertificates=true&tlsCertificateKeyFile=" + combined + "&tlsCertificateKeyFilePassword=k3y%20pass";
            try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(uri));
                 MongoClient client = MongoClients.create(MongoClientSettings.builder()
                         .applyConnectionString(new ConnectionString(proxy.connectionString()))
                         .applyToClusterSettings(b -> b.serverSelectionTimeout(15, TimeUnit.SECONDS)).build())) {
                insertAndFind(client, "tlsinvalidcerts");
                assertEquals(0, relay.failedHandshakes(), "every handshake with the relay must succeed");
                assertTrue(relay.handshakes() >= 2, "discovery and the proxied connection both talked TLS");
            }
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> ProxyServer.start(ProxyConfig.embedded(
                    uri.replace("k3y%20pass", "wrong"))));
            assertTrue(e.getMessage().contains("tlsCertificateKeyFilePassword"), e.getMessage());
            assertFalse(e.getMessage().contains("wrong"), e.getMessage());
        }
    }

    /**
     * A member whose certificate names another host is refused, as by a driver, unless the URI allows
     * invalid hostnames: tlsAllowInvalidHostnames, or the Java driver's older name for it,
     * sslInvalidHostNameAllowed.
     */
    @Test
    void aCertificateForAnotherNameIsRefusedUnlessTheUriAllowsInvalidHostnames() throws Exception {
        try (TlsRelay relay = new TlsRelay(certs, certs.misnamedServerCert, certs.misnamedServerKey);
             ScriptedMongod mongod = ScriptedMongod.builder().hosts(List.of(relayAddress(relay)))
                     .me(relayAddress(relay)).primary(relayAddress(relay)).start()) {
            relay.relayTo(mongod.port());
            String uri = "mongodb://" + relay.address() + "/?replicaSet=" + ScriptedMongod.SET_NAME
                    + "&tls=true&tlsCAFile=" + certs.ca + "&tlsCertificateKeyFile=" + certs.clientCombined;
            IllegalStateException refused = assertThrows(IllegalStateException.class, () -> ProxyServer.start(ProxyConfig.embedded(uri)));
            assertTrue(refused.getMessage().contains("TLS handshake") && refused.getMessage().contains(relay.address()),
                    refused.getMessage());
            assertEquals(0, mongod.connectionsAccepted(), "nothing may reach a member whose certificate names another host");
            for (String allow : List.of("tlsAllowInvalidHostnames", "sslInvalidHostNameAllowed")) {
                try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(uri + "&" + allow + "=true"));
                     MongoClient client = MongoClients.create(MongoClientSettings.builder()
                             .applyConnectionString(new ConnectionString(proxy.connectionString()))
                             .applyToClusterSettings(b -> b.serverSelectionTimeout(15, TimeUnit.SECONDS)).build())) {
                    insertAndFind(client, allow);
                }
                assertEquals(1, mongod.documents(allow, "tls").size(), allow + ": the insert reached the member behind the relay");
            }
        }
    }

    /**
     * An elliptic-curve certificate's own key passes the key check, and a key of another kind (RSA) does not; its key in
     * openssl's traditional form is refused saying how to make it PKCS#8.
     */
    @Test
    void theKeyCheckKnowsEllipticCurveKeys() throws Exception {
        Path ecKey = dir.resolve("ec.key");
        Path ecCert = dir.resolve("ec.pem");
        Process openssl = new ProcessBuilder("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", ecKey.toString(), "-out", ecCert.toString(), "-days", "2", "-subj", "/CN=localhost").redirectErrorStream(true).start();
        String output = new String(openssl.getInputStream().readAllBytes());
        assertEquals(0, openssl.waitFor(), output);
        io.blackpipe.wire.Tls.server(ecCert, ecKey, null);
        Path traditional = dir.resolve("ec-traditional.key"); // openssl's own form, which the JDK cannot read: the error says what to do
        openssl = new ProcessBuilder("openssl", "ec", "-in", ecKey.toString(), "-out", traditional.toString()).redirectErrorStream(true).start();
        output = new String(openssl.getInputStream().readAllBytes());
        assertEquals(0, openssl.waitFor(), output);
        IllegalArgumentException unread = assertThrows(IllegalArgumentException.class, () -> io.blackpipe.wire.Tls.server(ecCert, traditional, null));
        assertTrue(unread.getMessage().endsWith("(--tls-key must be PKCS#8, unencrypted: openssl pkcs8 -topk8 -nocrypt -in " + traditional
                + " -out KEY.pk8)"), unread.getMessage());
        IllegalArgumentException other = assertThrows(IllegalArgumentException.class, () -> io.blackpipe.wire.Tls.server(ecCert, certs.serverKey, null));
        assertTrue(other.getMessage().contains("is not the private key of the certificate"), other.getMessage());
    }

    /** A file that is not what its option wants stops the start with a message naming the option, not just Netty's. */
    @Test
    void aTlsFileOfTheWrongKindIsNamedByItsOption() {
        IllegalArgumentException listener = assertThrows(IllegalArgumentException.class,
                () -> io.blackpipe.wire.Tls.server(certs.serverKey, certs.serverKey, null)); // a key where the certificate goes
        assertTrue(listener.getMessage().contains("--tls-cert"), listener.getMessage());
        listener = assertThrows(IllegalArgumentException.class,
                () -> io.blackpipe.wire.Tls.server(certs.serverCert, certs.serverKey, certs.serverKey));
        assertTrue(listener.getMessage().contains("--tls-client-ca"), listener.getMessage());
        // another key than the certificate's: the JDK took the pair, and every handshake failed naming neither file
        listener = assertThrows(IllegalArgumentException.class, () -> io.blackpipe.wire.Tls.server(certs.serverCert, certs.clientKey, null));
        assertTrue(listener.getMessage().startsWith("--tls-key " + certs.clientKey + " is not the private key of the certificate in"
                + " --tls-cert " + certs.serverCert), listener.getMessage());
        IllegalStateException upstream = assertThrows(IllegalStateException.class, () -> io.blackpipe.wire.Tls.Client.fromUriOptions(
                java.util.Map.of("tls", "true", "tlscafile", certs.clientKey.toString())).context());
        assertTrue(upstream.getMessage().startsWith("cannot use the upstream URI's TLS files (tlsCAFile " + certs.clientKey + "): "),
                upstream.getMessage()); // only the files given: it said "tlsCertificateKeyFile null" too
        upstream = assertThrows(IllegalStateException.class, () -> io.blackpipe.wire.Tls.Client.fromUriOptions(
                java.util.Map.of("tls", "true", "tlscertificatekeyfile", certs.clientCert.toString())).context()); // no key in it
        assertTrue(upstream.getMessage().contains("tlsCertificateKeyFile"), upstream.getMessage());
        assertFalse(upstream.getMessage().contains("null"), upstream.getMessage());
    }

    @Test
    void aWrongCaFailsDiscoveryWithAClearMessage() throws Exception {
        try (TlsRelay relay = new TlsRelay(certs);
             ScriptedMongod mongod = ScriptedMongod.builder().hosts(List.of(relayAddress(relay)))
                     .me(relayAddress(relay)).primary(relayAddress(relay)).start()) {
            relay.relayTo(mongod.port());
            String uri = "mongodb://" + relay.address() + "/?replicaSet=" + ScriptedMongod.SET_NAME
                    + "&tls=true&tlsCAFile=" + certs.otherCa + "&tlsCertificateKeyFile=" + certs.clientCombined;
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> ProxyServer.start(ProxyConfig.embedded(uri)));
            assertTrue(e.getMessage().contains(relay.address()), e.getMessage());
            assertTrue(e.getMessage().contains("TLS handshake"), e.getMessage());
            assertTrue(e.getMessage().contains("tlsCAFile"), e.getMessage());
            assertEquals(0, relay.handshakes(), "no handshake may succeed with a CA that did not sign the relay's certificate");
            assertEquals(0, mongod.connectionsAccepted(), "nothing may reach the upstream");
        }
    }

    /** A member that requires a client certificate, given none: the start says which URI option gives one. */
    @Test
    void aMemberRequiringAClientCertificateNoneWasGivenNamesTheOption() throws Exception {
        try (TlsRelay relay = new TlsRelay(certs);
             ScriptedMongod mongod = ScriptedMongod.builder().hosts(List.of(relayAddress(relay)))
                     .me(relayAddress(relay)).primary(relayAddress(relay)).start()) {
            relay.relayTo(mongod.port());
            String uri = "mongodb://" + relay.address() + "/?replicaSet=" + ScriptedMongod.SET_NAME + "&tls=true&tlsCAFile=" + certs.ca;
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> ProxyServer.start(ProxyConfig.embedded(uri)));
            assertTrue(e.getMessage().contains(relay.address()), e.getMessage());
            assertTrue(e.getMessage().contains("(it asked for a client certificate, and the upstream URI gives none: if it requires one,"
                    + " give it with tlsCertificateKeyFile)"), e.getMessage()); // it said only "certificate_required", or "Broken pipe"
            assertEquals(0, mongod.connectionsAccepted(), "nothing may reach the upstream");
        }
    }

    /** A TLS file that cannot be used is the URI's fault, not any seed's: no seed is dialled, and the message names the file alone. */
    @Test
    void anUnusableTlsFileStopsTheStartBeforeAnySeedIsAsked() throws Exception {
        try (ServerSocket seed = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            String uri = "mongodb://127.0.0.1:" + seed.getLocalPort() + "/?tls=true&tlsCAFile=" + certs.clientKey;
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> ProxyServer.start(ProxyConfig.embedded(uri)));
            assertTrue(e.getMessage().startsWith("cannot use the upstream URI's TLS files (tlsCAFile " + certs.clientKey + "): "),
                    e.getMessage()); // it began "no upstream seed answered hello: 127.0.0.1:port (cannot use ..."
            seed.setSoTimeout(200);
            assertThrows(SocketTimeoutException.class, seed::accept, "the seed was dialled");
        }
    }

    @Test
    void failoverAuthenticatesWithTheClientCertificateAsMongodbX509() throws Exception {
        // Two members behind TLS relays that require the test client certificate; replSetStepDown
        // needs an authenticated user, and the only one is the certificate's subject on $external.
        String subject = "CN=blackpipe test client";
        ScriptedScramServer users = ScriptedScramServer.builder().x509(subject).build();
        try (TlsRelay relayA = new TlsRelay(certs); TlsRelay relayB = new TlsRelay(certs);
             ScriptedMongod a = ScriptedMongod.builder().accessControl(users).hosts(List.of(relayA.address(), relayB.address()))
                     .me(relayA.address()).primary(relayA.address()).start();
             ScriptedMongod b = ScriptedMongod.builder().accessControl(users).secondary().hosts(List.of(relayA.address(), relayB.address()))
                     .me(relayB.address()).primary(relayA.address()).start()) {
            relayA.relayTo(a.port());
            relayB.relayTo(b.port());
            String uri = "mongodb://" + relayA.address() + "/?replicaSet=" + ScriptedMongod.SET_NAME
                    + "&tls=true&tlsCAFile=" + certs.ca + "&tlsCertificateKeyFile=" + certs.clientCombined + "&authMechanism=MONGODB-X509";
            try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(uri))) {
                proxy.failover();
            }
            assertEquals(List.of(new ScriptedMongod.StepDownRequest(subject + "@$external", "MONGODB-X509")), a.stepDowns());
            BsonDocument authenticate = a.commandsReceived("authenticate").get(0).document();
            assertEquals("$external", authenticate.getString("$db").getValue());
            assertEquals("MONGODB-X509", authenticate.getString("mechanism").getValue());
            assertFalse(authenticate.containsKey("user"), "the certificate names the user");
            assertEquals(Set.of(subject), relayA.peerSubjects(), "the control client presented the URI's certificate");
        }
    }

    /** What {@code openssl s_client} said, connected to the proxy's first member with {@code options}, sending nothing. */
    private static String openSsl(ProxyServer proxy, String... options) throws Exception {
        MemberAddress member = proxy.members().get(0).advertised();
        List<String> command = new java.util.ArrayList<>(List.of("openssl", "s_client", "-connect", member.host() + ":" + member.port()));
        command.addAll(List.of(options));
        Process openssl = new ProcessBuilder(command).redirectErrorStream(true).start();
        openssl.getOutputStream().close();
        String said = new String(openssl.getInputStream().readAllBytes());
        assertTrue(openssl.waitFor(10, TimeUnit.SECONDS), said);
        return said;
    }

    private static String relayAddress(TlsRelay relay) {
        return relay.address();
    }

    /** A hello as OP_MSG bytes, as a plaintext driver would send first. */
    static byte[] hello(int requestId) {
        BsonDocument body = new BsonDocument("hello", new BsonInt32(1)).append("$db", new BsonString("admin"));
        byte[] bson = BsonIo.encode(body);
        int length = 16 + 4 + 1 + bson.length;
        ByteBuffer out = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
        out.putInt(length).putInt(requestId).putInt(0).putInt(OpCode.OP_MSG).putInt(0).put((byte) 0).put(bson);
        return out.array();
    }
}
