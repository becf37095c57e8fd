package io.blackpipe.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoCredential;
import com.mongodb.MongoSecurityException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.testing.ScriptedScramServer.Login;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * The scripted access control against the real MongoDB Java driver, directly and through the
 * proxy: the driver's SCRAM-SHA-1 and SCRAM-SHA-256 (explicit, negotiated, speculative)
 * authenticate, a wrong password or a forged server signature fails as against mongod. This is
 * what makes the control client's success against the same server mean something.
 */
class ScriptedScramServerTest {
    private static final String PASSWORD = "p@ss:w/rd\u00AD%";  // URL-special characters, and a soft hyphen SASLprep drops

    private static ScriptedScramServer users() {
        return ScriptedScramServer.builder()
                .user("admin", "alice", PASSWORD)
                .user("admin", "old", "sha1only", ScriptedScramServer.SHA_1)
                .user("app", "carol", "carolpw", ScriptedScramServer.SHA_256)
                .build();
    }

    private static MongoClient client(String uri, MongoCredential credential) {
        MongoClientSettings.Builder settings = MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(uri))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(3, TimeUnit.SECONDS));
        if (credential != null) {
            settings.credential(credential);
        }
        return MongoClients.create(settings.build());
    }

    /** An insert and a find: commands that need an authenticated connection. */
    private static void insertAndFind(MongoClient client, String id) {
        MongoCollection<Document> collection = client.getDatabase("test").getCollection("auth");
        collection.insertOne(new Document("_id", id));
        assertEquals(id, collection.find(new Document("_id", id)).first().getString("_id"));
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"SCRAM-SHA-256", "SCRAM-SHA-1"})
    void theDriverAuthenticatesWithAnExplicitMechanismDirectlyAndThroughTheProxy(String mechanism) throws Exception {
        ScriptedScramServer users = users();
        MongoCredential credential = mechanism.equals("SCRAM-SHA-1")
                ? MongoCredential.createScramSha1Credential("alice", "admin", PASSWORD.toCharArray())
                : MongoCredential.createScramSha256Credential("alice", "admin", PASSWORD.toCharArray());
        try (ScriptedMongod server = ScriptedMongod.builder().accessControl(users).start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(server.uri("replicaSet=" + ScriptedMongod.SET_NAME)))) {
            try (MongoClient direct = client(server.uri(), credential)) {
                insertAndFind(direct, "direct-" + mechanism);
            }
            int before = users.logins().size();
            try (MongoClient through = client(proxy.connectionString(), credential)) {
                insertAndFind(through, "proxied-" + mechanism);
            }
            List<Login> logins = users.logins();
            assertTrue(logins.size() > before, "the driver authenticated through the proxy too: " + logins);
            assertTrue(logins.stream().allMatch(l -> l.ok() && l.user().equals("alice") && l.mechanism().equals(mechanism)), logins::toString);
            assertEquals(2, server.documents("test", "auth").size());
            assertEquals(List.of(), server.errors());
        }
    }

    @Test
    void negotiationPicksSha256WhenListedAndSha1Otherwise() throws Exception {
        ScriptedScramServer users = users();
        try (ScriptedMongod server = ScriptedMongod.builder().accessControl(users).start()) {
            try (MongoClient both = client(server.uri().replace("mongodb://", "mongodb://alice:" + encode(PASSWORD) + "@"), null)) {
                insertAndFind(both, "negotiated-both");
            }
            assertEquals(List.of(new Login("admin", "alice", "SCRAM-SHA-256", true, true)), users.logins(),
                    "negotiated SHA-256, speculatively in the handshake hello");
            try (MongoClient sha1 = client(server.uri().replace("mongodb://", "mongodb://old:sha1only@"), null)) {
                insertAndFind(sha1, "negotiated-sha1");
            }
            Login last = users.logins().get(users.logins().size() - 1);
            assertEquals(new Login("admin", "old", "SCRAM-SHA-1", false, true), last,
                    "saslSupportedMechs listed only SHA-1: the speculative SHA-256 start is dropped, SHA-1 follows");
            try (MongoClient app = client("mongodb://carol:carolpw@" + server.address() + "/app?directConnection=true", null)) {
                insertAndFind(app, "source-from-the-path");
            }
            assertEquals(new Login("app", "carol", "SCRAM-SHA-256", true, true), users.logins().get(users.logins().size() - 1));
        }
    }

    @Test
    void aWrongPasswordAUserWithoutTheMechanismAndAnUnknownUserFailAsAgainstMongod() throws Exception {
        ScriptedScramServer users = users();
        try (ScriptedMongod server = ScriptedMongod.builder().accessControl(users).start()) {
            for (MongoCredential wrong : List.of(
                    MongoCredential.createScramSha256Credential("alice", "admin", "wrong".toCharArray()),
                    MongoCredential.createScramSha1Credential("alice", "admin", "wrong".toCharArray()),
                    MongoCredential.createScramSha256Credential("old", "admin", "sha1only".toCharArray()),
                    MongoCredential.createScramSha256Credential("nobody", "admin", "x".toCharArray()))) {
                try (MongoClient client = client(server.uri(), wrong)) {
                    MongoSecurityException e = assertThrows(MongoSecurityException.class, () -> insertAndFind(client, "never"));
                    MongoCommandException refusal = (MongoCommandException) e.getCause();
                    assertEquals(18, refusal.getErrorCode(), () -> wrong + ": " + refusal);
                    assertEquals("Authentication failed.", refusal.getErrorMessage());
                }
            }
            assertEquals(List.of(), server.documents("test", "auth"));
        }
    }

    @Test
    void anUnauthenticatedConnectionMayPingButNotWrite() throws Exception {
        try (ScriptedMongod server = ScriptedMongod.builder().accessControl(users()).start();
             MongoClient client = client(server.uri(), null)) {
            assertEquals(1.0, client.getDatabase("admin").runCommand(new Document("ping", 1)).get("ok", Number.class).doubleValue());
            MongoCommandException e = assertThrows(MongoCommandException.class, () -> insertAndFind(client, "x"));
            assertEquals(13, e.getErrorCode());
            assertEquals("Unauthorized", e.getErrorCodeName());
            assertTrue(e.getErrorMessage().contains("Command insert requires authentication"), e.getErrorMessage());
            MongoCommandException stepDown = assertThrows(MongoCommandException.class,
                    () -> client.getDatabase("admin").runCommand(new Document("replSetStepDown", 10)));
            assertEquals(13, stepDown.getErrorCode());
            assertEquals(List.of(), server.stepDowns());
        }
    }

    @Test
    void theExtraEmptyRoundOfServersBefore44WorksWithTheDriver() throws Exception {
        ScriptedScramServer users = ScriptedScramServer.builder().user("admin", "alice", "pw").withoutSkipEmptyExchange().build();
        try (ScriptedMongod server = ScriptedMongod.builder().accessControl(users).start();
             MongoClient client = client(server.uri(), MongoCredential.createScramSha256Credential("alice", "admin", "pw".toCharArray()))) {
            insertAndFind(client, "three-rounds");
            long emptyRounds = server.commandsReceived("saslContinue").stream()
                    .filter(f -> f.document().getBinary("payload").getData().length == 0).count();
            assertTrue(emptyRounds >= 1, "the driver sent the empty round");
        }
    }

    @Test
    void aForgedServerSignatureOrTooFewIterationsIsRefusedByTheDriver() throws Exception {
        ScriptedScramServer forging = ScriptedScramServer.builder().user("admin", "alice", "pw").forgingServerSignatures().build();
        ScriptedScramServer weak = ScriptedScramServer.builder().user("admin", "alice", "pw").iterations(1000, 1000).build();
        assertEquals("Server signature was invalid.", driverAuthenticationFailure(forging));
        assertEquals("Invalid iteration count.", driverAuthenticationFailure(weak));
    }

    /** The root cause of the driver's MongoSecurityException; no command may have run. */
    private static String driverAuthenticationFailure(ScriptedScramServer users) throws Exception {
        try (ScriptedMongod server = ScriptedMongod.builder().accessControl(users).start();
             MongoClient client = client(server.uri(), MongoCredential.createScramSha256Credential("alice", "admin", "pw".toCharArray()))) {
            MongoSecurityException e = assertThrows(MongoSecurityException.class, () -> insertAndFind(client, "never"));
            assertEquals(List.of(), server.documents("test", "auth"), "no command ran after the refused authentication");
            Throwable root = e;
            while (root.getCause() != null) {
                root = root.getCause();
            }
            return root.getMessage();
        }
    }

    static String encode(String s) {
        return java.net.URLEncoder.encode(s, java.nio.charset.StandardCharsets.UTF_8).replace("+", "%20");
    }
}
