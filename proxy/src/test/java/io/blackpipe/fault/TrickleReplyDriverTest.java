package io.blackpipe.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoOperationTimeoutException;
import com.mongodb.MongoSocketReadTimeoutException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.LogCapture;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.bson.Document;
import org.bson.RawBsonDocument;
import org.bson.codecs.DocumentCodec;
import org.junit.jupiter.api.Test;

/**
 * trickleReply, proven with the real Java driver through the proxy: a reply that trickles in
 * pieces, each well within socketTimeoutMS, never trips it however long the whole takes, while
 * the driver's operation timeout (timeoutMS) does; a pause longer than socketTimeoutMS loses the
 * reply of a write that happened.
 */
class TrickleReplyDriverTest extends DriverRigTest {
    private static final int PIECE = 256;
    private static final int INTERVAL_MS = 100;
    private static final String TRICKLE = "trickleReplyBytes: " + PIECE + ", trickleReplyIntervalMS: " + INTERVAL_MS;

    private static long elapsedMillis(Runnable operation) {
        long start = System.nanoTime();
        operation.run();
        return (System.nanoTime() - start) / 1_000_000;
    }

    /**
     * 24 documents of some 330 bytes on the server and a rule trickling the next find's reply in
     * pieces of {@link #PIECE} bytes every {@link #INTERVAL_MS} ms; returns the least time that takes:
     * the reply holds every document, so it has at least their bytes, the first piece going out at once.
     */
    private long aTrickledFindOfManyDocuments(List<Document> documents) {
        IntStream.range(0, 24).forEach(i -> documents.add(new Document("_id", i).append("text", "x".repeat(300))));
        rig.serverSide("c").insertMany(documents);
        rig.rule("{times: 1}", "find", TRICKLE);
        long bytes = documents.stream().mapToLong(d -> new RawBsonDocument(d, new DocumentCodec()).getByteBuffer().remaining()).sum();
        long pieces = (bytes + PIECE - 1) / PIECE;
        return (pieces - 1) * INTERVAL_MS;
    }

    @Test
    void aTrickledFindArrivesWholeLongAfterTheSocketTimeoutWithoutTrippingIt() {
        List<Document> documents = new ArrayList<>();
        long leastTrickle = aTrickledFindOfManyDocuments(documents);
        assertTrue(leastTrickle >= 3 * 600, "the whole trickle outlasts the socket timeout several times: " + leastTrickle + " ms");
        MongoCollection<Document> c = rig.collection(rig.client("socketTimeoutMS=600"));

        List<Document> found = new ArrayList<>();
        long took = elapsedMillis(() -> c.find().sort(new Document("_id", 1)).into(found));
        assertEquals(documents, found, "every document, whole");
        assertTrue(took >= leastTrickle, "took " + took + " ms, the trickle at least " + leastTrickle + " ms");
        rig.assertAttempts("find", 1, 0);
        assertEquals(1, rig.faults("trickleReply", "find"));
        assertEquals(1, rig.outcomes("find", "ok"));
        assertEquals(1, rig.proxy.rules().fired("r0"));
        assertEquals(1, rig.allFaults(), "no hello or other command was trickled");

        long next = elapsedMillis(() -> c.find().into(new ArrayList<>()));
        assertTrue(next < leastTrickle, "the rule is spent: " + next + " ms");
    }

    @Test
    void aPauseLongerThanTheSocketTimeoutLosesTheReplyOfAnInsertThatHappened() throws InterruptedException {
        try (LogCapture log = LogCapture.start()) {
            rig.rule("{times: 1}", "insert", "trickleReplyBytes: 16, trickleReplyIntervalMS: 3000");
            MongoCollection<Document> c = rig.collection(rig.client("retryWrites=false&socketTimeoutMS=500"));
            long took = elapsedMillis(() -> assertThrows(MongoSocketReadTimeoutException.class, () -> c.insertOne(new Document("_id", 1))));
            assertTrue(took < 3000, "the first piece came at once, the second not within 500 ms: " + took + " ms");
            rig.assertAttempts("insert", 1, 0);
            // the driver closed its connection: the trickle stops there, its reply released, the attempt ended once
            rig.awaitOutcome("insert", "network_error", 1);
            assertEquals(0, rig.outcomes("insert", "ok"));
            assertEquals(1, rig.faults("trickleReply", "insert"));
            assertEquals(1, rig.serverCount(), "forwarded at once: the server applied it, its reply was lost");

            c.insertOne(new Document("_id", 2)); // the proxy serves on, the rule spent
            assertEquals(2, rig.serverCount());
            assertEquals(1, rig.proxy.rules().fired("r0"));
            List<String> unexpected = log.messages().stream().filter(m -> m.contains("unexpected error")).toList();
            assertEquals(List.of(), unexpected, "a client leaving mid-trickle is no error");
        }
    }

    @Test
    void theOperationTimeoutEndsATrickleThatNoSocketTimeoutEnds() throws InterruptedException {
        List<Document> documents = new ArrayList<>();
        long leastTrickle = aTrickledFindOfManyDocuments(documents);
        // each piece comes within 100 ms, far inside socketTimeoutMS; the whole outlasts timeoutMS
        MongoCollection<Document> c = rig.collection(rig.client("socketTimeoutMS=600&timeoutMS=1000&retryReads=false"));

        long took = elapsedMillis(() -> {
            MongoOperationTimeoutException e = assertThrows(MongoOperationTimeoutException.class, () -> c.find().into(new ArrayList<>()));
            assertInstanceOf(MongoSocketReadTimeoutException.class, e.getCause(), "the 5.14 driver's read ended at the operation's deadline");
        });
        // at timeoutMS (the driver's own clock may end it a millisecond early), well after socketTimeoutMS's 600
        assertTrue(took >= 900 && took < leastTrickle, "timeoutMS ended it after " + took + " ms, before the trickle's "
                + leastTrickle + " ms");
        rig.assertAttempts("find", 1, 0);
        rig.awaitOutcome("find", "network_error", 1);
        assertEquals(1, rig.faults("trickleReply", "find"));
        assertEquals(1, rig.proxy.rules().fired("r0"));
    }

    @Test
    void aTrickleHoldsOnlyItsOwnConnection() throws Exception {
        List<Document> documents = new ArrayList<>();
        long leastTrickle = aTrickledFindOfManyDocuments(documents);
        MongoCollection<Document> slow = rig.collection(rig.client("socketTimeoutMS=600"));
        MongoClient otherClient = rig.client("socketTimeoutMS=600");
        MongoCollection<Document> other = rig.collection(otherClient);
        // its write goes to another collection: the trickled find may reach the server after it
        MongoCollection<Document> elsewhere = otherClient.getDatabase(rig.db).getCollection("elsewhere");
        // connected before the trickle (a ping: the rule trickles the next find): what it times below is commands alone
        otherClient.getDatabase(rig.db).runCommand(new Document("ping", 1));

        CompletableFuture<List<Document>> trickled = CompletableFuture.supplyAsync(() -> slow.find().into(new ArrayList<>()));
        Await.until(Duration.ofSeconds(10), "the find's trickle to begin", () -> rig.faults("trickleReply", "find") == 1);
        long took = elapsedMillis(() -> {
            elsewhere.insertOne(new Document("_id", "other"));
            assertEquals(1, elsewhere.countDocuments(new Document("_id", "other")));
            assertEquals(List.of(documents.get(0)), other.find(new Document("_id", 0)).into(new ArrayList<>()));
        });
        assertFalse(trickled.isDone(), "another connection's commands (" + took + " ms) went by the trickle, which lasts "
                + leastTrickle + " ms");
        assertEquals(documents.size(), trickled.get(30, TimeUnit.SECONDS).size());
        assertEquals(1, rig.faults("trickleReply", "find"));
        assertEquals(1, rig.allFaults());
        assertEquals(1, rig.proxy.rules().fired("r0"));
        assertEquals(2, rig.outcomes("find", "ok"));
    }
}
