package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoServerException;
import com.mongodb.MongoCommandException;
import com.mongodb.ReadPreference;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.connection.ServerDescription;
import com.mongodb.connection.ServerType;
import com.mongodb.event.ServerDescriptionChangedEvent;
import com.mongodb.event.ServerHeartbeatSucceededEvent;
import com.mongodb.event.ServerListener;
import com.mongodb.event.ServerMonitorListener;
import io.blackpipe.fault.DeploymentFaults;
import io.blackpipe.fault.Restart;
import io.blackpipe.observe.HistoryEntry;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.topology.MemberAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A member's restart, as in a rolling restart or a cloud's maintenance, through the Java driver: it
 * quiesces (its hellos answer ShutdownInProgress, so the driver stops selecting it while it still
 * serves), then exits and is down, then comes back. A primary steps down first.
 */
class MemberRestartDriverTest {
    @RegisterExtension
    final SimulatedSetOverTheLane set = new SimulatedSetOverTheLane();

    /** What the driver last heard of each member, and every ShutdownInProgress its monitors got. */
    private final Map<String, ServerDescription> seen = new ConcurrentHashMap<>();
    private final List<String> shutdownErrors = new CopyOnWriteArrayList<>();
    /** The heartbeats each member answered: an awaited one only when its state changed or the wait ran out. */
    private final Map<String, java.util.concurrent.atomic.AtomicInteger> heartbeats = new ConcurrentHashMap<>();

    private MongoClient client(String uri) {
        ServerListener listener = new ServerListener() {
            @Override
            public void serverDescriptionChanged(ServerDescriptionChangedEvent event) {
                ServerDescription now = event.getNewDescription();
                seen.put(now.getAddress().toString(), now);
                if (now.getException() instanceof MongoServerException e && e.getCode() == 91) { // MongoNodeIsRecoveringException
                    shutdownErrors.add(now.getAddress().toString());
                }
            }
        };
        ServerMonitorListener monitor = new ServerMonitorListener() {
            @Override
            public void serverHeartbeatSucceeded(ServerHeartbeatSucceededEvent event) {
                heartbeats.computeIfAbsent(event.getConnectionId().getServerId().getAddress().toString(),
                        a -> new java.util.concurrent.atomic.AtomicInteger()).incrementAndGet();
            }
        };
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(uri))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(20, TimeUnit.SECONDS))
                .applyToServerSettings(b -> b.addServerListener(listener).addServerMonitorListener(monitor))
                .build());
    }

    private ServerType typeOf(String advertised) {
        ServerDescription description = seen.get(advertised);
        return description == null ? ServerType.UNKNOWN : description.getType();
    }

    /** The processId of the topologyVersion the driver last heard from {@code advertised}, or null. */
    private org.bson.types.ObjectId processIdOf(String advertised) {
        ServerDescription description = seen.get(advertised);
        return description == null || description.getTopologyVersion() == null ? null : description.getTopologyVersion().getProcessId();
    }

    private String advertised(int index) {
        return set.proxy().members().get(index).advertised().toString();
    }

    private MemberListener listener(int index) {
        return set.proxy().listener(MemberAddress.parse(set.upstream(index)));
    }

    @Test
    void aQuiescingSecondaryIsLeftByTheDriverBeforeItExitsAndReadsNeverFail() throws Exception {
        String db = UpstreamLane.freshDatabaseName("restart");
        set.direct().getDatabase(db).getCollection("c").insertOne(new Document("_id", 1));
        try (MongoClient client = client(set.proxy().connectionString() + "&heartbeatFrequencyMS=500")) {
            String secondary = advertised(1);
            Await.until(Duration.ofSeconds(10), "the driver to know both secondaries", () -> typeOf(advertised(1)) == ServerType.REPLICA_SET_SECONDARY
                    && typeOf(advertised(2)) == ServerType.REPLICA_SET_SECONDARY);
            org.bson.types.ObjectId before = processIdOf(secondary);
            assertTrue(before != null, "the driver holds the member's topologyVersion");
            set.proxy().restart(secondary, new Restart(3_000, 2_000));

            // Its streamed hello is answered at once with ShutdownInProgress: the driver marks it Unknown while it is still up.
            Await.until(Duration.ofSeconds(2), "the driver to hear ShutdownInProgress from " + secondary,
                    () -> shutdownErrors.contains(secondary));
            assertEquals(ServerType.UNKNOWN, typeOf(secondary));
            assertFalse(listener(1).down(), "still up (quiescing) when the driver left it");

            // Secondary reads go on, on the other secondary, through the quiesce, the exit and the time down.
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c").withReadPreference(ReadPreference.secondary());
            long readUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(6);
            int reads = 0;
            while (System.nanoTime() < readUntil) {
                assertEquals(1, c.find().first().getInteger("_id"));
                reads++;
            }
            assertTrue(reads > 10, "reads went on: " + reads);
            // Back after its 2 s down: the driver selects it again.
            Await.until(Duration.ofSeconds(10), "the driver to see " + secondary + " a secondary again",
                    () -> typeOf(secondary) == ServerType.REPLICA_SET_SECONDARY);
            // As a restarted mongod is, it is a new process, whose awaitable hellos are held as before (by the member, or,
            // as jongodb answers each at once, by the proxy); MemberStatesTest and RestartedProcessHelloTest check what the member is asked.
            org.bson.types.ObjectId after = processIdOf(secondary);
            assertTrue(after != null && !after.equals(before), "a new processId after the restart: " + before + ", then " + after);
            Thread.sleep(500); // the monitor's first hellos of the new process: its handshake, then its first awaited one
            int answered = heartbeats.get(secondary).get();
            Thread.sleep(3_000);
            int inThreeSeconds = heartbeats.get(secondary).get() - answered;
            assertTrue(inThreeSeconds <= 12, inThreeSeconds + " heartbeats answered in 3 s: the member did not hold the awaitable "
                    + "hellos (heartbeatFrequencyMS 500 is their maxAwaitTimeMS)");
            assertEquals(after, processIdOf(secondary), "the new process's, throughout");
        }
        assertEquals(0, Meters.sum(set.proxy().registry(), "blackpipe.command.outcomes", "outcome", "network_error"),
                "the driver had left the member before it exited: no command was cut");
        assertTrue(Meters.sum(set.proxy().registry(), "blackpipe.faults.injected", "fault", DeploymentFaults.RESTART) > 0,
                "its hellos answered ShutdownInProgress are counted as the restart's faults");
    }

    @Test
    void aRestartingPrimaryStepsDownFirstAndNoWriteIsLost() throws Exception {
        String db = UpstreamLane.freshDatabaseName("restartp");
        try (MongoClient client = client(set.proxy().connectionString() + "&heartbeatFrequencyMS=500&retryWrites=true")) {
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            c.insertOne(new Document("_id", 0));
            String primary = advertised(0);
            Thread restarter = new Thread(() -> set.proxy().restart("primary", new Restart(1_000, 1_000)));
            int acknowledged = 0;
            for (int i = 1; i <= 300; i++) {
                if (i == 50) {
                    restarter.start();
                }
                c.insertOne(new Document("_id", i));
                acknowledged++;
                Thread.sleep(10);
            }
            restarter.join();
            assertEquals(300, acknowledged);
            assertEquals(set.upstream(1), set.proxy().members().stream()
                    .filter(m -> set.proxy().memberState(m.upstream()).role() == io.blackpipe.topology.MemberState.Role.PRIMARY)
                    .findFirst().orElseThrow().upstream().toString(), "the primary stepped down to the next member");
            assertTrue(shutdownErrors.contains(primary), "the old primary quiesced: ShutdownInProgress to the driver's monitor");
            Await.until(Duration.ofSeconds(10), "the old primary back as a secondary",
                    () -> typeOf(primary) == ServerType.REPLICA_SET_SECONDARY);
        }
        assertEquals(301, set.direct().getDatabase(db).getCollection("c").countDocuments(), "every insert landed once");
    }

    /** A rule's blockConnection is failCommand's sleep, which mongod interrupts at its shutdown as any running operation. */
    @Test
    void aCommandARuleBlocksWhenTheMemberExitsIsInterruptedAtShutdown() throws Exception {
        String secondary = advertised(1);
        set.proxy().rules().put(set.proxy().ruleParser().parse("slow-find", BsonDocument.parse("{configureFailPoint: 'failCommand', mode: 'alwaysOn',"
                + " data: {failCommands: ['find'], blockConnection: true, blockTimeMS: 5000, member: '" + secondary + "'}}")));
        String uri = "mongodb://" + secondary + "/?directConnection=true&readPreference=secondaryPreferred&retryReads=false";
        try (MongoClient client = client(uri)) {
            MongoCollection<Document> c = client.getDatabase(UpstreamLane.freshDatabaseName("restartc")).getCollection("c");
            c.countDocuments(new Document()); // connected: the count is an aggregate, the rule fails finds
            CompletableFuture<Throwable> find = Await.failureOf(() -> c.find().first());
            Await.until(Duration.ofSeconds(5), "the find to be held at the member's side", () -> set.proxy().rules().fired("slow-find") == 1);
            long begun = System.nanoTime();
            set.proxy().restart(secondary, new Restart(500, 1_000));
            Throwable e = find.get(10, TimeUnit.SECONDS);
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - begun);
            assertEquals(11600, assertInstanceOf(MongoCommandException.class, e, "answered as the member exited: " + e).getErrorCode(),
                    "InterruptedAtShutdown");
            assertTrue(millis >= 400 && millis < 4_000, "as the member exited, after its quiesce, not at the block's end: " + millis + " ms");
        }
        Await.until(Duration.ofSeconds(5), "the interrupted find in the history",
                () -> set.proxy().history().recent().stream().anyMatch(h -> h.command().equals("find")));
        HistoryEntry interrupted = set.proxy().history().recent().stream().filter(h -> h.command().equals("find")).findFirst().orElseThrow();
        assertEquals("error", interrupted.outcome());
        assertEquals(11600, interrupted.errorCode());
        assertEquals(DeploymentFaults.RESTART, interrupted.fault());
    }

    @Test
    void aRestoreDuringTheQuiesceCallsTheShutdownOff() throws Exception {
        try (MongoClient client = client(set.proxy().connectionString() + "&heartbeatFrequencyMS=500")) {
            String secondary = advertised(2);
            Await.until(Duration.ofSeconds(10), "the driver to know " + secondary, () -> typeOf(secondary) == ServerType.REPLICA_SET_SECONDARY);
            set.proxy().restart(secondary, new Restart(1_500, 5_000));
            Await.until(Duration.ofSeconds(2), "the driver to hear ShutdownInProgress", () -> shutdownErrors.contains(secondary));
            set.proxy().restore(secondary);
            Await.until(Duration.ofSeconds(5), "the driver sees it a secondary again", () -> typeOf(secondary) == ServerType.REPLICA_SET_SECONDARY);
            Thread.sleep(2_000); // past the quiesce the restore called off
            assertFalse(listener(2).down(), "it never exited");
            assertEquals(ServerType.REPLICA_SET_SECONDARY, typeOf(secondary));
        }
    }
}
