package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoTimeoutException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.blackpipe.pipe.TestCertificates;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.UpstreamLane;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import org.bson.Document;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * `blackpipe proxy --tls-cert FILE --tls-key FILE [--tls-client-ca FILE]`, as a user starts it, with
 * certificates openssl makes for this run: the printed connection string carries tls=true, a driver
 * trusting the test CA inserts through it (the server holds the document), a plaintext driver gets no
 * server (and the proxy logs it); with --tls-client-ca a driver without a client certificate gets none
 * either, and one with the certificate the CA signed gets through.
 */
class ListenerTlsCliTest {
    @TempDir
    static Path dir;
    private static TestCertificates certs;

    @BeforeAll
    static void makeCertificates() throws Exception {
        certs = TestCertificates.generate(dir);
    }

    private static CliChild tlsProxy(String... more) throws Exception {
        List<String> args = new ArrayList<>(List.of("proxy", "--upstream", UpstreamLane.uri(), "--host", "127.0.0.1", "--port", "0",
                "--admin-port", "-1", "--tls-cert", certs.serverCert.toString(), "--tls-key", certs.serverKey.toString()));
        args.addAll(List.of(more));
        return new CliChild(dir, null, Map.of(), args.toArray(String[]::new));
    }

    private static String connectionString(CliChild child) throws Exception {
        return child.awaitLine("connection string: ").substring("connection string: ".length()).trim();
    }

    /** A driver on {@code uri}: with TLS from {@code context}, or plaintext when it is null. */
    private static MongoClient driver(String uri, SSLContext context, int selectionSeconds) {
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(uri))
                .applyToSslSettings(b -> b.enabled(context != null).context(context))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(selectionSeconds, TimeUnit.SECONDS))
                .build());
    }

    private static List<Document> onTheServer(String db) {
        try (MongoClient direct = UpstreamLane.directClient()) {
            return direct.getDatabase(db).getCollection("c").find().into(new ArrayList<>());
        }
    }

    @Test
    void theListenersSpeakOnlyTlsAndThePrintedConnectionStringSaysSo() throws Exception {
        String db = UpstreamLane.freshDatabaseName("tlsCli");
        try (CliChild child = tlsProxy()) {
            String uri = connectionString(child);
            assertTrue(uri.contains("tls=true"), uri);

            String plaintextUri = uri.replace("tls=true", "tls=false");
            try (MongoClient plaintext = driver(plaintextUri, null, 5)) {
                assertThrows(MongoTimeoutException.class,
                        () -> plaintext.getDatabase(db).getCollection("c").insertOne(new Document("_id", "plaintext")),
                        "a plaintext driver must not get through a TLS listener");
            }
            Await.until(Duration.ofSeconds(30), child::describe, () -> {
                try {
                    return child.stderrText().contains("did not speak TLS");
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });

            try (MongoClient tls = driver(uri, certs.clientContext(false), 30)) {
                tls.getDatabase(db).getCollection("c").insertOne(new Document("_id", "tls"));
                assertEquals(new Document("_id", "tls"), tls.getDatabase(db).getCollection("c").find().first());
            }
        }
        assertEquals(List.of(new Document("_id", "tls")), onTheServer(db), "the server holds the TLS driver's insert only");
    }

    /** A key that is not the certificate's stops the start naming both; before, the proxy served and every handshake failed. */
    @Test
    void aKeyThatIsNotTheCertificatesStopsTheStart() throws Exception {
        List<String> args = List.of("proxy", "--upstream", UpstreamLane.uri(), "--host", "127.0.0.1", "--port", "0", "--admin-port", "-1",
                "--tls-cert", certs.serverCert.toString(), "--tls-key", certs.clientKey.toString());
        try (CliChild child = new CliChild(dir, null, Map.of(), args.toArray(String[]::new))) {
            assertEquals(1, child.awaitExit(), child::describe);
            assertTrue(child.stderrText().contains("--tls-key " + certs.clientKey + " is not the private key of the certificate in --tls-cert "
                    + certs.serverCert), child::describe);
        }
    }

    @Test
    void withAClientCaOnlyADriverPresentingACertificateItSignedGetsThrough() throws Exception {
        String db = UpstreamLane.freshDatabaseName("tlsCliClientCa");
        try (CliChild child = tlsProxy("--tls-client-ca", certs.ca.toString())) {
            assertOnlyACertifiedDriverGetsThrough(connectionString(child), certs, db);
        }
    }

    /**
     * Through the TLS listener at {@code uri} (its client CA {@code certs.ca}): a driver without a client
     * certificate finds no server, one with a certificate the CA signed inserts, and the server holds that insert only.
     */
    static void assertOnlyACertifiedDriverGetsThrough(String uri, TestCertificates certs, String db) throws Exception {
        assertTrue(uri.contains("tls=true"), uri);
        try (MongoClient anonymous = driver(uri, certs.clientContext(false), 5)) {
            assertThrows(MongoTimeoutException.class,
                    () -> anonymous.getDatabase(db).getCollection("c").insertOne(new Document("_id", "anonymous")),
                    "a driver without a client certificate must not get through");
        }
        try (MongoClient withCertificate = driver(uri, certs.clientContext(true), 30)) {
            withCertificate.getDatabase(db).getCollection("c").insertOne(new Document("_id", "certified"));
        }
        assertEquals(List.of(new Document("_id", "certified")), onTheServer(db),
                "the server holds the insert of the driver with a certificate only");
    }
}
