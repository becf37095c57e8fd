package io.blackpipe.fault;

import static com.mongodb.client.model.Filters.eq;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoSocketReadTimeoutException;
import com.mongodb.MongoWriteConcernException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.connection.ServerDescription;
import com.mongodb.event.CommandSucceededEvent;
import io.blackpipe.testing.Await;
import java.net.SocketException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * The connection and reply faults, each proven with the real Java driver through the proxy: what
 * the driver raised, whether it retried (its CommandStartedEvents against the proxy's attempt and
 * retry counters), and what the server holds afterwards.
 */
class FaultActionsDriverTest extends DriverRigTest {
    private static long elapsedMillis(Runnable operation) {
        long start = System.nanoTime();
        operation.run();
        return (System.nanoTime() - start) / 1_000_000;
    }

    /**
     * closeConnection is a server closing its socket (FIN): the driver reads end of stream. A
     * reset (SO_LINGER 0) is a network failing: the driver's read fails with "Connection reset".
     * The two are distinct faults, so each test checks which one the driver actually met.
     */
    private static void assertClosedByFin(MongoSocketException e) {
        assertTrue(e.getMessage().contains("Prematurely reached end of stream") && !(e.getCause() instanceof SocketException),
                "a FIN: the driver reads end of stream, no reset: " + e + " caused by " + e.getCause());
    }

    private static void assertClosedByReset(MongoSocketException e) {
        assertTrue(e.getCause() instanceof SocketException && String.valueOf(e.getCause().getMessage()).contains("reset"),
                "an RST: the driver's read fails with a connection reset, not end of stream: " + e + " caused by " + e.getCause());
    }

    // ---- closeConnection (FIN) and resetConnection (RST): the server never sees the command ----

    @Test
    void closeConnectionOnARetryableInsertIsRetriedOnceAndTheDocumentIsStoredOnce() {
        rig.rule("{times: 1}", "insert", "closeConnection: true");
        rig.collection(rig.client("retryWrites=true")).insertOne(new Document("_id", 1));
        rig.assertAttempts("insert", 2, 1);
        assertEquals(1, rig.faults("closeConnection", "insert"));
        assertEquals(1, rig.outcomes("insert", "network_error"));
        assertEquals(1, rig.outcomes("insert", "ok"));
        assertEquals(1, rig.serverCount());
    }

    @Test
    void closeConnectionWithoutRetryableWritesSurfacesASocketErrorAndNothingIsStored() {
        rig.rule("{times: 1}", "insert", "closeConnection: true");
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=false"));
        MongoSocketException e = assertThrows(MongoSocketException.class, () -> c.insertOne(new Document("_id", 1)));
        assertClosedByFin(e);
        rig.assertAttempts("insert", 1, 0);
        assertEquals(1, rig.outcomes("insert", "network_error"));
        assertEquals(0, rig.serverCount());
    }

    @Test
    void resetConnectionOnARetryableInsertIsRetriedOnceAndTheDocumentIsStoredOnce() {
        rig.rule("{times: 1}", "insert", "resetConnection: true");
        rig.collection(rig.client("retryWrites=true")).insertOne(new Document("_id", 1));
        rig.assertAttempts("insert", 2, 1);
        assertEquals(1, rig.faults("resetConnection", "insert"));
        assertEquals(1, rig.outcomes("insert", "network_error"));
        assertEquals(1, rig.outcomes("insert", "ok"));
        assertEquals(1, rig.serverCount());
    }

    @Test
    void resetConnectionWithoutRetryableWritesSurfacesASocketErrorAndNothingIsStored() {
        rig.rule("{times: 1}", "insert", "resetConnection: true");
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=false"));
        MongoSocketException e = assertThrows(MongoSocketException.class, () -> c.insertOne(new Document("_id", 1)));
        assertClosedByReset(e);
        rig.assertAttempts("insert", 1, 0);
        assertEquals(1, rig.outcomes("insert", "network_error"));
        assertEquals(0, rig.serverCount(), "reset before forwarding: the server never saw it (" + e + ")");
    }

    // ---- hang: nothing forwarded, nothing answered, until the client's socket timeout ----

    @Test
    void hangEndsInTheDriversSocketTimeoutAndIsCountedOnceTheClientGivesUp() throws InterruptedException {
        rig.rule("{times: 1}", "insert", "hang: true");
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=false&socketTimeoutMS=1000"));
        long took = elapsedMillis(() -> assertThrows(MongoSocketReadTimeoutException.class, () -> c.insertOne(new Document("_id", 1))));
        assertTrue(took >= 900, "the driver gave up at its socket timeout, not before: " + took + " ms");
        rig.assertAttempts("insert", 1, 0);
        assertEquals(1, rig.faults("hang", "insert"));
        rig.awaitOutcome("insert", "network_error", 1);
        assertEquals(0, rig.serverCount(), "a hung command never reaches the server");
        c.insertOne(new Document("_id", 2)); // the rule is spent and a new connection works
        assertEquals(1, rig.serverCount());
    }

    @Test
    void hangOnARetryableInsertTimesOutThenTheRetrySucceeds() throws InterruptedException {
        rig.rule("{times: 1}", "insert", "hang: true");
        rig.collection(rig.client("retryWrites=true&socketTimeoutMS=1000")).insertOne(new Document("_id", 1));
        rig.assertAttempts("insert", 2, 1);
        rig.awaitOutcome("insert", "network_error", 1);
        assertEquals(1, rig.outcomes("insert", "ok"));
        assertEquals(1, rig.serverCount());
    }

    // ---- dropReply: applied on the server, reply lost ----

    @Test
    void dropReplyOnAnIncWithoutRetriesRaisesANetworkErrorWhileTheServersCounterMoved() {
        rig.serverSide("counters").insertOne(new Document("_id", "day").append("counter", 0));
        rig.rule("{times: 1}", "update", "dropReply: true");
        MongoCollection<Document> counters = rig.client("retryWrites=false").getDatabase(rig.db).getCollection("counters");
        MongoSocketException e = assertThrows(MongoSocketException.class,
                () -> counters.updateOne(eq("_id", "day"), Updates.inc("counter", 1), new UpdateOptions().upsert(true)));
        assertClosedByReset(e);
        rig.assertAttempts("update", 1, 0);
        assertEquals(1, rig.faults("dropReply", "update"));
        assertEquals(1, rig.outcomes("update", "network_error"));
        assertEquals(1, rig.serverSide("counters").find(eq("_id", "day")).first().getInteger("counter"));
    }

    @Test
    void dropReplyOnAnIncWithRetriesIsRetriedAndTheCounterMovesAsTheServerDeDuplicates() {
        rig.rule("{times: 1}", "update", "dropReply: true");
        MongoCollection<Document> counters = rig.client("retryWrites=true").getDatabase(rig.db).getCollection("counters");
        counters.updateOne(eq("_id", "day"), Updates.inc("counter", 1), new UpdateOptions().upsert(true));
        rig.assertAttempts("update", 2, 1);
        assertEquals(1, rig.outcomes("update", "network_error"));
        assertEquals(1, rig.outcomes("update", "ok"));
        // the retry carries the same lsid+txnNumber: mongod answers it from the first run, and so does blackpipe in
        // the place of a member that would run it again (jongodb)
        assertEquals(1, rig.serverSide("counters").find(eq("_id", "day")).first().getInteger("counter"), "applied once");
    }

    // ---- delayReplyMS and blockConnection: slow, then as usual ----

    @Test
    void delayReplyHoldsTheReplyAndTheCallSucceeds() {
        rig.rule("{times: 1}", "insert", "delayReplyMS: 500");
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=true"));
        long took = elapsedMillis(() -> c.insertOne(new Document("_id", 1)));
        assertTrue(took >= 500 && took < 4000, "took " + took + " ms");
        rig.assertAttempts("insert", 1, 0);
        assertEquals(1, rig.faults("delayReply", "insert"));
        assertEquals(1, rig.outcomes("insert", "ok"));
        assertEquals(1, rig.serverCount());
        long next = elapsedMillis(() -> c.insertOne(new Document("_id", 2)));
        assertTrue(next < 500, "the rule is spent: " + next + " ms");
    }

    /**
     * failAllCommands, as on the server: every command of the app whatever its name. A delay is a
     * fate of the reply, which hellos cannot take here, so the driver's monitoring stays quick.
     */
    @Test
    void aDelayOnAllCommandsHoldsEveryReplyButTheMonitors() throws InterruptedException {
        rig.rule("{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failAllCommands: true, delayReplyMS: 300}}");
        MongoClient client = rig.client("retryWrites=true&heartbeatFrequencyMS=500");
        MongoCollection<Document> c = rig.collection(client);
        c.insertOne(new Document("_id", 1));
        assertEquals(1, c.find().first().getInteger("_id"));
        assertEquals(1, c.countDocuments());
        client.getDatabase(rig.db).runCommand(new Document("ping", 1));
        List<String> delayed = new ArrayList<>();
        for (CommandSucceededEvent e : rig.driverSucceeded()) {
            assertTrue(e.getElapsedTime(TimeUnit.MILLISECONDS) >= 300, e.getCommandName() + " took " + e.getElapsedTime(TimeUnit.MILLISECONDS) + " ms");
            delayed.add(e.getCommandName());
        }
        assertEquals(List.of("insert", "find", "aggregate", "ping"), delayed);
        for (String command : delayed) {
            assertEquals(1, rig.faults("delayReply", command), command);
        }
        assertEquals(4, rig.allFaults(), "no hello was delayed");
        // the driver's round trip is an average whose first, cold sample may be slow on a loaded machine: it comes under
        // the delay within a few heartbeats, which it never would were hellos delayed
        Await.until(Duration.ofSeconds(10), "the driver's round trip to every member under the 300 ms delay", () -> client
                .getClusterDescription().getServerDescriptions().stream()
                .allMatch(member -> member.getRoundTripTimeNanos() < TimeUnit.MILLISECONDS.toNanos(300)));
        assertEquals(1, rig.serverCount());
    }

    @Test
    void blockConnectionWithoutAnErrorWaitsThenForwards() {
        rig.rule("{times: 1}", "insert", "blockConnection: true, blockTimeMS: 300");
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=true"));
        long took = elapsedMillis(() -> c.insertOne(new Document("_id", 1)));
        assertTrue(took >= 300 && took < 4000, "took " + took + " ms");
        rig.assertAttempts("insert", 1, 0);
        assertEquals(1, rig.faults("blockConnection", "insert"));
        assertEquals(1, rig.outcomes("insert", "ok"));
        assertEquals(1, rig.serverCount());
    }

    @Test
    void blockConnectionWithAnErrorWaitsThenAnswersWithIt() {
        rig.rule("{times: 1}", "insert", "blockConnection: true, blockTimeMS: 300, errorCode: 13");
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=true"));
        long start = System.nanoTime();
        MongoCommandException e = assertThrows(MongoCommandException.class, () -> c.insertOne(new Document("_id", 1)));
        long took = (System.nanoTime() - start) / 1_000_000;
        assertEquals(13, e.getErrorCode());
        assertTrue(took >= 300 && took < 4000, "took " + took + " ms");
        rig.assertAttempts("insert", 1, 0);
        assertEquals(1, rig.faults("errorReply", "insert"));
        assertEquals(1, rig.outcomes("insert", "error"));
        assertEquals(0, rig.serverCount());
    }

    @Test
    void aBlockedCommandKeepsItsPlaceAndTheConnectionServesTheNextCommand() {
        rig.rule("{times: 1}", "insert", "blockConnection: true, blockTimeMS: 200");
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=true&maxPoolSize=1"));
        c.insertOne(new Document("_id", 1));
        c.insertOne(new Document("_id", 2));
        assertEquals(2, c.countDocuments());
        rig.assertAttempts("insert", 2, 0);
    }

    // ---- the client gives up while a fault holds the command or its reply ----

    /**
     * mongod runs a command blocked by failCommand even when its client has gone (the block does
     * not watch the socket, and writes are not killed on disconnect): the write lands when the
     * block ends and its reply goes nowhere. The client saw a network error: an unknown outcome.
     */
    @Test
    void aClientThatGivesUpDuringABlockIsCountedAtOnceAndTheMemberRunsTheCommandWhenTheBlockEnds() throws InterruptedException {
        rig.rule("{times: 1}", "insert", "blockConnection: true, blockTimeMS: 3000");
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=false&socketTimeoutMS=400"));
        long start = System.nanoTime();
        assertThrows(MongoSocketReadTimeoutException.class, () -> c.insertOne(new Document("_id", 1)));
        rig.assertAttempts("insert", 1, 0);
        rig.awaitOutcome("insert", "network_error", 1);
        long seenAfter = (System.nanoTime() - start) / 1_000_000;
        assertTrue(seenAfter < 2500, "the proxy saw the client go during the block, not after it: " + seenAfter + " ms");
        assertEquals(0, rig.serverCount(), "nothing reaches the member before the block ends");
        Thread.sleep(3000 - seenAfter); // to the block's end: a loaded machine may take a while more to run it
        Await.until(Duration.ofSeconds(10), "the member to run the command when the block ended, as mongod does",
                () -> rig.serverCount() == 1);
        assertEquals(1, rig.outcomes("insert", "network_error"), "counted once, as the client saw it");
        assertEquals(0, rig.outcomes("insert", "ok"), "the client never got an answer");
        assertEquals("network_error", rig.proxy.history().recent().get(0).outcome());
    }

    @Test
    void closingTheProxyWhileACommandWaitsForItsBlockToEndReleasesIt() throws InterruptedException {
        rig.rule("{times: 1}", "insert", "blockConnection: true, blockTimeMS: 1500");
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=false&socketTimeoutMS=400"));
        assertThrows(MongoSocketReadTimeoutException.class, () -> c.insertOne(new Document("_id", 1)));
        rig.awaitOutcome("insert", "network_error", 1);
        rig.proxy.close(); // the command waits in the proxy for its block's end; the leak check sees it released
        Thread.sleep(1500 + 500);
        assertEquals(0, rig.serverCount(), "the proxy went away, and the waiting command with it");
    }

    @Test
    void aClientThatGivesUpDuringABlockThatEndsInAnErrorLeavesNothingOnTheMember() throws InterruptedException {
        rig.rule("{times: 1}", "insert", "blockConnection: true, blockTimeMS: 1500, errorCode: 13");
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=false&socketTimeoutMS=400"));
        assertThrows(MongoSocketReadTimeoutException.class, () -> c.insertOne(new Document("_id", 1)));
        rig.awaitOutcome("insert", "network_error", 1);
        Thread.sleep(1500 + 500); // past the block: the server would have failed the command, not run it
        assertEquals(0, rig.serverCount(), "a block followed by an error never runs the command");
        assertEquals(1, rig.outcomes("insert", "network_error"));
    }

    @Test
    void aClientThatGivesUpDuringADelayedReplyIsCountedOnceWhileTheWriteHappened() throws InterruptedException {
        rig.rule("{times: 1}", "insert", "delayReplyMS: 1500");
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=false&socketTimeoutMS=400"));
        assertThrows(MongoSocketReadTimeoutException.class, () -> c.insertOne(new Document("_id", 1)));
        rig.assertAttempts("insert", 1, 0);
        rig.awaitOutcome("insert", "network_error", 1);
        Thread.sleep(1500); // past the delay
        assertEquals(1, rig.outcomes("insert", "network_error"), "counted once");
        assertEquals(0, rig.outcomes("insert", "ok"));
        assertEquals(1, rig.serverCount(), "forwarded at once: the server applied it");
    }

    // ---- unacknowledged (w:0, moreToCome) writes expect no reply ----

    @Test
    void anErrorForAnUnacknowledgedWriteIsNotSentToAClientThatExpectsNoReply() {
        rig.rule("{times: 1}", "insert", "errorCode: 13");
        MongoClient client = rig.client("retryWrites=false&w=0&maxPoolSize=1");
        MongoCollection<Document> c = rig.collection(client);
        c.insertOne(new Document("_id", 1)); // fire and forget: the proxy "fails" it
        // the same (only) connection must still be in step: an unsolicited reply would answer this find
        assertEquals(0, c.withWriteConcern(com.mongodb.WriteConcern.ACKNOWLEDGED).countDocuments());
        c.withWriteConcern(com.mongodb.WriteConcern.ACKNOWLEDGED).insertOne(new Document("_id", 2));
        assertEquals(1, rig.serverCount());
        assertEquals(1, rig.faults("errorReply", "insert"));
    }

    // ---- writeConcernError: the write happened, the reply says it may not be durable ----

    @Test
    void writeConcernErrorRaisesMongoWriteConcernExceptionWhileTheDocumentIsStored() {
        rig.rule("{times: 1}", "insert", "writeConcernError: {code: 64, errmsg: 'waiting for replication timed out'}");
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=false"));
        MongoWriteConcernException e = assertThrows(MongoWriteConcernException.class, () -> c.insertOne(new Document("_id", 1)));
        assertEquals(64, e.getWriteConcernError().getCode());
        rig.assertAttempts("insert", 1, 0);
        assertEquals(1, rig.faults("writeConcernError", "insert"));
        assertEquals(1, rig.outcomes("insert", "error"));
        assertEquals(1, rig.serverCount(), "the document IS on the server");
    }

    /** As on the server: a find takes no write concern, so it neither gets one nor spends the rule's times. */
    @Test
    void aWriteConcernErrorRuleLeavesReadsAloneAndSpendsItsTimesOnTheWrite() {
        rig.serverSide("c").insertOne(new Document("_id", 1));
        rig.rule("{times: 1}", "find', 'insert", "writeConcernError: {code: 64}");
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=false"));
        assertEquals(1, c.find(new Document("_id", 1)).first().getInteger("_id"));
        assertThrows(MongoWriteConcernException.class, () -> c.insertOne(new Document("_id", 2)));
        assertEquals(0, rig.faults("writeConcernError", "find"));
        assertEquals(1, rig.faults("writeConcernError", "insert"));
        assertEquals(2, rig.serverCount());
    }

    @Test
    void writeConcernFailedOnARetryableWriteIsNotLabelledAndNotRetried() {
        rig.rule("{times: 1}", "insert", "writeConcernError: {code: 64}");
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=true"));
        MongoWriteConcernException e = assertThrows(MongoWriteConcernException.class, () -> c.insertOne(new Document("_id", 1)));
        assertFalse(e.hasErrorLabel("RetryableWriteError"), "a mongod does not label a wtimeout retryable: " + e.getErrorLabels());
        rig.assertAttempts("insert", 1, 0);
        assertEquals(1, rig.serverCount());
    }

    @Test
    void aShutdownWriteConcernErrorIsRetriedAndTheRetryMeetsTheAppliedWrite() {
        rig.rule("{times: 1}", "insert", "writeConcernError: {code: 91, errmsg: 'Replication is being shut down'}");
        // the error marks the member Unknown and carries no topologyVersion, as failCommand's on mongod: the
        // retry waits for the monitor's next heartbeat, which mongod (and the proxy for jongodb) holds up to it
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=true&heartbeatFrequencyMS=500"));
        c.insertOne(new Document("_id", 1)); // the retry is answered with the first attempt's result, not run again
        assertEquals(1, rig.outcomes("insert", "ok"));
        rig.assertAttempts("insert", 2, 1);
        assertEquals(1, rig.faults("writeConcernError", "insert"), "only the first attempt was faulted");
        assertEquals(2, rig.outcomes("insert", "error") + rig.outcomes("insert", "ok"));
        assertEquals(1, rig.serverCount());
    }
}
