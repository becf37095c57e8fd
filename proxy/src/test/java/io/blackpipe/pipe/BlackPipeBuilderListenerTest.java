package io.blackpipe.pipe;

import static com.mongodb.client.model.Filters.eq;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoTimeoutException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.blackpipe.BlackPipe;
import io.blackpipe.BlackPipeBuilder;
import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.topology.MemberAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The embedded API's listener options, tls(), tlsClientCa() and maxConnections(), seen by the real
 * driver and raw sockets. In this package (not next to BlackPipeApiTest) to share TlsTest's
 * certificates and RawClient; it only uses the public API, as a user's test would.
 */
class BlackPipeBuilderListenerTest {
    @TempDir
    static Path dir;
    private static TestCertificates certs;

    @BeforeAll
    static void makeCertificates() throws Exception {
        certs = TestCertificates.generate(dir);
    }

    private static BlackPipeBuilder builder() {
        return BlackPipe.builder().upstream(UpstreamLane.uri());
    }

    private static MongoClient driver(BlackPipe blackPipe, SSLContext tls, int selectionSeconds) {
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(blackPipe.connectionString()))
                // tls == null: a plaintext driver, whatever the connection string says
                .applyToSslSettings(b -> b.enabled(tls != null).context(tls))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(selectionSeconds, TimeUnit.SECONDS))
                .build());
    }

    private static void insertAndFind(MongoClient client) {
        MongoCollection<Document> collection = client.getDatabase(UpstreamLane.freshDatabaseName("builderTls")).getCollection("c");
        collection.insertOne(new Document("_id", 1).append("over", "tls"));
        Document found = collection.find(eq("_id", 1)).first();
        assertNotNull(found, "the document inserted over TLS must be found");
        assertEquals("tls", found.getString("over"));
    }

    private static void assertNotThrough(MongoClient client, String why) {
        assertThrows(MongoTimeoutException.class, () -> client.getDatabase("admin").runCommand(new Document("ping", 1)), why);
    }

    @Test
    void tlsListenersServeATlsDriverAndNotAPlaintextOne() throws Exception {
        try (BlackPipe blackPipe = builder().tls(certs.serverCert, certs.serverKey).start()) {
            assertTrue(blackPipe.connectionString().contains("tls=true"), blackPipe.connectionString());
            try (MongoClient tls = driver(blackPipe, certs.clientContext(false), 15)) {
                insertAndFind(tls);
            }
            try (MongoClient plaintext = driver(blackPipe, null, 2)) {
                assertNotThrough(plaintext, "a plaintext driver must not get through a TLS listener");
            }
        }
    }

    @Test
    void aClientCaMakesTheClientCertificateRequired() throws Exception {
        try (BlackPipe blackPipe = builder().tls(certs.serverCert, certs.serverKey).tlsClientCa(certs.ca).start()) {
            try (MongoClient anonymous = driver(blackPipe, certs.clientContext(false), 2)) {
                assertNotThrough(anonymous, "a driver without a client certificate must not get through");
            }
            try (MongoClient withCertificate = driver(blackPipe, certs.clientContext(true), 15)) {
                insertAndFind(withCertificate);
            }
        }
    }

    @Test
    void maxConnectionsClosesTheConnectionsBeyondTheLimit() throws Exception {
        List<RawClient> held = new ArrayList<>();
        try (BlackPipe blackPipe = builder().maxConnections(2).start()) {
            MemberAddress member = blackPipe.server().members().get(0).advertised();
            for (int i = 0; i < 2; i++) {
                RawClient client = RawClient.connect(member);
                held.add(client);
                assertHelloAnswered(client);
            }
            try (RawClient third = RawClient.connect(member)) {
                third.awaitClosedByPeer(Duration.ofSeconds(2));
            }
            assertEquals(2, blackPipe.server().limitedConnections());
            for (RawClient client : held) {
                assertHelloAnswered(client); // the two within the limit are unaffected
            }
        } finally {
            for (RawClient client : held) {
                client.close();
            }
        }
    }

    @Test
    void badOptionsAreRefusedNamingTheBuilderMethod() {
        IllegalArgumentException negative = assertThrows(IllegalArgumentException.class, () -> builder().maxConnections(-1));
        assertEquals("maxConnections: -1 must be 0 (unlimited) or more", negative.getMessage());
        assertEquals("simulateMembers: 1 must be from 2 to 7 (0 turns it off)",
                assertThrows(IllegalArgumentException.class, () -> builder().simulateMembers(1)).getMessage());
        assertEquals("adminPort: 70000 is out of range (-1 disables, 0 picks a free port)",
                assertThrows(IllegalArgumentException.class, () -> builder().adminPort(70000)).getMessage());

        Path missing = dir.resolve("no-such.pem");
        IllegalArgumentException unreadable = assertThrows(IllegalArgumentException.class, () -> builder().tls(missing, certs.serverKey));
        assertEquals("tls: cert: " + missing + " is not a readable file", unreadable.getMessage());
        IllegalArgumentException noKey = assertThrows(IllegalArgumentException.class, () -> builder().tls(certs.serverCert, null));
        assertTrue(noKey.getMessage().startsWith("tls: key:"), noKey.getMessage());

        IllegalArgumentException caAlone = assertThrows(IllegalArgumentException.class, () -> builder().tlsClientCa(certs.ca).start());
        assertTrue(caAlone.getMessage().startsWith("tlsClientCa: needs tls(cert, key)"), caAlone.getMessage());
        assertFalse(caAlone.getMessage().contains("--"), "the builder's errors name builder methods: " + caAlone.getMessage());
    }

    private static void assertHelloAnswered(RawClient client) throws Exception {
        byte[] reply = client.roundTrip(TlsTest.hello(42));
        BsonDocument body = ScriptedMongodWire.decodeDocument(reply, 21, reply.length - 21);
        assertEquals(1.0, body.getNumber("ok").doubleValue(), "hello through the proxy: " + body.toJson());
    }
}
