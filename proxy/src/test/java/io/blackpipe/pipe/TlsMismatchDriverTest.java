package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoTimeoutException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.UpstreamLane;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import org.bson.Document;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real driver on the wrong side of a listener's TLS, either way: the proxy's line names the connection and says
 * where an app turns TLS on, its URI or, for a C or PHP app (libmongoc), its code, where the URI it logs shows nothing.
 * The listener goes on serving the apps that match it.
 */
class TlsMismatchDriverTest {
    private static final String WHERE_APPS_TURN_TLS_ON = "tls=true in the URI, or in code: mongoc_uri_set_option_as_bool(uri,"
            + " MONGOC_URI_TLS, true) in C, ['tls' => true] in PHP's URI options";

    @TempDir
    static Path dir;
    private static TestCertificates certs;

    @BeforeAll
    static void makeCertificates() throws Exception {
        certs = TestCertificates.generate(dir);
    }

    @Test
    void aDriverSpeakingTlsToAPlaintextListenerIsToldWhereAppsTurnItOn() throws Exception {
        try (LogCapture log = LogCapture.start(); ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            try (MongoClient tls = driver(proxy.connectionString(), certs.clientContext(false), 2)) {
                assertThrows(MongoTimeoutException.class, () -> tls.getDatabase("admin").runCommand(new Document("ping", 1)));
            }
            String line = log.awaitContaining(Duration.ofSeconds(5), "it begins a TLS handshake");
            assertTrue(line.matches("closing client 127\\.0\\.0\\.1:\\d+ on member \\S+: malformed message: .*"), line);
            assertTrue(line.endsWith(" (it begins a TLS handshake: the client uses TLS and this listener does not; start the proxy with"
                    + " --tls-cert and --tls-key, or connect without TLS (the app turns it on with " + WHERE_APPS_TURN_TLS_ON + "))"), line);
            try (MongoClient plain = driver(proxy.connectionString(), null, 15)) {
                insertAndFind(plain, UpstreamLane.freshDatabaseName("plainAfterTls"));
            }
        }
    }

    @Test
    void aPlaintextDriverOnATlsListenerIsToldToTurnItOnInTheApp() throws Exception {
        try (LogCapture log = LogCapture.start(); ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri())
                .withListenerTls(new ProxyConfig.ListenerTls(certs.serverCert, certs.serverKey, null)))) {
            assertTrue(proxy.connectionString().contains("tls=true"), proxy.connectionString());
            try (MongoClient plain = driver(proxy.connectionString().replace("tls=true", "tls=false"), null, 2)) {
                assertThrows(MongoTimeoutException.class, () -> plain.getDatabase("admin").runCommand(new Document("ping", 1)));
            }
            String line = log.awaitContaining(Duration.ofSeconds(5), "did not speak TLS");
            assertTrue(line.matches("closing client 127\\.0\\.0\\.1:\\d+ on member \\S+: .*"), line);
            assertTrue(line.endsWith(": it did not speak TLS (plaintext on a TLS connection); this listener takes TLS only: connect with "
                    + WHERE_APPS_TURN_TLS_ON), line);
            try (MongoClient tls = driver(proxy.connectionString(), certs.clientContext(false), 15)) {
                insertAndFind(tls, UpstreamLane.freshDatabaseName("tlsAfterPlain"));
            }
        }
    }

    /** A driver on {@code uri}; over TLS with {@code tls} (whatever the URI says), else as the URI says. */
    private static MongoClient driver(String uri, SSLContext tls, int selectionSeconds) {
        MongoClientSettings.Builder settings = MongoClientSettings.builder().applyConnectionString(new ConnectionString(uri))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(selectionSeconds, TimeUnit.SECONDS));
        if (tls != null) {
            settings.applyToSslSettings(b -> b.enabled(true).context(tls));
        }
        return MongoClients.create(settings.build());
    }

    private static void insertAndFind(MongoClient client, String database) {
        MongoCollection<Document> collection = client.getDatabase(database).getCollection("c");
        collection.insertOne(new Document("_id", 1));
        assertEquals(1, collection.countDocuments(), "the listener serves the apps that match it");
    }
}
