package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoOperationTimeoutException;
import com.mongodb.MongoSocketReadTimeoutException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.blackpipe.fault.Bandwidth;
import io.blackpipe.fault.DeploymentFaults;
import io.blackpipe.fault.Direction;
import io.blackpipe.fault.Latency;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.UpstreamLane;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A member's bandwidth, with the real driver over three simulated members of the lane's node: a large reply trickles
 * in at the rate, so it takes its time, yet no single read waits as long as the client's socketTimeoutMS, which bounds
 * each read (it is no timeout of the operation); the client's timeoutMS, which bounds the operation, ends it. A large
 * insert goes up the link at the rate too, and a socket timeout that fires while it is on its way leaves the client
 * not knowing what the member goes on to apply. Only lower bounds of time are asserted: a slow machine makes nothing
 * early.
 */
class MemberBandwidthDriverTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    /** A document whose reply takes three seconds at {@link #RATE}. */
    private static final int PAYLOAD_CHARS = 300_000;
    private static final long RATE = 100_000;

    @RegisterExtension
    final SimulatedSetOverTheLane set = new SimulatedSetOverTheLane();

    /** A fresh database named from {@code prefix} whose collection c holds {_id: 1} with a {@link #PAYLOAD_CHARS} payload. */
    private String withALargeDocument(String prefix) {
        String db = UpstreamLane.freshDatabaseName(prefix);
        set.direct().getDatabase(db).getCollection("c").insertOne(new Document("_id", 1).append("payload", "x".repeat(PAYLOAD_CHARS)));
        return db;
    }

    /** Inserts {_id: 2} through {@code client} (connected, the primary known), then narrows the primary's link to {@link #RATE}. */
    private MongoCollection<Document> insertedThenNarrowed(MongoClient client, String db) {
        return insertedThenNarrowed(client, db, new Bandwidth(RATE));
    }

    /** The same, to {@code bandwidth}. */
    private MongoCollection<Document> insertedThenNarrowed(MongoClient client, String db, Bandwidth bandwidth) {
        MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
        c.insertOne(new Document("_id", 2));
        set.proxy().bandwidth("primary", bandwidth, 0);
        return c;
    }

    @Test
    void aLargeReplyOnANarrowLinkTricklesInLongerThanTheSocketTimeoutWithoutTimingOut() throws Exception {
        String db = withALargeDocument("bandwidth");
        try (MongoClient client = set.client("socketTimeoutMS=1000&heartbeatFrequencyMS=500")) {
            MongoCollection<Document> c = insertedThenNarrowed(client, db);
            assertEquals(new Bandwidth(RATE), set.proxy().listener(set.proxy().members().get(0).upstream()).bandwidth());
            assertNull(set.proxy().listener(set.proxy().members().get(1).upstream()).bandwidth(), "only the primary's link narrows");

            long findsBefore = Meters.attempts(set.proxy().registry(), "find");
            long started = System.nanoTime();
            Document found = c.find(new Document("_id", 1)).first();
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            assertEquals(PAYLOAD_CHARS, found.getString("payload").length());
            assertTrue(tookMillis >= 3_000, "a 300 KB reply at 100 KB a second took " + tookMillis + " ms, under 3 s");
            assertEquals(1, Meters.attempts(set.proxy().registry(), "find") - findsBefore,
                    "read in one attempt: no read waited the 1 s socketTimeoutMS, though the reply took three");

            set.proxy().restore("primary");
            assertNull(set.proxy().listener(set.proxy().members().get(0).upstream()).bandwidth());
            c.insertOne(new Document("_id", 3));
        }
        assertEquals(3, set.direct().getDatabase(db).getCollection("c").countDocuments(), "every write landed, once");
    }

    @Test
    void theClientsTimeoutMSBoundsTheWholeOperationOnANarrowLink() throws Exception {
        String db = withALargeDocument("bandwidthcsot");
        try (MongoClient client = set.client("timeoutMS=1500&heartbeatFrequencyMS=500")) {
            MongoCollection<Document> c = insertedThenNarrowed(client, db);
            long started = System.nanoTime();
            assertThrows(MongoOperationTimeoutException.class, () -> c.find(new Document("_id", 1)).first());
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            // the driver's clock, not the proxy's, ends it: its timeouts may fire a millisecond or so early, as ours allow
            assertTrue(tookMillis >= 1_400, "timed out after " + tookMillis + " ms, well before its 1500 ms timeoutMS");
            set.proxy().restore("primary");
            assertEquals(PAYLOAD_CHARS, c.find(new Document("_id", 1)).first().getString("payload").length(),
                    "the link wide again, the same read fits in its timeoutMS");
        }
    }

    @Test
    void aResetOnANarrowLinkThrowsAwayWhatItHadNotCarriedSoTheReadIsCutAndRetried() throws Exception {
        String db = withALargeDocument("bandwidthreset");
        try (MongoClient client = set.client("heartbeatFrequencyMS=500")) {
            MongoCollection<Document> c = insertedThenNarrowed(client, db);
            set.proxy().bandwidth("primary", new Bandwidth(RATE / 2), 0); // six seconds: the reset surely comes mid-reply
            long findsBefore = Meters.attempts(set.proxy().registry(), "find");
            long cutBefore = Meters.outcomes(set.proxy().registry(), "find", "network_error");
            java.util.concurrent.CompletableFuture<Document> read = java.util.concurrent.CompletableFuture.supplyAsync(
                    () -> c.find(new Document("_id", 1)).first());
            Thread.sleep(1_000); // a sixth of the reply has crossed
            set.proxy().restore("primary"); // the retry crosses a wide link
            assertTrue(set.proxy().resetConnections("primary") > 0);
            assertEquals(PAYLOAD_CHARS, read.get(30, TimeUnit.SECONDS).getString("payload").length(), "the retried read has it whole");
            assertEquals(2, Meters.attempts(set.proxy().registry(), "find") - findsBefore,
                    "the reset threw away the rest of the first reply, so the driver saw a network error and read again");
            assertEquals(1, Meters.outcomes(set.proxy().registry(), "find", "network_error") - cutBefore,
                    "the first read counts as cut, not delivered");
            assertEquals(1, Meters.faults(set.proxy().registry(), DeploymentFaults.CONNECTIONS_RESET, "find"));
        }
    }

    @Test
    void aLargeInsertOnANarrowLinkReachesTheMemberAtTheRate() throws Exception {
        String db = UpstreamLane.freshDatabaseName("bandwidthup");
        try (MongoClient client = set.client("heartbeatFrequencyMS=500")) {
            MongoCollection<Document> c = insertedThenNarrowed(client, db);
            long insertsBefore = Meters.attempts(set.proxy().registry(), "insert");
            long started = System.nanoTime();
            c.insertOne(new Document("_id", 1).append("payload", "x".repeat(PAYLOAD_CHARS)));
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            assertTrue(tookMillis >= 3_000, "a 300 KB insert at 100 KB a second took " + tookMillis + " ms, under 3 s");
            assertEquals(1, Meters.attempts(set.proxy().registry(), "insert") - insertsBefore, "in one attempt");
        }
        assertEquals(PAYLOAD_CHARS, set.direct().getDatabase(db).getCollection("c").find(new Document("_id", 1)).first()
                .getString("payload").length(), "the member holds it whole");
    }

    @Test
    void aSocketTimeoutWhileALargeInsertIsOnItsWayLeavesTheClientNotKnowingTheMemberAppliesIt() throws Exception {
        String db = UpstreamLane.freshDatabaseName("bandwidthunknown");
        // 500 KB: five seconds at the rate, and the socket's buffers take a few hundred KB of it at once, so the
        // driver's wait for the reply starts well before its last byte has crossed
        try (MongoClient client = set.client("socketTimeoutMS=1000&retryWrites=false&heartbeatFrequencyMS=500")) {
            MongoCollection<Document> c = insertedThenNarrowed(client, db);
            assertThrows(MongoSocketReadTimeoutException.class,
                    () -> c.insertOne(new Document("_id", 1).append("payload", "x".repeat(5 * PAYLOAD_CHARS / 3))));
        }
        MongoCollection<Document> onTheServer = set.direct().getDatabase(db).getCollection("c");
        Await.until(WAIT, "the insert the client gave up on to land", () -> onTheServer.countDocuments(new Document("_id", 1)) == 1);
        assertEquals(5 * PAYLOAD_CHARS / 3, onTheServer.find(new Document("_id", 1)).first().getString("payload").length(),
                "whole: the client's close came behind what it had sent");
    }

    @Test
    void aClientThatGivesUpOnAnInsertStillOnItsWayClosesBehindItSoTheMemberGetsItAtTheRate() throws Exception {
        String db = UpstreamLane.freshDatabaseName("bandwidthfin");
        long started;
        try (MongoClient client = set.client("socketTimeoutMS=1000&retryWrites=false&heartbeatFrequencyMS=500")) {
            MongoCollection<Document> c = insertedThenNarrowed(client, db, new Bandwidth(10_000, Direction.REQUESTS));
            started = System.nanoTime();
            // 60 KB: the socket's buffers and the link take it at once, and it crosses in six seconds
            assertThrows(MongoSocketReadTimeoutException.class, () -> c.insertOne(new Document("_id", 1).append("payload", "x".repeat(60_000))));
        }
        MongoCollection<Document> onTheServer = set.direct().getDatabase(db).getCollection("c");
        Await.until(WAIT, "the insert the client gave up on to land", () -> onTheServer.countDocuments(new Document("_id", 1)) == 1);
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        assertTrue(tookMillis >= 5_000, "it landed " + tookMillis + " ms after it was sent: the client's FIN went before what it had"
                + " sent, which crosses in six seconds, five of them after the client's one-second timeout and close");
    }

    @Test
    void aBandwidthOnRepliesOnlyNarrowsALargeReadAndLeavesALargeInsertAlone() throws Exception {
        String db = withALargeDocument("bandwidthreplies");
        // if requests were narrowed, the 1 MB insert would take ten seconds and meet the 5 s socket timeout
        try (MongoClient client = set.client("socketTimeoutMS=5000&retryWrites=false&heartbeatFrequencyMS=500")) {
            MongoCollection<Document> c = insertedThenNarrowed(client, db, new Bandwidth(RATE, Direction.REPLIES));
            long insertsBefore = Meters.attempts(set.proxy().registry(), "insert");
            c.insertOne(new Document("_id", 3).append("payload", "x".repeat(10 * PAYLOAD_CHARS / 3)));
            assertEquals(1, Meters.attempts(set.proxy().registry(), "insert") - insertsBefore, "in one attempt, no timeout");

            long started = System.nanoTime();
            assertEquals(PAYLOAD_CHARS, c.find(new Document("_id", 1)).first().getString("payload").length());
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            assertTrue(tookMillis >= 3_000, "a 300 KB reply at 100 KB a second took " + tookMillis + " ms, under 3 s");
        }
        assertEquals(10 * PAYLOAD_CHARS / 3, set.direct().getDatabase(db).getCollection("c").find(new Document("_id", 3)).first()
                .getString("payload").length(), "the member holds the insert whole");
    }

    /**
     * A reset cuts a large insert while it crosses a narrow link towards the member. Its body (the command, lsid and
     * txnNumber) came first and whole, so the attempt the driver sent and saw fail is counted, with the reset as its
     * fault, and the driver's retry as the retry it is: before, the proxy counted the retry as a first attempt and the
     * reset as nothing (a GridFS user's 8 cut chunks were 1 retry and no fault).
     */
    @Test
    void aLargeInsertAResetCutsOnItsWayIsCountedWithItsFaultAndItsRetryIsARetry() throws Exception {
        String db = UpstreamLane.freshDatabaseName("bandwidthcut");
        try (MongoClient client = set.client("retryWrites=true&heartbeatFrequencyMS=500");
             LogCapture log = LogCapture.start()) {
            MongoCollection<Document> c = insertedThenNarrowed(client, db, new Bandwidth(RATE / 2, Direction.REQUESTS));
            long attempts = Meters.attempts(set.proxy().registry(), "insert");
            long retries = Meters.retries(set.proxy().registry(), "insert");
            long cut = Meters.outcomes(set.proxy().registry(), "insert", "network_error");
            long resets = Meters.faults(set.proxy().registry(), DeploymentFaults.CONNECTIONS_RESET, "insert");
            java.util.concurrent.CompletableFuture<Void> insert = java.util.concurrent.CompletableFuture.runAsync(
                    () -> c.insertOne(new Document("_id", 3).append("payload", "x".repeat(PAYLOAD_CHARS))));
            Thread.sleep(1_000); // a sixth of the insert has crossed: its body first
            assertTrue(set.proxy().resetConnections("primary") > 0);
            set.proxy().restore("primary"); // then the retry crosses a wide link (or a narrow one, if it was quicker)
            insert.get(30, TimeUnit.SECONDS);
            assertTrue(log.messages().stream().anyMatch(m -> m.contains(" closed in the middle of a message (")), log.messages()::toString);
            assertEquals(2, Meters.attempts(set.proxy().registry(), "insert") - attempts, "the cut insert and its retry");
            assertEquals(1, Meters.retries(set.proxy().registry(), "insert") - retries, "its retry, counted as one");
            assertEquals(1, Meters.outcomes(set.proxy().registry(), "insert", "network_error") - cut);
            assertEquals(1, Meters.faults(set.proxy().registry(), DeploymentFaults.CONNECTIONS_RESET, "insert") - resets);
        }
        assertEquals(PAYLOAD_CHARS, set.direct().getDatabase(db).getCollection("c").find(new Document("_id", 3)).first()
                .getString("payload").length(), "the retry's insert, whole: the cut one never reached the member");
    }

    @Test
    void aBandwidthOnRequestsOnlyNarrowsALargeInsertAndLeavesALargeReadAlone() throws Exception {
        String db = withALargeDocument("bandwidthrequests");
        try (MongoClient client = set.client("heartbeatFrequencyMS=500")) {
            MongoCollection<Document> c = insertedThenNarrowed(client, db, new Bandwidth(RATE / 2, Direction.REQUESTS));
            long started = System.nanoTime();
            c.insertOne(new Document("_id", 3).append("payload", "x".repeat(PAYLOAD_CHARS)));
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            assertTrue(tookMillis >= 6_000, "a 300 KB insert at 50 KB a second took " + tookMillis + " ms, under 6 s");

            // if replies were narrowed, this read would take six seconds and meet its 4 s timeoutMS
            long findsBefore = Meters.attempts(set.proxy().registry(), "find");
            assertEquals(PAYLOAD_CHARS, c.withTimeout(4, TimeUnit.SECONDS).find(new Document("_id", 1)).first()
                    .getString("payload").length());
            assertEquals(1, Meters.attempts(set.proxy().registry(), "find") - findsBefore, "in one attempt");
        }
        assertEquals(PAYLOAD_CHARS, set.direct().getDatabase(db).getCollection("c").find(new Document("_id", 3)).first()
                .getString("payload").length(), "the member holds the insert whole");
    }

    @Test
    void aBandwidthEndsOnTimeByRestoreOrResetAndAScenarioEndsOnlyItsOwn() throws Exception {
        LinkFaultEnds.check(set, "bandwidth", set.proxy()::bandwidth, MemberListener::bandwidth,
                List.of(new Bandwidth(RATE), new Bandwidth(5_000), new Bandwidth(7_000)),
                "bandwidth: {member: %s, rate: 64KiB/s}", new Bandwidth(64 * 1024));
        MemberListener second = set.proxy().listener(set.proxy().members().get(1).upstream());
        List<DeploymentFaults.Begun> latency = set.proxy().latency(set.upstream(1), new Latency(50, 0), 0);
        set.proxy().endIfStill(latency.get(0));
        assertNull(second.latency());
        assertEquals(new Bandwidth(7_000), second.bandwidth(), "a latency's end is not its bandwidth's: two faults");
    }
}
