package io.blackpipe.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.connection.ServerType;
import com.mongodb.event.ConnectionPoolClearedEvent;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.SdamEvents;
import io.blackpipe.testing.UpstreamLane;
import java.time.Duration;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * An injected state-change error with its default topologyVersion (newer than the member's), met by the real driver
 * in its default streaming monitoring: SDAM marks the member Unknown every time, and a shutdown code clears the pool.
 * The proxy told the member's held hellos of the newer topologyVersion as it made the error: the driver's monitor
 * heard it first as often as not, the error then read as stale and was ignored (an auditor saw 91 clear the pool in 2
 * runs of 8). The hellos now hear a moment after the error, as after a real stepdown.
 */
class StateChangeErrorSdamDriverTest {
    private static final int ROUNDS = 8;
    private static final Duration WAIT = Duration.ofSeconds(20);

    @ParameterizedTest(name = "{0}")
    @CsvSource({"ShutdownInProgress, true", "NotWritablePrimary, false", "InterruptedAtShutdown, true"})
    void everyInjectedStateChangeErrorMarksTheMemberUnknown(String error, boolean clearsThePool) throws Exception {
        SdamEvents sdam = new SdamEvents();
        List<ServerType> changes = sdam.changes;
        List<ConnectionPoolClearedEvent> cleared = sdam.cleared;
        String db = UpstreamLane.freshDatabaseName("sdamrace");
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()));
             MongoClient client = MongoClients.create(sdam.settings(proxy.connectionString()).retryWrites(true).build());
             MongoClient direct = UpstreamLane.directClient()) {
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            c.insertOne(new Document("_id", 0));
            for (int round = 1; round <= ROUNDS; round++) {
                int changesBefore = changes.size();
                int clearedBefore = cleared.size();
                proxy.rules().put(proxy.ruleParser().parse("r", BsonDocument.parse("{configureFailPoint: 'failCommand', mode: {times: 1},"
                        + " data: {failCommands: ['insert'], error: '" + error + "'}}")));
                c.insertOne(new Document("_id", round)); // the error, then the driver's retry on the primary it finds again
                String what = error + ", round " + round + " of " + ROUNDS + ": descriptions " + changes.subList(changesBefore, changes.size());
                Await.until(WAIT, "the primary again after " + what, () -> changes.size() > changesBefore
                        && changes.get(changes.size() - 1) == ServerType.REPLICA_SET_PRIMARY);
                assertTrue(changes.subList(changesBefore, changes.size()).contains(ServerType.UNKNOWN), "marked Unknown: " + what);
                assertEquals(clearsThePool ? 1 : 0, cleared.size() - clearedBefore, "pools cleared: " + what);
            }
            assertEquals(ROUNDS + 1, direct.getDatabase(db).getCollection("c").countDocuments(), "each insert once, after its retry");
        }
    }
}
