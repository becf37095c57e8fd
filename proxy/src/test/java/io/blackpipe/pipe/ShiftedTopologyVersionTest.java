package io.blackpipe.pipe;

import static io.blackpipe.pipe.ScriptedProxy.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoNotPrimaryException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.connection.ServerDescription;
import com.mongodb.connection.ServerType;
import com.mongodb.event.ConnectionPoolClearedEvent;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.SdamEvents;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * Once the proxy has shifted a member's topologyVersion counter (after an injected state-change
 * error), the member's own state-change errors carry the shifted counter too: SDAM marks a server
 * Unknown only on an error newer than what it holds, so an unshifted real stepdown error would be
 * ignored as stale and the driver would keep writing to the old primary.
 *
 * <p>The member is a second blackpipe (inner) in front of the scripted mongod: its injected
 * NotWritablePrimary with a newer topologyVersion, and its hellos carrying that counter from then
 * on, are what a real 4.4+ member sends after a stepdown. The outer proxy is the one under test.
 */
class ShiftedTopologyVersionTest {
    private static ServerDescription only(MongoClient client) {
        return client.getClusterDescription().getServerDescriptions().get(0);
    }

    /**
     * A driver through the proxy that polls, with no scheduled heartbeat during a test (only errors
     * make it re-check), recording its server's description changes and pool clears.
     */
    private static MongoClient client(ProxyServer proxy, SdamEvents sdam) {
        return MongoClients.create(sdam.settings(proxy.connectionString()
                + "&retryWrites=false&serverMonitoringMode=poll&heartbeatFrequencyMS=120000").build());
    }

    private static void notWritablePrimaryOnce(ProxyServer proxy) {
        proxy.rules().put(proxy.ruleParser().parse("nwp", BsonDocument.parse("{configureFailPoint: 'failCommand',"
                + " mode: {times: 1}, data: {failCommands: ['insert'], error: 'NotWritablePrimary'}}")));
    }

    @Test
    void aMembersOwnStateChangeErrorAfterAnInjectedOneCarriesTheShiftedCounterAndMarksItUnknown() throws Exception {
        SdamEvents sdam = new SdamEvents();
        List<ServerType> changes = sdam.changes;
        try (ScriptedMongod scripted = ScriptedMongod.start();
             ProxyServer member = ScriptedProxy.start(scripted);
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(member.connectionString()));
             MongoClient client = client(proxy, sdam)) {
            MongoCollection<Document> c = client.getDatabase("test").getCollection("c");
            c.insertOne(new Document("_id", 0));
            long start = only(client).getTopologyVersion().getCounter();

            notWritablePrimaryOnce(proxy); // the error says start + 1; the member's hellos, as it is still, start + 2
            assertThrows(MongoNotPrimaryException.class, () -> c.insertOne(new Document("_id", 1)));
            // the listener hears of a change after the description shows it: wait for both, or the re-check's
            // PRIMARY could land in the list after 'before' and be read as the next error's verdict
            awaitTrue("the driver re-checked after the injected error, and its listener heard Unknown then Primary",
                    () -> only(client).getType() == ServerType.REPLICA_SET_PRIMARY && changes.contains(ServerType.UNKNOWN)
                            && changes.lastIndexOf(ServerType.REPLICA_SET_PRIMARY) > changes.lastIndexOf(ServerType.UNKNOWN));
            assertEquals(start + 2, only(client).getTopologyVersion().getCounter());
            int before = changes.size();

            // the member itself steps down (a proxy too: its error says its counter + 1, its hellos + 2)
            notWritablePrimaryOnce(member);
            MongoNotPrimaryException own = assertThrows(MongoNotPrimaryException.class, () -> c.insertOne(new Document("_id", 2)));
            assertEquals(start + 3, own.getResponse().getDocument("topologyVersion").getNumber("counter").longValue(),
                    "the member's own counter (start + 1) plus the proxy's shift (2): " + own.getResponse().toJson());
            BsonDocument hello = client.getDatabase("admin").runCommand(new BsonDocument("hello", new BsonInt32(1)), BsonDocument.class);
            assertEquals(start + 4, hello.getDocument("topologyVersion").getNumber("counter").longValue(),
                    "its hellos, shifted alike: the member's (start + 2) plus the proxy's (2)");
            assertEquals(ServerType.UNKNOWN, changes.get(before), "newer than what the driver held: Unknown, then re-checked; "
                    + changes.subList(before, changes.size()));
        }
    }

    /**
     * What the driver does with each topologyVersion mode, as SDAM says: an error no newer than
     * what it holds is stale and ignored; a newer one marks the member Unknown, and a shutdown
     * code (or one without a topologyVersion) clears the pool too.
     */
    @Test
    void eachTopologyVersionModeGetsTheDriversSdamResponse() throws Exception {
        SdamEvents sdam = new SdamEvents();
        List<ServerType> changes = sdam.changes;
        List<ConnectionPoolClearedEvent> cleared = sdam.cleared;
        try (ScriptedMongod scripted = ScriptedMongod.start();
             ProxyServer proxy = ScriptedProxy.start(scripted);
             MongoClient client = client(proxy, sdam)) {
            MongoCollection<Document> c = client.getDatabase("test").getCollection("c");
            c.insertOne(new Document("_id", 0));
            int id = 1;
            // error, topologyVersion mode, times marked Unknown, pools cleared
            for (String[] step : new String[][] {{"ShutdownInProgress", "current", "0", "0"}, {"NotWritablePrimary", "current", "0", "0"},
                    {"NotWritablePrimary", "newer", "1", "0"}, {"ShutdownInProgress", "newer", "1", "1"},
                    {"InterruptedAtShutdown", "omit", "1", "1"}}) {
                String what = String.join(" / ", step);
                int changesBefore = changes.size();
                int clearedBefore = cleared.size();
                proxy.rules().put(proxy.ruleParser().parse("r", BsonDocument.parse("{configureFailPoint: 'failCommand', mode: {times: 1},"
                        + " data: {failCommands: ['insert'], error: '" + step[0] + "', topologyVersion: '" + step[1] + "'}}")));
                assertThrows(MongoCommandException.class, () -> c.insertOne(new Document("_id", 99)), what);
                // the description first, then its listener: whatever it heard since the step ends in Primary
                awaitTrue("primary again after " + what, () -> only(client).getType() == ServerType.REPLICA_SET_PRIMARY
                        && (changes.size() == changesBefore || changes.get(changes.size() - 1) == ServerType.REPLICA_SET_PRIMARY));
                Thread.sleep(200); // a description change still under way would show now
                long unknowns = changes.subList(changesBefore, changes.size()).stream().filter(t -> t == ServerType.UNKNOWN).count();
                assertEquals(Long.parseLong(step[2]), unknowns, what + ": times marked Unknown");
                assertEquals(Integer.parseInt(step[3]), cleared.size() - clearedBefore, what + ": pools cleared");
                c.insertOne(new Document("_id", id++));
            }
        }
    }
}
