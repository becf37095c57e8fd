package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoSocketReadTimeoutException;
import com.mongodb.ReadPreference;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.event.ConnectionCheckOutFailedEvent;
import com.mongodb.event.ConnectionCreatedEvent;
import com.mongodb.event.ConnectionPoolListener;
import com.mongodb.event.ConnectionReadyEvent;
import io.blackpipe.fault.Direction;
import io.blackpipe.fault.Latency;
import io.blackpipe.observe.HistoryEntry;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.topology.MemberState;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A member's latency, with the real driver over three simulated members of the lane's node: everything the slow member
 * sends arrives late (its replies and its hellos, so the driver's own round-trip time sees it), the others are as they
 * were, and a reply later than the client's socketTimeoutMS is the timeout of a write that happened. Only lower bounds
 * of time are asserted: a slow machine makes nothing early.
 */
class MemberLatencyDriverTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @RegisterExtension
    final SimulatedSetOverTheLane set = new SimulatedSetOverTheLane();

    private String advertised(int member) {
        return set.proxy().members().get(member).advertised().toString();
    }

    /** Inserts {_id: 1} through {@code client} (connected, the primary known), then slows the primary's link by {@code latency}. */
    private MongoCollection<Document> insertedThenSlowed(MongoClient client, String db, Latency latency) {
        MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
        c.insertOne(new Document("_id", 1));
        set.proxy().latency("primary", latency, 0);
        return c;
    }

    /** How many inserts the proxy counted ending in {@code outcome} (ok, error, network_error). */
    private long insertOutcomes(String outcome) {
        return Meters.outcomes(set.proxy().registry(), "insert", outcome);
    }

    /** The driver's round-trip time to {@code advertised}, in ms (its weighted average of hellos), or -1 before it has one. */
    private static long roundTripMillis(MongoClient client, String advertised) {
        return client.getClusterDescription().getServerDescriptions().stream()
                .filter(d -> d.getAddress().toString().equals(advertised) && d.isOk())
                .mapToLong(d -> d.getRoundTripTimeNanos() / 1_000_000).findFirst().orElse(-1);
    }

    @Test
    void everyReplyOfASlowPrimaryIsLateHelloIncludedAndTheOtherMembersAreNotSlowed() throws Exception {
        String db = UpstreamLane.freshDatabaseName("latency");
        try (MongoClient client = set.client("heartbeatFrequencyMS=500&socketTimeoutMS=20000")) {
            MongoCollection<Document> c = insertedThenSlowed(client, db, new Latency(400, 0));
            assertEquals(new Latency(400, 0), set.proxy().listener(set.proxy().members().get(0).upstream()).latency());
            assertNull(set.proxy().listener(set.proxy().members().get(1).upstream()).latency(), "only the primary is slow");

            long started = System.nanoTime();
            assertEquals(1, c.find(new Document("_id", 1)).first().getInteger("_id"));
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            assertTrue(tookMillis >= 400, "a find on the slow primary took " + tookMillis + " ms, under its 400 ms latency");
            c.insertOne(new Document("_id", 2));

            // the driver measures the member with its hellos, which the latency holds too
            Await.until(WAIT, "the driver's round-trip time to the slow primary to grow past 200 ms",
                    () -> roundTripMillis(client, advertised(0)) > 200);

            set.proxy().restore("primary");
            assertNull(set.proxy().listener(set.proxy().members().get(0).upstream()).latency());
            c.insertOne(new Document("_id", 3));
        }
        assertEquals(3, set.direct().getDatabase(db).getCollection("c").countDocuments(), "every write landed, once");
    }

    @Test
    void nearestReadsGoToTheMemberWithoutLatencyAsTheDriverMeasuresThem() throws Exception {
        String db = UpstreamLane.freshDatabaseName("nearest");
        set.direct().getDatabase(db).getCollection("c").insertOne(new Document("_id", 1));
        set.proxy().latency(set.upstream(0), new Latency(300, 0), 0);
        set.proxy().latency(set.upstream(1), new Latency(200, 20), 0);
        try (MongoClient client = set.client("heartbeatFrequencyMS=500&socketTimeoutMS=20000")) {
            Await.until(WAIT, "the driver to measure the two slow members past 100 ms and the third under them",
                    () -> roundTripMillis(client, advertised(0)) > 100 && roundTripMillis(client, advertised(1)) > 100
                            && roundTripMillis(client, advertised(2)) >= 0
                            && roundTripMillis(client, advertised(2)) + 15 < Math.min(roundTripMillis(client, advertised(0)),
                            roundTripMillis(client, advertised(1))));
            MongoCollection<Document> nearest = client.getDatabase(db).getCollection("c").withReadPreference(ReadPreference.nearest());
            for (int i = 0; i < 20; i++) {
                assertEquals(1, nearest.find(new Document("_id", 1)).first().getInteger("_id"));
            }
        }
        List<HistoryEntry> finds = set.proxy().history().recent().stream()
                .filter(e -> e.command().equals("find") && db.equals(e.database())).toList();
        assertEquals(20, finds.size(), finds::toString);
        Set<String> servedBy = finds.stream().map(HistoryEntry::member).collect(Collectors.toSet());
        assertEquals(Set.of(set.upstream(2)), servedBy, "every nearest read went to the member without latency");
    }

    @Test
    void aReplyLaterThanTheSocketTimeoutIsATimeoutOfAWriteThatLanded() throws Exception {
        String db = UpstreamLane.freshDatabaseName("latetimeout");
        try (MongoClient client = set.client("retryWrites=false&socketTimeoutMS=1000&heartbeatFrequencyMS=60000")) {
            MongoCollection<Document> c = insertedThenSlowed(client, db, new Latency(1_500, 0));
            long before = Meters.attempts(set.proxy().registry(), "insert");
            assertThrows(MongoSocketReadTimeoutException.class, () -> c.insertOne(new Document("_id", 2)));
            assertEquals(1, Meters.attempts(set.proxy().registry(), "insert") - before);
        }
        MongoCollection<Document> stored = set.direct().getDatabase(db).getCollection("c");
        Await.until(WAIT, "the timed-out insert to be on the server", () -> stored.countDocuments(new Document("_id", 2)) == 1);
        set.proxy().restore("all");
    }

    /**
     * A read whose reply is later than the client's socketTimeoutMS: the client gives up and closes the connection before
     * the reply arrives, so to it that attempt is a network error, and the driver's retry (retryReads, on its other
     * pooled connection) is its retry. Counted so: the reply on its way when the client left never reached it.
     */
    @Test
    void aReadLaterThanTheSocketTimeoutIsANetworkErrorToTheClientAndItsRetryIsCountedAsOne() throws Exception {
        readLaterThanTheSocketTimeoutIsCountedAsTheClientSawIt(null);
    }

    /** The same when a rule held the reply first (delayReplyMS): it still counts when it arrives, not when it leaves. */
    @Test
    void aDelayedReadLaterThanTheSocketTimeoutIsCountedAsTheClientSawItToo() throws Exception {
        readLaterThanTheSocketTimeoutIsCountedAsTheClientSawIt(
                "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], delayReplyMS: 50}}");
    }

    private void readLaterThanTheSocketTimeoutIsCountedAsTheClientSawIt(String rule) throws Exception {
        String db = UpstreamLane.freshDatabaseName("lateread");
        Set<String> ready = ConcurrentHashMap.newKeySet();
        try (MongoClient client = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(set.proxy().connectionString()
                        + "&retryReads=true&socketTimeoutMS=1000&heartbeatFrequencyMS=60000&minPoolSize=2"))
                .applyToConnectionPoolSettings(b -> b.maintenanceFrequency(100, TimeUnit.MILLISECONDS)
                        .addConnectionPoolListener(new ConnectionPoolListener() {
                            @Override
                            public void connectionReady(ConnectionReadyEvent event) {
                                ready.add(event.getConnectionId().getServerId().getAddress() + "#" + event.getConnectionId().getLocalValue());
                            }
                        }))
                .build())) {
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            c.insertOne(new Document("_id", 1));
            String primary = set.proxy().members().stream().filter(m -> set.proxy().memberState(m.upstream()).role() == MemberState.Role.PRIMARY)
                    .findFirst().orElseThrow().advertised().toString();
            Await.until(WAIT, "two pooled connections to the primary, before its link is slowed",
                    () -> ready.stream().filter(r -> r.startsWith(primary + "#")).count() >= 2);
            set.proxy().latency("primary", new Latency(1_500, 0), 0);
            if (rule != null) {
                set.proxy().rules().put(set.proxy().ruleParser().parse("delay", org.bson.BsonDocument.parse(rule)));
            }
            long attempts = Meters.attempts(set.proxy().registry(), "find");
            long retries = Meters.retries(set.proxy().registry(), "find");
            long lost = Meters.outcomes(set.proxy().registry(), "find", "network_error");
            long delivered = Meters.outcomes(set.proxy().registry(), "find", "ok");

            assertThrows(MongoSocketReadTimeoutException.class, () -> c.find(new Document("_id", 1)).first());
            assertEquals(2, Meters.attempts(set.proxy().registry(), "find") - attempts, "the attempt and the driver's retry");
            assertEquals(1, Meters.retries(set.proxy().registry(), "find") - retries, "the second is the driver's retry");
            Await.until(WAIT, "both attempts to end as the client saw them",
                    () -> Meters.outcomes(set.proxy().registry(), "find", "network_error") - lost == 2);
            assertEquals(0, Meters.outcomes(set.proxy().registry(), "find", "ok") - delivered, "no reply that came too late counted as delivered");
        }
        set.proxy().restore("all");
    }

    /**
     * A latency on requests: the member sees each command that much later, so a socket timeout shorter than it fires
     * before the member has even seen the write, and the member applies it after the client gave up (the client's close
     * comes behind what it sent).
     */
    @Test
    void aLatencyOnRequestsDelaysWhatTheMemberSeesSoAWriteLandsAfterTheClientGaveUp() throws Exception {
        String db = UpstreamLane.freshDatabaseName("requestlatency");
        long started;
        try (MongoClient client = set.client("retryWrites=false&socketTimeoutMS=1000&heartbeatFrequencyMS=60000")) {
            MongoCollection<Document> c = insertedThenSlowed(client, db, new Latency(2_000, 0, Direction.REQUESTS));
            started = System.nanoTime();
            assertThrows(MongoSocketReadTimeoutException.class, () -> c.insertOne(new Document("_id", 2)));
        }
        MongoCollection<Document> stored = set.direct().getDatabase(db).getCollection("c");
        Await.until(WAIT, "the timed-out insert to be on the server", () -> stored.countDocuments(new Document("_id", 2)) == 1);
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        assertTrue(tookMillis >= 2_000, "it landed " + tookMillis + " ms after it was sent, before its latency towards the member");
        set.proxy().restore("all");
    }

    /**
     * Both attempts of a retryable write time out while their requests cross a latency towards the member, the retry on
     * a connection the pool had ready (the driver clears no pool for a timeout), and each client closes before its
     * request has crossed (its FIN comes behind it). Neither reply can reach the driver, so both attempts count as
     * network errors, as the driver saw them: on jongodb the proxy answers the retry from the first run at once, before
     * the FIN behind it closes the connection, and that answer was counted as delivered (ok) where no driver read it.
     */
    @Test
    void aRetryWhoseClientClosedBeforeItCrossedTheLinkCountsAsTheNetworkErrorTheDriverSaw() throws Exception {
        String db = UpstreamLane.freshDatabaseName("closedbehind");
        Map<String, AtomicInteger> ready = new ConcurrentHashMap<>();
        try (MongoClient client = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(set.proxy().connectionString()
                        + "&retryWrites=true&socketTimeoutMS=1000&minPoolSize=3&heartbeatFrequencyMS=60000"))
                .applyToConnectionPoolSettings(b -> b.addConnectionPoolListener(new ConnectionPoolListener() {
                    @Override
                    public void connectionReady(ConnectionReadyEvent event) {
                        String address = event.getConnectionId().getServerId().getAddress().toString();
                        ready.computeIfAbsent(address, a -> new AtomicInteger()).incrementAndGet();
                    }
                }))
                .build())) {
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            c.insertOne(new Document("_id", 1));
            AtomicInteger primarysReady = ready.computeIfAbsent(advertised(0), a -> new AtomicInteger());
            Await.until(WAIT, "the primary's pool to have its three connections", () -> primarysReady.get() >= 3);
            set.proxy().latency("primary", new Latency(2_000, 0, Direction.REQUESTS), 0);
            long attempts = Meters.attempts(set.proxy().registry(), "insert");
            long ok = insertOutcomes("ok");
            long networkErrors = insertOutcomes("network_error");
            long retries = Meters.retries(set.proxy().registry(), "insert");
            assertThrows(MongoSocketReadTimeoutException.class, () -> c.insertOne(new Document("_id", 2)));
            Await.until(WAIT, "both attempts to reach the member and end",
                    () -> insertOutcomes("network_error") - networkErrors + insertOutcomes("ok") - ok == 2);
            assertEquals(2, Meters.attempts(set.proxy().registry(), "insert") - attempts, "the retry went on a connection the"
                    + " pool had ready (a new one's handshake would time out on the link, and its insert never come)");
            assertEquals(1, Meters.retries(set.proxy().registry(), "insert") - retries);
            assertEquals(0, insertOutcomes("ok") - ok, "no reply reached the driver");
            assertEquals(2, insertOutcomes("network_error") - networkErrors);
            set.proxy().restore("all");
        }
        assertEquals(1, set.direct().getDatabase(db).getCollection("c").countDocuments(new Document("_id", 2)),
                "the write the driver gave up on was applied once");
    }

    /**
     * A rule's error meets an insert whose client gave up and closed while the insert crossed a latency towards the
     * member: the proxy answers as the request arrives, before the FIN behind it, and that answer reaches no one. The
     * fault is counted (it was injected), and the attempt ends in the network error the driver saw, not in the error.
     */
    @Test
    void aRulesAnswerToAClientThatClosedBehindItsRequestCountsAsTheNetworkErrorTheDriverSaw() throws Exception {
        String db = UpstreamLane.freshDatabaseName("answerunheard");
        try (MongoClient client = set.client("retryWrites=false&socketTimeoutMS=1000&heartbeatFrequencyMS=60000")) {
            MongoCollection<Document> c = insertedThenSlowed(client, db, new Latency(2_000, 0, Direction.REQUESTS));
            set.proxy().rules().put(set.proxy().ruleParser().parse("refuse", org.bson.BsonDocument.parse("{configureFailPoint:"
                    + " 'failCommand', mode: {times: 1}, data: {failCommands: ['insert'], errorCode: 91}}")));
            long errors = insertOutcomes("error");
            long networkErrors = insertOutcomes("network_error");
            long faults = Meters.faults(set.proxy().registry(), "errorReply", "insert");
            assertThrows(MongoSocketReadTimeoutException.class, () -> c.insertOne(new Document("_id", 2)));
            Await.until(WAIT, "the insert to reach the proxy's end of the link and end",
                    () -> insertOutcomes("network_error") - networkErrors + insertOutcomes("error") - errors == 1);
            assertEquals(1, Meters.faults(set.proxy().registry(), "errorReply", "insert") - faults, "the rule fired");
            assertEquals(0, insertOutcomes("error") - errors, "no answer reached the driver");
            assertEquals(1, insertOutcomes("network_error") - networkErrors);
            set.proxy().restore("all");
        }
        assertEquals(0, set.direct().getDatabase(db).getCollection("c").countDocuments(new Document("_id", 2)),
                "the rule's error kept it from the member");
    }

    @Test
    void aLatencyEachWayAddsItsDelayTwiceToARoundTripAndOneOnRequestsOnce() throws Exception {
        String db = UpstreamLane.freshDatabaseName("bothlatency");
        try (MongoClient client = set.client("heartbeatFrequencyMS=60000")) {
            MongoCollection<Document> c = insertedThenSlowed(client, db, new Latency(300, 0, Direction.BOTH));
            long started = System.nanoTime();
            assertEquals(1, c.find(new Document("_id", 1)).first().getInteger("_id"));
            long bothMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            assertTrue(bothMillis >= 600, "a round trip with 300 ms each way took " + bothMillis + " ms");
            set.proxy().latency("primary", new Latency(300, 0, Direction.REQUESTS), 0);
            started = System.nanoTime();
            c.insertOne(new Document("_id", 2));
            long requestsMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            assertTrue(requestsMillis >= 300, "a round trip with 300 ms on the request took " + requestsMillis + " ms");
            set.proxy().restore("all");
        }
        assertEquals(2, set.direct().getDatabase(db).getCollection("c").countDocuments());
    }

    /**
     * A 4 MiB insert over 200 ms towards the member: the link's window grows as TCP's does, so the insert takes a few
     * delays (seven: 64 KiB, then twice as much each delay, to 4 MiB), as over a real long link, not the 64 it would
     * take one 64 KiB window per delay (12.8 s). The upper bound leaves that much room either way.
     */
    @Test
    void aLargeInsertUnderALatencyOnRequestsTakesAFewDelaysAsTheWindowGrows() throws Exception {
        String db = UpstreamLane.freshDatabaseName("largelatency");
        String large = "x".repeat(4 * 1024 * 1024);
        try (MongoClient client = set.client("heartbeatFrequencyMS=60000")) {
            MongoCollection<Document> c = insertedThenSlowed(client, db, new Latency(200, 0, Direction.REQUESTS));
            long started = System.nanoTime();
            c.insertOne(new Document("_id", 2).append("large", large));
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            assertTrue(tookMillis >= 200, "it took " + tookMillis + " ms, less than its latency towards the member");
            assertTrue(tookMillis < 6_400, "it took " + tookMillis + " ms, half of what one 64 KiB window a delay takes, or more");
            set.proxy().restore("all");
        }
        Document stored = set.direct().getDatabase(db).getCollection("c").find(new Document("_id", 2)).first();
        assertEquals(large.length(), stored.getString("large").length(), "the whole document reached the server");
    }

    /**
     * A retryable write's retry needs a new connection (a network error closes the one it used), and the handshake of
     * that connection crosses the same slow link: the Java driver 5.14 bounds it with socketTimeoutMS too, so on a link
     * slower than that the retry never sends its command. The write happened once, and the app sees a read timeout.
     */
    @Test
    void onALinkSlowerThanTheSocketTimeoutTheRetrysNewConnectionTimesOutInItsHandshake() throws Exception {
        String db = UpstreamLane.freshDatabaseName("slowretry");
        List<String> pool = new CopyOnWriteArrayList<>();
        try (MongoClient client = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(set.proxy().connectionString()
                        + "&retryWrites=true&socketTimeoutMS=1000&heartbeatFrequencyMS=60000"))
                .applyToConnectionPoolSettings(b -> b.addConnectionPoolListener(new ConnectionPoolListener() {
                    @Override
                    public void connectionCreated(ConnectionCreatedEvent event) {
                        pool.add("created");
                    }

                    @Override
                    public void connectionReady(ConnectionReadyEvent event) {
                        pool.add("ready");
                    }

                    @Override
                    public void connectionCheckOutFailed(ConnectionCheckOutFailedEvent event) {
                        pool.add("checkOutFailed " + event.getReason());
                    }
                }))
                .build())) {
            MongoCollection<Document> c = insertedThenSlowed(client, db, new Latency(1_500, 0));
            pool.clear();
            long before = Meters.attempts(set.proxy().registry(), "insert");
            assertThrows(MongoSocketReadTimeoutException.class, () -> c.insertOne(new Document("_id", 2)));
            assertEquals(List.of("created", "checkOutFailed CONNECTION_ERROR"), pool.subList(0, Math.min(2, pool.size())),
                    "the retry's connection never became ready: " + pool);
            assertEquals(1, Meters.attempts(set.proxy().registry(), "insert") - before, "only the first attempt reached the proxy");
        }
        MongoCollection<Document> stored = set.direct().getDatabase(db).getCollection("c");
        Await.until(WAIT, "the timed-out insert to be on the server", () -> stored.countDocuments(new Document("_id", 2)) == 1);
        set.proxy().restore("all");
    }

    @Test
    void aLatencyEndsOnTimeByRestoreOrResetAndAScenarioEndsOnlyItsOwn() throws Exception {
        LinkFaultEnds.check(set, "latency", set.proxy()::latency, MemberListener::latency,
                List.of(new Latency(100, 0), new Latency(75, 0), new Latency(90, 0)),
                "latency: {member: %s, delay: 250ms, jitter: 50ms}", new Latency(250, 50));
    }
}
