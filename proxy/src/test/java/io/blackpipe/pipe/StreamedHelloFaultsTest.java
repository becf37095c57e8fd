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
import io.blackpipe.testing.ScriptedMongodFrame;
import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.testing.WireSocket;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Faults on a member whose monitor awaits hello (4.4+): streamed (awaitable hello with
 * exhaustAllowed), or one reply per awaitable hello.
 */
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
                // the error's counter + 1; the member's, as it still is, one more (see MemberStates)
                assertEquals(counter + 2, ScriptedProxy.driverTopologyCounter(client), "the early answer's counter");

                // the proxy's early answer, then the member's own next streamed reply, chained after it
                awaitTrue(() -> "two more streamed heartbeats; failures: " + heartbeats.failures,
                        () -> heartbeats.awaited().size() >= awaitedBefore + 2 || !heartbeats.failures.isEmpty());
                assertEquals(0, heartbeats.failures.size(), () -> "the stream stayed in step: " + heartbeats.failures);
                assertEquals(counter + 2, ScriptedProxy.driverTopologyCounter(client), "the member's own replies, shifted");
            }
            assertEquals(2, scripted.documents("test", "c").size());
        }
    }

    /**
     * An awaitable hello without exhaustAllowed, one reply per request (the SDAM monitoring spec's
     * streaming protocol when exhaust is not used; the Java driver always streams, so a bare socket
     * plays the monitor): after an injected state-change error with a newer topologyVersion the
     * proxy answers it at once, as a server does. The member's own answer, when its wait ends, is
     * dropped. The client's next awaitable hello, sent while the member still holds the first, waits
     * at the proxy instead of behind the first, and is answered when its own wait ends; the one after
     * the member's late answer reaches the member, and its reply is the next the client gets.
     */
    @Test
    void anAwaitableHelloWithoutExhaustIsAnsweredAtOnceToo() throws Exception {
        int memberWaitMillis = 4_000;
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted);
             WireSocket monitor = new WireSocket(ScriptedProxy.port(proxy), 1, 10_000);
             WireSocket app = new WireSocket(ScriptedProxy.port(proxy), 1_000, 10_000)) {
            monitor.sendMsg(0, new BsonDocument("hello", new BsonInt32(1)).append("$db", new BsonString("admin")));
            BsonDocument known = body(monitor.read()).getDocument("topologyVersion");
            long counter = known.getNumber("counter").longValue();
            int awaitedId = monitor.sendMsg(0, awaitableHello(known, memberWaitMillis));
            awaitTrue("the member holds the awaitable hello", () -> awaitableHellos(scripted).size() == 1);

            proxy.rules().put(proxy.ruleParser().parse("r", BsonDocument.parse("{configureFailPoint: 'failCommand',"
                    + " mode: {times: 1}, data: {failCommands: ['insert'], error: 'NotWritablePrimary'}}")));
            long start = System.nanoTime();
            app.sendMsg(0, BsonDocument.parse("{insert: 'c', documents: [{_id: 1}], $db: 'test'}"));
            BsonDocument error = body(app.read());
            assertEquals(counter + 1, error.getDocument("topologyVersion").getNumber("counter").longValue(), error::toJson);

            byte[] early = monitor.read();
            long millis = (System.nanoTime() - start) / 1_000_000;
            assertTrue(millis < memberWaitMillis / 2, "answered after " + millis + " ms: the member's own wait ended first");
            assertEquals(awaitedId, ScriptedMongodWire.responseTo(early));
            assertEquals(0, ScriptedProxy.flags(early) & ScriptedMongodWire.FLAG_MORE_TO_COME, "one reply, as asked");
            BsonDocument answer = body(early);
            assertEquals(counter + 2, answer.getDocument("topologyVersion").getNumber("counter").longValue(),
                    () -> "one newer than the error, the member as it still is: " + answer.toJson());
            assertEquals(ScriptedProxy.advertised(proxy), answer.getString("me").getValue());

            // the next awaitable hello, with the counter just heard, while the member still holds the first
            int nextId = monitor.sendMsg(0, awaitableHello(answer.getDocument("topologyVersion"), 300));
            byte[] next = monitor.read();
            assertEquals(nextId, ScriptedMongodWire.responseTo(next));
            assertEquals(counter + 2, body(next).getDocument("topologyVersion").getNumber("counter").longValue());
            assertEquals(1, awaitableHellos(scripted).size(), "it waited at the proxy, not at the member behind the first");
            ScriptedMongodFrame first = EarlyAnsweredHelloTest.oneReplyAwaitableHellos(scripted).get(0);
            assertEquals(List.of(), EarlyAnsweredHelloTest.answersTo(scripted, first),
                    "answered when its own wait ended, before the member's for the first");

            awaitTrue("the member answers the first when its wait ends",
                    () -> EarlyAnsweredHelloTest.answersTo(scripted, first).size() == 1);
            int thirdId = monitor.sendMsg(0, awaitableHello(body(next).getDocument("topologyVersion"), 300));
            byte[] third = monitor.read();
            assertEquals(thirdId, ScriptedMongodWire.responseTo(third), "the member's late answer to the first was dropped");
            assertEquals(counter + 2, body(third).getDocument("topologyVersion").getNumber("counter").longValue());
            monitor.expectSilence(300);
            assertEquals(counter, awaitableHellos(scripted).get(1).getDocument("topologyVersion").getNumber("counter").longValue(),
                    "the member hears its own counter back");
        }
    }

    private static BsonDocument awaitableHello(BsonDocument topologyVersion, int maxAwaitTimeMillis) {
        return new BsonDocument("hello", new BsonInt32(1)).append("topologyVersion", topologyVersion)
                .append("maxAwaitTimeMS", new BsonInt64(maxAwaitTimeMillis)).append("$db", new BsonString("admin"));
    }

    /** The awaitable hellos the member received (the proxy's own probes say hello too). */
    private static List<BsonDocument> awaitableHellos(ScriptedMongod scripted) {
        return scripted.commandsReceived("hello").stream().map(f -> f.document()).filter(d -> d.containsKey("maxAwaitTimeMS")).toList();
    }

    private static BsonDocument body(byte[] reply) throws IOException {
        return ScriptedMongodWire.parseOpMsg(reply).body();
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
