package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoTimeoutException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.topology.MemberState;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * An outage and a blackhole of one member are two faults, seen by the real driver: a scenario that
 * ends takes away only its own, and the driver meets the operator's one that stays (a blackhole's
 * silence where the member was refusing, or refused where it was silent) until a restore.
 * ScenarioEndLeavesOthersFaultsTest covers every order at the listener.
 */
class FaultIndependenceDriverTest {
    private ProxyServer proxy;
    private MemberListener primary;
    private MongoClient direct;
    private final List<MongoClient> clients = new ArrayList<>();
    private String db;

    @BeforeEach
    void start() {
        proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()));
        primary = proxy.members().stream().filter(m -> proxy.memberState(m.upstream()).role() == MemberState.Role.PRIMARY)
                .map(m -> proxy.listener(m.upstream())).findFirst().orElseThrow();
        direct = UpstreamLane.directClient();
        db = UpstreamLane.freshDatabaseName("independence");
        direct.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1));
    }

    @AfterEach
    void stop() {
        clients.forEach(MongoClient::close);
        direct.close();
        proxy.close();
    }

    /** A new driver client through the proxy: it must find the primary within 1.5 s (its monitor's hello). */
    private MongoCollection<Document> newClient() {
        MongoClient client = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(proxy.connectionString()))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(1_500, TimeUnit.MILLISECONDS))
                .applyToSocketSettings(b -> b.connectTimeout(1_000, TimeUnit.MILLISECONDS).readTimeout(1_000, TimeUnit.MILLISECONDS))
                .build());
        clients.add(client);
        return client.getDatabase(db).getCollection("c");
    }

    /** Why a new client found no server, as its monitor last saw the member. */
    private String whyNoServer() {
        MongoCollection<Document> c = newClient();
        return assertThrows(MongoTimeoutException.class, () -> c.find().first(), "the member is faulted").getMessage();
    }

    private void startScenario(String step) {
        proxy.scenarios().start(proxy.scenarioLoader().parse("test", "name: s\ndescription: d\ntimeline:\n  - at: 0s\n    " + step + "\n"));
    }

    @Test
    void theOperatorsBlackholeOutlivesTheScenariosOutage() throws Exception {
        startScenario("outage: {member: primary}");
        assertTrue(whyNoServer().contains("Connection refused"), "the outage refuses");
        proxy.blackhole("primary", 0);

        proxy.scenarios().stop(); // ends its outage: the member is listening again, into the operator's blackhole
        String why = whyNoServer();
        assertTrue(why.contains("MongoSocketReadTimeoutException") && !why.contains("Connection refused"),
                "accepted, never answered: " + why);
        assertFalse(primary.down());
        assertTrue(primary.blackholed());

        proxy.restore("primary");
        assertEquals(1, newClient().find().first().getInteger("_id"));
    }

    @Test
    void theOperatorsOutageOutlivesTheScenariosBlackhole() throws Exception {
        startScenario("blackhole: {member: primary}");
        assertTrue(whyNoServer().contains("MongoSocketReadTimeoutException"), "the blackhole accepts and stays silent");
        proxy.outage("primary", 0);

        proxy.scenarios().stop(); // ends its blackhole: the operator's outage still refuses
        String why = whyNoServer();
        assertTrue(why.contains("Connection refused"), "refused, not silent: " + why);
        assertFalse(primary.blackholed());
        assertTrue(primary.down());

        proxy.restore("primary");
        assertEquals(1, newClient().find().first().getInteger("_id"));
    }
}
