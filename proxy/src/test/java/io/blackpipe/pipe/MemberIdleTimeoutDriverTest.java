package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoSocketReadException;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.event.CommandFailedEvent;
import com.mongodb.event.CommandListener;
import io.blackpipe.fault.DeploymentFaults;
import io.blackpipe.fault.IdleTimeout;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.UpstreamLane;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A member's idle timeout, with the real driver over three simulated members of the lane's node: a middlebox that
 * forgets connections idle for a while, as a cloud load balancer or a NAT gateway does. The driver's monitors talk
 * every 500 ms here, so only the app's pooled connection goes idle. Only lower bounds of time are asserted.
 */
class MemberIdleTimeoutDriverTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String MONITORS_BUSY = "heartbeatFrequencyMS=500";

    @RegisterExtension
    final SimulatedSetOverTheLane set = new SimulatedSetOverTheLane();

    private final List<CommandFailedEvent> failed = new CopyOnWriteArrayList<>();

    /** A client through the proxy with one pooled connection, and its failed commands recorded. */
    private MongoClient client(String options) {
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(set.proxy().connectionString() + "&maxPoolSize=1&" + MONITORS_BUSY
                        + "&" + options))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(20, TimeUnit.SECONDS))
                .addCommandListener(new CommandListener() {
                    @Override
                    public void commandFailed(CommandFailedEvent event) {
                        failed.add(event);
                    }
                })
                .build());
    }

    private double idleTimeouts(int member) {
        return Meters.sum(set.proxy().registry(), "blackpipe.connections.idle.timeouts", "member", set.upstream(member));
    }

    /**
     * Inserts {_id: 1} (the pooled connection open), puts a 2 s idle timeout on {@code member}, and waits until the
     * middlebox has forgotten the primary's pooled connection.
     */
    private MongoCollection<Document> insertedThenForgotten(MongoClient client, String db, String member, IdleTimeout.Then then)
            throws InterruptedException {
        MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
        c.insertOne(new Document("_id", 1));
        // four heartbeats: the monitors' connections stay busy through it even when a loaded machine stalls one
        set.proxy().idleTimeout(member, new IdleTimeout(2_000, then), 0);
        Await.until(WAIT, "the idle pooled connection to be forgotten", () -> idleTimeouts(0) == 1);
        return c;
    }

    @Test
    void aReadOnAPooledConnectionTheMiddleboxForgotIsLostUntilTheSocketTimeoutThenRetried() throws Exception {
        String db = UpstreamLane.freshDatabaseName("idledrop");
        try (MongoClient client = client("socketTimeoutMS=1000&retryReads=true")) {
            MongoCollection<Document> c = insertedThenForgotten(client, db, "primary", IdleTimeout.Then.DROP);
            long findsBefore = Meters.attempts(set.proxy().registry(), "find");

            long started = System.nanoTime();
            assertEquals(1, c.find(new Document("_id", 1)).first().getInteger("_id"));
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            // (the driver's socket timeout may fire a little early: 50 ms of slack, as in ScenarioScriptsTest)
            assertTrue(tookMillis >= 950, "the first try waited its 1 s socketTimeoutMS for a reply that never came: " + tookMillis);
            assertEquals(List.of("find"), failed.stream().map(CommandFailedEvent::getCommandName).toList(),
                    "the driver saw its first try fail, and its retry succeed");
            assertEquals(1, Meters.attempts(set.proxy().registry(), "find") - findsBefore,
                    "the member saw the retry only: the first try was lost between the client and it");
            assertEquals(1, idleTimeouts(0), "only the app's pooled connection went idle: the monitors kept theirs busy");
            assertEquals(0, idleTimeouts(1) + idleTimeouts(2), "the other members have no idle timeout");
        }
    }

    @Test
    void aWriteOnAConnectionTheMiddleboxForgotIsResetAndItsRetryLandsOnce() throws Exception {
        String db = UpstreamLane.freshDatabaseName("idlereset");
        try (MongoClient client = client("socketTimeoutMS=20000&retryWrites=true")) {
            MongoCollection<Document> c = insertedThenForgotten(client, db, "all", IdleTimeout.Then.RESET);

            c.insertOne(new Document("_id", 2)); // the reset comes at once, and the driver retries on a new connection
            assertEquals(List.of("insert"), failed.stream().map(CommandFailedEvent::getCommandName).toList());
            assertEquals(0, Meters.retries(set.proxy().registry(), "insert"),
                    "the member never saw the first try, so the retry is the first it sees");
        }
        assertEquals(2, set.direct().getDatabase(db).getCollection("c").countDocuments(), "each insert landed once");
    }

    @Test
    void aCommandRunningLongerThanTheIdleTimeoutIsCutAndItsReplyNeverComes() throws Exception {
        String db = UpstreamLane.freshDatabaseName("idlelong");
        try (MongoClient client = client("socketTimeoutMS=3000&retryReads=true")) {
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            c.insertOne(new Document("_id", 1));
            set.proxy().rules().put(set.proxy().ruleParser().parse("slow-find", BsonDocument.parse(
                    "{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['find'], delayReplyMS: 2000}}")));
            set.proxy().idleTimeout("primary", new IdleTimeout(1_000, IdleTimeout.Then.DROP), 0);

            long started = System.nanoTime();
            assertEquals(1, c.find(new Document("_id", 1)).first().getInteger("_id"));
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            assertTrue(tookMillis >= 2_950, "the first try waited its 3 s socketTimeoutMS: " + tookMillis + " ms");
            assertEquals(1, Meters.faults(set.proxy().registry(), DeploymentFaults.IDLE_TIMEOUT, "find"),
                    "the find in flight, silent for a second at the member, was cut with its forgotten connection");
            assertEquals(List.of("find"), failed.stream().map(CommandFailedEvent::getCommandName).toList());
        }
    }

    @Test
    void aMaxIdleTimeMSUnderTheIdleTimeoutKeepsTheAppClearOfIt() throws Exception {
        String db = UpstreamLane.freshDatabaseName("idlemax");
        try (MongoClient client = client("socketTimeoutMS=1000&maxIdleTimeMS=500&retryReads=false")) {
            MongoCollection<Document> c = insertedThenForgotten(client, db, "primary", IdleTimeout.Then.DROP);
            assertEquals(1, c.find(new Document("_id", 1)).first().getInteger("_id"),
                    "the driver closed its connection idle past maxIdleTimeMS and read on a new one, without retrying");
            assertEquals(List.of(), failed, "nothing failed");
        }
    }

    /**
     * Once the middlebox is gone (restored here; a reset between test cases does the same), what the client sends on a
     * connection it forgot goes on to the member's host, whose end of it closed long ago: a reset answers at once, as
     * a host answers a segment for a connection it does not have. Before, it was dropped as behind the middlebox, and a
     * next test's command on the pooled connection waited its socket timeout (forever at the Java driver's default).
     */
    @ParameterizedTest(name = "ended by {0}")
    @ValueSource(strings = {"restore", "reset"})
    void aForgottenConnectionIsResetOnceTheMiddleboxIsGone(String ending) throws Exception {
        String db = UpstreamLane.freshDatabaseName("idlegone");
        try (MongoClient client = client("socketTimeoutMS=20000&retryReads=false")) {
            MongoCollection<Document> c = insertedThenForgotten(client, db, "primary", IdleTimeout.Then.DROP);
            if (ending.equals("restore")) {
                set.proxy().restore("primary");
            } else {
                set.proxy().reset();
            }
            // (a MongoSocketReadTimeoutException is no MongoSocketReadException: the two are apart)
            assertThrows(MongoSocketReadException.class, () -> c.find(new Document("_id", 1)).first(),
                    "a reset at once, not the 20 s socket timeout");
            assertEquals(1, c.find(new Document("_id", 1)).first().getInteger("_id"), "the next find, on a new connection");
        }
    }

    @Test
    void anIdleTimeoutEndsOnTimeByRestoreOrResetAndAScenarioEndsOnlyItsOwn() throws Exception {
        LinkFaultEnds.check(set, "idle timeout", set.proxy()::idleTimeout, MemberListener::idleTimeout,
                List.of(new IdleTimeout(30_000, IdleTimeout.Then.DROP), new IdleTimeout(20_000, IdleTimeout.Then.DROP),
                        new IdleTimeout(10_000, IdleTimeout.Then.RESET)),
                "idleTimeout: {member: %s, after: 4m, then: reset}", new IdleTimeout(240_000, IdleTimeout.Then.RESET));
    }
}
