package io.blackpipe.pipe;

import static io.blackpipe.pipe.ScriptedProxy.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.event.ConnectionPoolClearedEvent;
import com.mongodb.event.ConnectionPoolListener;
import io.blackpipe.testing.ScriptedMongod;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Faults on a member whose monitor streams hello (awaitable hello with exhaustAllowed, 4.4+). */
class StreamedHelloFaultsTest {
    private static final long HEARTBEAT_MILLIS = 3_000;

    /**
     * After an injected state-change error with a newer topologyVersion, a real member has already
     * answered the driver's awaitable hello (a server answers them at once when its topologyVersion
     * changes). The proxy does the same, or the driver would keep the member Unknown until the
     * member's own wait ends (maxAwaitTimeMS, 10 s by default) and the retry would wait that long;
     * the member's own next streamed reply then follows in step.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"NotWritablePrimary", "ShutdownInProgress", "InterruptedDueToReplStateChange"})
    void afterAnInjectedStateChangeErrorTheRetryGoesOnAtOnceAndTheStreamStaysInStep(String error) throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted)) {
            ScriptedProxy.Heartbeats heartbeats = new ScriptedProxy.Heartbeats();
            try (MongoClient client = ScriptedProxy.client(proxy.connectionString()
                    + "&retryWrites=true&heartbeatFrequencyMS=" + HEARTBEAT_MILLIS, heartbeats)) {
                MongoCollection<Document> c = client.getDatabase("test").getCollection("c");
                c.insertOne(new Document("_id", 0));
                awaitTrue("the driver streams hello", () -> scripted.framesReceived(f -> f.exhaustAllowed()).size() >= 1);
                long counter = ScriptedProxy.driverTopologyCounter(client);
                proxy.rules().put(proxy.ruleParser().parse("r", BsonDocument.parse("{configureFailPoint: 'failCommand',"
                        + " mode: {times: 1}, data: {failCommands: ['insert'], error: '" + error + "'}}")));
                int awaitedBefore = heartbeats.awaited().size();

                long start = System.nanoTime();
                c.insertOne(new Document("_id", 1));
                long millis = (System.nanoTime() - start) / 1_000_000;
                assertTrue(millis < HEARTBEAT_MILLIS / 2, "the retried insert took " + millis + " ms: the driver waited for the"
                        + " member's next streamed hello (maxAwaitTimeMS " + HEARTBEAT_MILLIS + ") to leave Unknown");
                assertEquals(counter + 1, ScriptedProxy.driverTopologyCounter(client), "the early answer's counter");

                // the proxy's early answer, then the member's own next streamed reply, chained after it
                awaitTrue(() -> "two more streamed heartbeats; failures: " + heartbeats.failures,
                        () -> heartbeats.awaited().size() >= awaitedBefore + 2 || !heartbeats.failures.isEmpty());
                assertEquals(0, heartbeats.failures.size(), () -> "the stream stayed in step: " + heartbeats.failures);
                assertEquals(counter + 1, ScriptedProxy.driverTopologyCounter(client), "the member's own replies, shifted");
            }
            assertEquals(2, scripted.documents("test", "c").size());
        }
    }

    /**
     * A short blackhole delays the streamed replies, as a healing partition does; none is lost, so
     * the stream goes on in step (each reply answers the one before): no heartbeat fails (the
     * monitor's read timeout is connectTimeoutMS + maxAwaitTimeMS) and no pool is cleared.
     */
    @Test
    void aShortBlackholeDelaysTheStreamWithoutBreakingIt() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted)) {
            ScriptedProxy.Heartbeats heartbeats = new ScriptedProxy.Heartbeats();
            List<ConnectionPoolClearedEvent> cleared = new CopyOnWriteArrayList<>();
            MongoClientSettings settings = MongoClientSettings.builder()
                    .applyConnectionString(new ConnectionString(proxy.connectionString() + "&heartbeatFrequencyMS=500"))
                    .applyToClusterSettings(b -> b.serverSelectionTimeout(15, TimeUnit.SECONDS))
                    .applyToServerSettings(b -> b.addServerMonitorListener(heartbeats))
                    .applyToConnectionPoolSettings(b -> b.addConnectionPoolListener(new ConnectionPoolListener() {
                        @Override
                        public void connectionPoolCleared(ConnectionPoolClearedEvent event) {
                            cleared.add(event);
                        }
                    })).build();
            try (MongoClient client = MongoClients.create(settings)) {
                client.getDatabase("admin").runCommand(new Document("ping", 1));
                awaitTrue("streaming", () -> heartbeats.awaited().size() >= 2);
                proxy.blackhole(ScriptedProxy.advertised(proxy), 1_200);
                Thread.sleep(1_200);
                int afterTheBlackhole = heartbeats.awaited().size();
                awaitTrue(() -> "two more streamed heartbeats; failures: " + heartbeats.failures,
                        () -> heartbeats.awaited().size() >= afterTheBlackhole + 2 || !heartbeats.failures.isEmpty());
                assertEquals(List.of(), heartbeats.failures.stream().map(f -> f.getThrowable().toString()).toList());
                assertEquals(0, cleared.size(), "no pool cleared");
                client.getDatabase("admin").runCommand(new Document("ping", 1));
            }
        }
    }
}
