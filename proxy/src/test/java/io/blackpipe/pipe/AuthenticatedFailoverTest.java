package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.blackpipe.BlackPipe;
import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.ScriptedMongod.StepDownRequest;
import io.blackpipe.testing.ScriptedMongodFrame;
import io.blackpipe.testing.ScriptedScramServer;
import io.blackpipe.topology.MemberAddress;
import io.blackpipe.topology.MemberState;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * failover against a replica set with access control: two scripted members that refuse
 * replSetStepDown to an unauthenticated connection (13 Unauthorized, as mongod --auth) and share
 * SCRAM users. The stepdown must arrive authenticated as the upstream URI's user, with the
 * mechanism negotiated (SCRAM-SHA-256 when listed, else SCRAM-SHA-1) or named by authMechanism;
 * a wrong password fails the failover with a message naming the user, database, mechanism and
 * the server's reason, and the proxy keeps serving.
 */
class AuthenticatedFailoverTest {
    /** '@', ':', '/', '%' and a space, URL-encoded in the URI. */
    private static final String PASSWORD = "p@ss:w/rd 100%";

    /** A primary and a secondary that share {@code users}. */
    private record ReplicaSet(ScriptedMongod primary, ScriptedMongod secondary) implements AutoCloseable {
        static ReplicaSet start(ScriptedScramServer users) throws Exception {
            ScriptedMongod primary = ScriptedMongod.builder().accessControl(users).start();
            ScriptedMongod secondary = ScriptedMongod.builder().accessControl(users).secondary().primary(primary.address()).start();
            List<String> hosts = List.of(primary.address(), secondary.address());
            primary.setAdvertisedHosts(hosts);
            secondary.setAdvertisedHosts(hosts);
            return new ReplicaSet(primary, secondary);
        }

        /** mongodb://[userInfo@]primary/[path]?replicaSet=...[&options] */
        String uri(String userInfo, String path, String options) {
            return "mongodb://" + (userInfo == null ? "" : userInfo + "@") + primary.address() + "/" + path
                    + "?replicaSet=" + ScriptedMongod.SET_NAME + (options.isEmpty() ? "" : "&" + options);
        }

        /** The control client's authentication conversation, as the primary received it. */
        List<BsonDocument> saslStarts() {
            return primary.commandsReceived("saslStart").stream().map(ScriptedMongodFrame::document).toList();
        }

        @Override
        public void close() {
            secondary.close();
            primary.close();
        }
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    private static ScriptedScramServer alice(String... mechanisms) {
        return ScriptedScramServer.builder().user("admin", "alice", PASSWORD, mechanisms).build();
    }

    private static MongoClient driver(String uri) {
        return MongoClients.create(MongoClientSettings.builder().applyConnectionString(new ConnectionString(uri))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(10, TimeUnit.SECONDS)).build());
    }

    @Test
    void failoverStepsThePrimaryDownAuthenticatedAsTheUrisUserWithNegotiatedScramSha256() throws Exception {
        try (ReplicaSet set = ReplicaSet.start(alice());
             LogCapture log = LogCapture.start();
             BlackPipe blackPipe = BlackPipe.start(set.uri("alice:" + encode(PASSWORD), "", ""))) {
            assertEquals(List.of(), set.primary().stepDowns());
            blackPipe.failover();

            assertEquals(List.of(new StepDownRequest("alice@admin", "SCRAM-SHA-256")), set.primary().stepDowns(),
                    "the primary obeyed one replSetStepDown, on a connection authenticated as alice");
            assertEquals(ScriptedMongod.Role.SECONDARY, set.primary().role());
            assertEquals(List.of(), set.secondary().stepDowns());
            BsonDocument start = set.saslStarts().get(0);
            assertEquals("SCRAM-SHA-256", start.getString("mechanism").getValue());
            assertEquals("admin", start.getString("$db").getValue());
            assertTrue(start.getDocument("options").getBoolean("skipEmptyExchange").getValue());
            assertTrue(set.primary().commandsReceived("hello").stream()
                    .anyMatch(f -> "admin.alice".equals(f.document().getString("saslSupportedMechs", null) == null ? null
                            : f.document().getString("saslSupportedMechs").getValue())), "the mechanism was negotiated");
            log.awaitContaining(Duration.ofSeconds(5), "failover: asking primary " + set.primary().address(),
                    "authenticated as 'alice' on admin (mechanism negotiated)");
            assertTrue(log.messages().stream().noneMatch(m -> m.contains(PASSWORD) || m.contains(encode(PASSWORD))),
                    () -> "the password is never logged: " + log.messages());
        }
    }

    @Test
    void negotiationFallsBackToScramSha1WhenTheUserHasOnlySha1Credentials() throws Exception {
        try (ReplicaSet set = ReplicaSet.start(alice(ScriptedScramServer.SHA_1));
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(set.uri("alice:" + encode(PASSWORD), "", "")))) {
            proxy.failover();
            assertEquals(List.of(new StepDownRequest("alice@admin", "SCRAM-SHA-1")), set.primary().stepDowns());
        }
    }

    @Test
    void authMechanismInTheUriIsUsedWithoutNegotiating() throws Exception {
        try (ReplicaSet set = ReplicaSet.start(alice());
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(
                     set.uri("alice:" + encode(PASSWORD), "", "authMechanism=SCRAM-SHA-1")))) {
            proxy.failover();
            assertEquals(List.of(new StepDownRequest("alice@admin", "SCRAM-SHA-1")), set.primary().stepDowns(),
                    "SHA-1 although the user has SHA-256 too");
            assertTrue(set.primary().commandsReceived("hello").stream().noneMatch(f -> f.document().containsKey("saslSupportedMechs")),
                    "nothing to negotiate");
        }
    }

    @Test
    void theUserIsLookedUpInAuthSourceElseTheUrisDatabase() throws Exception {
        ScriptedScramServer users = ScriptedScramServer.builder().user("app", "carol", "carolpw").user("ops", "dan", "danpw").build();
        try (ReplicaSet set = ReplicaSet.start(users);
             ProxyServer fromPath = ProxyServer.start(ProxyConfig.embedded(set.uri("carol:carolpw", "app", "")))) {
            fromPath.failover();
            assertEquals(List.of(new StepDownRequest("carol@app", "SCRAM-SHA-256")), set.primary().stepDowns());
        }
        try (ReplicaSet set = ReplicaSet.start(users);
             ProxyServer fromOption = ProxyServer.start(ProxyConfig.embedded(set.uri("dan:danpw", "app", "authSource=ops")))) {
            fromOption.failover();
            assertEquals(List.of(new StepDownRequest("dan@ops", "SCRAM-SHA-256")), set.primary().stepDowns());
        }
    }

    @Test
    void bothSaslprepFormsOfAPasswordWork() throws Exception {
        // The Authentication spec's SASLprep users: ROMAN NUMERAL NINE with password ROMAN NUMERAL FOUR,
        // reached with the password written "I\u00ADV" (a soft hyphen SASLprep removes).
        ScriptedScramServer users = ScriptedScramServer.builder().user("admin", "\u2168", "\u2163", ScriptedScramServer.SHA_256).build();
        try (ReplicaSet set = ReplicaSet.start(users);
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(set.uri("%E2%85%A8:I%C2%ADV", "admin", "")))) {
            proxy.failover();
            assertEquals(List.of(new StepDownRequest("\u2168@admin", "SCRAM-SHA-256")), set.primary().stepDowns());
        }
    }

    @Test
    void theExtraEmptyRoundOfServersBefore44IsSent() throws Exception {
        ScriptedScramServer users = ScriptedScramServer.builder().user("admin", "alice", PASSWORD).withoutSkipEmptyExchange().build();
        try (ReplicaSet set = ReplicaSet.start(users);
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(set.uri("alice:" + encode(PASSWORD), "", "")))) {
            proxy.failover();
            assertEquals(1, set.primary().stepDowns().size());
            List<ScriptedMongodFrame> continues = set.primary().commandsReceived("saslContinue");
            assertEquals(2, continues.size(), "the proof, then the empty round");
            assertEquals(0, continues.get(1).document().getBinary("payload").getData().length);
        }
    }

    @Test
    void aWrongPasswordFailsTheFailoverClearlyAndTheProxyKeepsServing() throws Exception {
        try (ReplicaSet set = ReplicaSet.start(alice());
             LogCapture log = LogCapture.start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(set.uri("alice:wrong%40pw", "", "")))) {
            IllegalStateException e = assertThrows(IllegalStateException.class, proxy::failover);
            assertEquals("failover: authentication as 'alice' on admin (SCRAM-SHA-256) failed: AuthenticationFailed (18):"
                    + " Authentication failed. (primary " + set.primary().address() + ")", e.getMessage());
            assertFalse(e.getMessage().contains("wrong"), "no password in the message");
            log.awaitContaining(Duration.ofSeconds(5), "failover: authentication as 'alice' on admin (SCRAM-SHA-256) failed");
            assertEquals(List.of(), set.primary().stepDowns());
            assertTrue(set.primary().commandsReceived("replSetStepDown").isEmpty(), "nothing is sent after a failed authentication");
            assertEquals(MemberState.Role.PRIMARY, proxy.memberState(MemberAddress.parse(set.primary().address())).role());

            // The proxy still serves apps, who authenticate end to end with their own (right) password.
            String app = proxy.connectionString().replace("mongodb://", "mongodb://alice:" + encode(PASSWORD) + "@");
            try (MongoClient client = driver(app)) {
                MongoCollection<Document> collection = client.getDatabase("test").getCollection("afterFailedFailover");
                collection.insertOne(new Document("_id", 1));
                assertEquals(1, collection.countDocuments());
            }
        }
    }

    @Test
    void aServerThatCannotSignTheConversationIsNotObeyed() throws Exception {
        ScriptedScramServer impostor = ScriptedScramServer.builder().user("admin", "alice", PASSWORD).forgingServerSignatures().build();
        try (ReplicaSet set = ReplicaSet.start(impostor);
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(set.uri("alice:" + encode(PASSWORD), "", "")))) {
            IllegalStateException e = assertThrows(IllegalStateException.class, proxy::failover);
            assertTrue(e.getMessage().startsWith("failover: authentication as 'alice' on admin (SCRAM-SHA-256) failed:"
                    + " the server's SCRAM-SHA-256 signature does not match"), e.getMessage());
            assertTrue(set.primary().commandsReceived("replSetStepDown").isEmpty());
        }
    }

    @Test
    void withoutCredentialsTheRefusalSaysWhatIsMissing() throws Exception {
        try (ReplicaSet set = ReplicaSet.start(alice());
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(set.uri(null, "", "")))) {
            IllegalStateException e = assertThrows(IllegalStateException.class, proxy::failover);
            assertTrue(e.getMessage().startsWith("failover: replSetStepDown on " + set.primary().address()
                    + " failed: Unauthorized (13): Command replSetStepDown requires authentication"), e.getMessage());
            assertTrue(e.getMessage().contains("the upstream URI has no credentials"), e.getMessage());
            assertEquals(List.of(), set.primary().stepDowns());
            assertTrue(set.saslStarts().isEmpty(), "no credentials, no authentication");
        }
    }

    @Test
    void anUnsupportedMechanismIsNamedAtStartAndFailoverFailsBeforeSendingAnything() throws Exception {
        try (ReplicaSet set = ReplicaSet.start(alice());
             LogCapture log = LogCapture.start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(set.uri("alice:pw", "", "authMechanism=PLAIN")))) {
            String expected = "authMechanism=PLAIN is not supported by blackpipe's control client (used for failover)";
            log.awaitContaining(Duration.ofSeconds(5), "failover will fail: " + expected);
            int connectionsBefore = set.primary().connectionsAccepted();
            IllegalStateException e = assertThrows(IllegalStateException.class, proxy::failover);
            assertTrue(e.getMessage().startsWith("failover: " + expected), e.getMessage());
            assertTrue(set.saslStarts().isEmpty() && set.primary().commandsReceived("replSetStepDown").isEmpty());
            // refreshing roles dials every member (hello only); the stepdown itself dials nobody
            assertTrue(set.primary().connectionsAccepted() - connectionsBefore <= 1);
        }
    }

    @Test
    void credentialsAreNotNeededUnlessTheProxyFailsOver() throws Exception {
        // A URI whose credentials the control client cannot use still proxies (apps authenticate end to end).
        try (ReplicaSet set = ReplicaSet.start(alice());
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(set.uri("alice:pw", "", "authMechanism=GSSAPI")));
             MongoClient client = driver(proxy.connectionString().replace("mongodb://", "mongodb://alice:" + encode(PASSWORD) + "@"))) {
            client.getDatabase("test").getCollection("c").insertOne(new Document("_id", "ok"));
            assertEquals(1, set.primary().documents("test", "c").size());
        }
    }
}
