package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.connection.ServerDescription;
import io.blackpipe.testing.CommandLog;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.ScriptedMongodFrame;
import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.testing.WireSocket;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A simulated election told as a real set tells it: every member's topologyVersion moves on and the
 * awaitable hellos the members hold are answered before failover() returns. A driver that streams hello
 * (the default for drivers since MongoDB 4.4) then knows the new primary within milliseconds, as with a
 * real set; one MongoClient shared by a JUnit class sees no refusal it did not cause. Over a scripted
 * node, which holds awaitable hellos as mongod does (jongodb answers them at once, so a driver
 * over it polls without pause and would hear of any change anyway).
 */
class SimulatedElectionStreamTest {
    /** Longer than the test: the stream's answers come only when a member's state changes. */
    private static final String STREAMING_NO_HEARTBEAT = "&serverMonitoringMode=stream&heartbeatFrequencyMS=120000";

    @RegisterExtension
    final SimulatedSetOverScriptedNode set = new SimulatedSetOverScriptedNode();

    @Test
    void aStreamingDriverHearsOfEachElectionAtOnceAndNeverWritesToTheOldPrimary() throws Exception {
        CommandLog log = new CommandLog();
        try (MongoClient client = streamingClient(log)) {
            MongoCollection<Document> c = firstWriteWithEveryMonitorStreaming(client);
            long before = topologyCounter(client, 1);

            set.proxy().failover();
            ScriptedProxy.awaitTrue("the driver hears the second member is primary", () -> primaryOf(client).equals(advertised(1)));
            assertEquals(before + 1, topologyCounter(client, 1), "the member's counter moved on with its state");
            c.insertOne(new Document("_id", 2));

            set.proxy().reset(); // the first member primary again, by one more election
            ScriptedProxy.awaitTrue("the driver hears the first member is primary again", () -> primaryOf(client).equals(advertised(0)));
            c.insertOne(new Document("_id", 3));

            assertEquals(List.of(), log.failed, "no write reached a member that was no longer primary");
        }
        assertEquals(3, Meters.attempts(set.proxy().registry(), "insert"), "one attempt per write");
        assertEquals(0, Meters.retries(set.proxy().registry(), "insert"));
        assertEquals(3, set.node().documents("test", "c").size());
    }

    /**
     * failover() and reset() return with the awaitable hellos the members held answered: the answers are written by
     * then, where they once were only about to be, on the proxy's event loops, and a test's write right after either
     * met the old primary more often than not. Read from a socket that holds a hello, with no wait.
     */
    @Test
    void aFailoverAndAResetReturnWithTheHeldHellosAnswered() throws Exception {
        try (WireSocket raw = new WireSocket(set.proxy().members().get(0).advertised().port(), 1,
                (int) ScriptedProxy.WAIT.toMillis())) {
            for (String change : List.of("failover", "reset")) {
                raw.sendMsg(0, hello());
                BsonDocument known = ScriptedMongodWire.parseOpMsg(raw.read()).body().getDocument("topologyVersion");
                raw.sendMsg(0, hello().append("topologyVersion", known).append("maxAwaitTimeMS", new BsonInt64(600_000)));
                raw.expectSilence(500); // held (by the proxy, as the node holds one), until the member's state changes

                if (change.equals("failover")) {
                    set.proxy().failover();
                } else {
                    set.proxy().reset();
                }
                assertTrue(raw.available() > 0, "the answer was sent before " + change + "() returned");
                BsonDocument answer = ScriptedMongodWire.parseOpMsg(raw.read()).body();
                assertEquals(advertised(change.equals("failover") ? 1 : 0), answer.getString("primary").getValue(), answer::toJson);
            }
        }
    }

    /**
     * A reset that undoes a failover (as @BlackPipeTest's before each test) leaves a streaming driver's next write to
     * the first member: the members' answers are sent, and the reset gives the driver's monitors a moment to read
     * them. Written at once after each reset, not after the driver is seen to know: a shared MongoClient's next test.
     */
    @Test
    void theWriteRightAfterAResetThatUndidAFailoverGoesToTheFirstMember() throws Exception {
        CommandLog log = new CommandLog();
        try (MongoClient client = streamingClient(log)) {
            MongoCollection<Document> c = firstWriteWithEveryMonitorStreaming(client);
            for (int i = 0; i < 5; i++) {
                set.proxy().failover();
                ScriptedProxy.awaitTrue("the driver hears the second member is primary", () -> primaryOf(client).equals(advertised(1)));
                set.proxy().reset();
                c.insertOne(new Document("_id", 10 + i));
            }
            assertEquals(List.of(), log.failed, "no write met the old primary");
        }
        assertEquals(6, Meters.attempts(set.proxy().registry(), "insert"), "one attempt per write");
        assertEquals(0, Meters.retries(set.proxy().registry(), "insert"));
        assertEquals(6, set.node().documents("test", "c").size());
    }

    /**
     * A failover with an election's length, streamed: the driver hears at once that no member is primary, its next
     * write waits to select one instead of meeting a refusal, and it hears of the new primary as it is elected.
     */
    @Test
    void aStreamingDriverWaitsOutTheElectionAndWritesOnceToTheNewPrimary() throws Exception {
        CommandLog log = new CommandLog();
        try (MongoClient client = streamingClient(log)) {
            MongoCollection<Document> c = firstWriteWithEveryMonitorStreaming(client);

            set.proxy().failover(3_000); // long enough to be seen on a loaded machine: the driver hears of it at once
            ScriptedProxy.awaitTrue("the driver hears no member is primary", () -> secondaries(client) == 3);
            c.insertOne(new Document("_id", 2)); // waits to select a primary until the election ends
            assertEquals(advertised(1), primaryOf(client));
            assertEquals(List.of(), log.failed, "no write met a member that was not primary");
        }
        assertEquals(2, Meters.attempts(set.proxy().registry(), "insert"), "one attempt per write");
        assertEquals(0, Meters.retries(set.proxy().registry(), "insert"));
        assertEquals(2, set.node().documents("test", "c").size());
    }

    /**
     * A hello that still carries the counter from before an election (a monitor that polled, or
     * whose answer crossed the election) is older than the member's word: a server answers it at
     * once, and so does the member here. Held instead, the driver would hear of the new primary
     * only after maxAwaitTimeMS (ten minutes here).
     */
    @Test
    void anAwaitableHelloFromBeforeAnElectionIsAnsweredAtOnce() throws Exception {
        try (WireSocket raw = new WireSocket(set.proxy().members().get(0).advertised().port(), 1,
                (int) ScriptedProxy.WAIT.toMillis())) {
            raw.sendMsg(0, hello());
            BsonDocument known = ScriptedMongodWire.parseOpMsg(raw.read()).body().getDocument("topologyVersion");
            assertNotEquals(set.node().topologyVersion().get("processId"), known.get("processId"), "the member's own process");

            set.proxy().failover();
            raw.sendMsg(0, hello().append("topologyVersion", known).append("maxAwaitTimeMS", new BsonInt64(600_000)));
            BsonDocument answer = ScriptedMongodWire.parseOpMsg(raw.read()).body();
            assertEquals(advertised(1), answer.getString("primary").getValue(), answer::toJson);
            assertEquals(known.get("processId"), answer.getDocument("topologyVersion").get("processId"));
            assertEquals(known.getNumber("counter").longValue() + 1, answer.getDocument("topologyVersion").getNumber("counter").longValue());
        }
        assertTrue(set.node().errors().isEmpty(), () -> "the node took every hello: " + set.node().errors());
    }

    private MongoClient streamingClient(CommandLog log) {
        return MongoClients.create(log.driverOn(set.proxy().connectionString() + "&retryWrites=true" + STREAMING_NO_HEARTBEAT)
                .applyToClusterSettings(b -> b.serverSelectionTimeout(10, TimeUnit.SECONDS)).build());
    }

    /** Document 1 written; then the driver knows both secondaries, and every member's monitor streams hello, held at the node. */
    private MongoCollection<Document> firstWriteWithEveryMonitorStreaming(MongoClient client) throws InterruptedException {
        MongoCollection<Document> c = client.getDatabase("test").getCollection("c");
        c.insertOne(new Document("_id", 1));
        ScriptedProxy.awaitTrue("the driver knows both secondaries", () -> secondaries(client) == 2);
        ScriptedProxy.awaitTrue("each member's monitor streams hello, held at the node",
                () -> set.node().framesReceived(ScriptedMongodFrame::exhaustAllowed).size() >= 3);
        return c;
    }

    private static BsonDocument hello() {
        return new BsonDocument("hello", new BsonInt32(1)).append("$db", new BsonString("admin"));
    }

    private long topologyCounter(MongoClient client, int member) {
        ServerDescription description = client.getClusterDescription().getServerDescriptions().stream()
                .filter(d -> d.getAddress().toString().equals(advertised(member))).findFirst().orElseThrow();
        assertNotEquals(null, description.getTopologyVersion(), advertised(member) + " reports a topologyVersion");
        return description.getTopologyVersion().getCounter();
    }

    private static long secondaries(MongoClient client) {
        return client.getClusterDescription().getServerDescriptions().stream().filter(ServerDescription::isSecondary).count();
    }

    private static String primaryOf(MongoClient client) {
        return client.getClusterDescription().getServerDescriptions().stream()
                .filter(ServerDescription::isPrimary).map(d -> d.getAddress().toString()).findFirst().orElse("none");
    }

    private String advertised(int index) {
        return set.proxy().members().get(index).advertised().toString();
    }
}
