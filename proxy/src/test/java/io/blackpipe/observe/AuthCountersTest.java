package io.blackpipe.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.ScriptedScramServer;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * An app that authenticates: the driver's handshake runs saslStart/saslContinue (or, speculative,
 * inside the hello) on every new connection before any of the app's commands, and reports none of
 * them to its CommandListener. The proxy's application-command counters and history must agree
 * with the driver: what the app sent, not the handshake.
 */
class AuthCountersTest {
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {ScriptedScramServer.SHA_256, ScriptedScramServer.SHA_1})
    void theAuthenticationConversationIsHandshakeNotApplicationCommands(String mechanism) throws Exception {
        ScriptedScramServer users = ScriptedScramServer.builder().user("admin", "alice", "secret", mechanism).build();
        DriverEvents driver = new DriverEvents();
        try (ScriptedMongod scripted = ScriptedMongod.builder().accessControl(users).start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(scripted.uri("replicaSet=" + ScriptedMongod.SET_NAME)))) {
            String base = proxy.connectionString().replace("mongodb://", "mongodb://alice:secret@");
            try (MongoClient client = MongoClients.create(MongoClientSettings.builder()
                    .applyConnectionString(new ConnectionString(base + (base.contains("?") ? "&" : "?") + "authMechanism=" + mechanism))
                    .applicationName("bp-auth")
                    .applyToClusterSettings(b -> b.serverSelectionTimeout(10, TimeUnit.SECONDS))
                    .addCommandListener(driver)
                    .build())) {
                MongoCollection<Document> c = client.getDatabase("auth").getCollection("c");
                c.insertOne(new Document("_id", 1));
                assertEquals(1, c.find(new Document("_id", 1)).into(new java.util.ArrayList<>()).size());
            }
            assertTrue(users.logins().stream().anyMatch(ScriptedScramServer.Login::ok), "the driver authenticated: " + users.logins());
            CountersMatchDriverTest.awaitEveryAttemptEnded(proxy.registry());
            assertEquals(driver.commandNames(), CountersMatchDriverTest.countedCommands(proxy.registry()),
                    "the proxy's application commands are the driver's");
            List<String> historyCommands = proxy.history().recent().stream().map(HistoryEntry::command).distinct().sorted().toList();
            assertEquals(List.copyOf(driver.commandNames()), historyCommands, "and so are the history's");
            assertTrue(Meters.sum(proxy.registry(), "blackpipe.monitoring.commands", "command", "saslContinue") > 0,
                    "counted apart, with the hellos");
        }
    }

    @org.junit.jupiter.api.Test
    void aRuleOnTheAuthenticationStillFiresAndItsFaultIsCounted() throws Exception {
        ScriptedScramServer users = ScriptedScramServer.builder().user("admin", "alice", "secret").build();
        DriverEvents driver = new DriverEvents();
        try (ScriptedMongod scripted = ScriptedMongod.builder().accessControl(users).start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(scripted.uri("replicaSet=" + ScriptedMongod.SET_NAME)))) {
            CountersMatchDriverTest.rule(proxy, "{configureFailPoint: 'failCommand', mode: {times: 1}, "
                    + "data: {failCommands: ['saslContinue'], closeConnection: true, appName: 'bp-auth-fault'}}");
            String base = proxy.connectionString().replace("mongodb://", "mongodb://alice:secret@");
            try (MongoClient client = MongoClients.create(MongoClientSettings.builder()
                    .applyConnectionString(new ConnectionString(base))
                    .applicationName("bp-auth-fault")
                    .applyToClusterSettings(b -> b.serverSelectionTimeout(10, TimeUnit.SECONDS))
                    .addCommandListener(driver)
                    .build())) {
                MongoCollection<Document> c = client.getDatabase("auth").getCollection("c");
                try {
                    c.insertOne(new Document("_id", 1)); // the first connection's handshake fails; the driver may retry
                } catch (com.mongodb.MongoException expected) {
                    // what the driver makes of it is not this test's subject
                }
                c.insertOne(new Document("_id", 2));
            }
            assertEquals(1, Meters.faults(proxy.registry(), "closeConnection", "saslContinue"), "the rule fired on the handshake");
            CountersMatchDriverTest.awaitEveryAttemptEnded(proxy.registry());
            assertEquals(driver.commandNames(), CountersMatchDriverTest.countedCommands(proxy.registry()));
        }
    }
}
