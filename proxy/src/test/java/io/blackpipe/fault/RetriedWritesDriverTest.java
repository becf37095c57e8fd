package io.blackpipe.fault;

import static com.mongodb.client.model.Filters.eq;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.MongoSocketException;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import io.blackpipe.pipe.MemberListener;
import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.UpstreamLane;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * A retryable write that comes again with its lsid and txnNumber runs once, on every lane: mongod
 * answers it from its first run (the retryable writes spec), and blackpipe answers it so in the place
 * of a member that would run it again (jongodb: RetriedWrites). What the driver gets is the first
 * run's reply: a findAndModify's document, a batch's count.
 */
class RetriedWritesDriverTest extends DriverRigTest {
    private int counter() {
        return rig.serverSide("counters").find(eq("_id", "day")).first().getInteger("counter");
    }

    private MongoCollection<Document> counters(String options) {
        return rig.client(options).getDatabase(rig.db).getCollection("counters");
    }

    @Test
    void aFindAndModifyWhoseReplyWasLostIsAnsweredWithItsFirstRunsDocument() {
        rig.serverSide("counters").insertOne(new Document("_id", "day").append("counter", 5));
        rig.rule("{times: 1}", "findAndModify", "dropReply: true");
        Document before = counters("retryWrites=true").findOneAndUpdate(eq("_id", "day"), Updates.inc("counter", 1),
                new FindOneAndUpdateOptions().returnDocument(ReturnDocument.BEFORE));
        assertEquals(5, before.getInteger("counter"), "the document as it was before the one run, not before a second");
        assertEquals(6, counter(), "incremented once");
        rig.assertAttempts("findAndModify", 2, 1);
    }

    @Test
    void aBatchWhoseReplyWasLostIsCountedWholeAndStoredOnce() {
        rig.rule("{times: 1}", "insert", "dropReply: true");
        MongoCollection<Document> c = rig.collection(rig.client("retryWrites=true"));
        c.insertMany(List.of(new Document("_id", 1), new Document("_id", 2), new Document("_id", 3)));
        List<Object> ids = new ArrayList<>();
        rig.serverSide("c").find().sort(Sorts.ascending("_id")).forEach(d -> ids.add(d.get("_id")));
        assertEquals(List.of(1, 2, 3), ids);
        rig.assertAttempts("insert", 2, 1);
        assertEquals(1, rig.outcomes("insert", "ok"), "the retry was answered ok, not with its own duplicate keys");
    }

    /**
     * A lost reply's retry, held by a rule, comes after over 64 MiB of other findAndModify replies (five 14 MB documents
     * returned): the write still runs once, on every lane. On mongod the retry is answered from the oplog; where blackpipe
     * answers it (jongodb), its first run's reply was forgotten for those later ones, and it is refused with
     * IncompleteTransactionHistory, as mongod refuses a retried write whose history is gone, where it ran again (a
     * large-document user's counters went up twice).
     */
    @Test
    void aLostRepliesRetryAfterOtherLargeRepliesStillRunsOnce() throws Exception {
        rig.serverSide("counters").insertOne(new Document("_id", "day").append("counter", 5));
        String large = "x".repeat(14_000_000);
        for (int i = 0; i < 5; i++) {
            rig.serverSide("large").insertOne(new Document("_id", i).append("blob", large).append("n", 0));
        }
        rig.rule("{times: 1}", "findAndModify", "dropReply: true");
        rig.rule("{times: 1}", "findAndModify", "blockConnection: true, blockTimeMS: 12000, attempt: 'retry'"); // past the five, 2 to 4 s loaded
        MongoCollection<Document> counters = counters("retryWrites=true&socketTimeoutMS=30000"); // waits out the block
        ExecutorService retrying = Executors.newSingleThreadExecutor();
        try (LogCapture log = LogCapture.start()) {
            Future<Document> lost = retrying.submit(() -> counters.findOneAndUpdate(eq("_id", "day"), Updates.inc("counter", 1)));
            rig.awaitOutcome("findAndModify", "network_error", 1); // its reply lost: the retry is held now
            MongoClient other = rig.client("retryWrites=true&socketTimeoutMS=30000"); // 14 MB each, on a loaded machine
            MongoCollection<Document> others = other.getDatabase(rig.db).getCollection("large");
            List<ClientSession> sessions = new ArrayList<>(); // one each, all open at once (a closed one's lsid is used again)
            for (int i = 0; i < 5; i++) { // a session keeps its latest write only
                sessions.add(other.startSession());
                assertEquals(large, others.findOneAndUpdate(sessions.get(i), eq("_id", i), Updates.inc("n", 1)).getString("blob"));
            }
            sessions.forEach(ClientSession::close);
            if (UpstreamLane.isJongodb()) {
                ExecutionException refused = assertThrows(ExecutionException.class, () -> lost.get(30, TimeUnit.SECONDS));
                MongoCommandException error = assertInstanceOf(MongoCommandException.class, refused.getCause());
                assertEquals(217, error.getErrorCode(), error.toString());
                assertEquals("IncompleteTransactionHistory", error.getErrorCodeName());
                assertTrue(log.messages().stream().anyMatch(m -> m.startsWith("a retried findAndModify on ")
                        && m.contains(" refused with IncompleteTransactionHistory: its first run's reply was forgotten")), log::toString);
            } else {
                assertEquals(5, lost.get(30, TimeUnit.SECONDS).getInteger("counter"), "mongod answers it from its first run");
            }
        } finally {
            retrying.shutdownNow();
        }
        assertEquals(6, counter(), "incremented once");
        rig.assertAttempts("findAndModify", 7, 1);
    }

    /** A rule that loses every reply meets the retry's as it meets the member's: the driver fails, the write ran once. */
    @Test
    void aRuleThatLosesEveryReplyLosesTheRetrysAnswerToo() {
        rig.rule("'alwaysOn'", "update", "dropReply: true");
        MongoCollection<Document> c = counters("retryWrites=true");
        assertThrows(MongoSocketException.class,
                () -> c.updateOne(eq("_id", "day"), Updates.inc("counter", 1), new UpdateOptions().upsert(true)));
        assertEquals(1, counter());
        rig.assertAttempts("update", 2, 1);
        assertEquals(2, rig.faults("dropReply", "update"));
    }

    /**
     * The first attempt, held by blockConnection past the client's socketTimeoutMS, reaches the member after
     * its retry ran: as on mongod, it does not run again.
     */
    @Test
    void aBlockedFirstAttemptThatArrivesAfterItsRetryDoesNotRunAgain() throws InterruptedException {
        rig.rule("{times: 1}", "update", "blockConnection: true, blockTimeMS: 1500");
        MongoCollection<Document> c = counters("retryWrites=true&socketTimeoutMS=500");
        c.updateOne(eq("_id", "day"), Updates.inc("counter", 1), new UpdateOptions().upsert(true));
        assertEquals(1, counter(), "the retry ran");
        Thread.sleep(2500); // the block ends: the first attempt reaches the member
        assertEquals(1, counter(), "and the first attempt, arriving later, did not run again");
    }

    /** Each write of a session has its own txnNumber: a new one runs, whatever ran before it. */
    @Test
    void theNextWriteOfTheSessionRunsAsUsual() {
        rig.rule("{times: 1}", "update", "dropReply: true");
        MongoCollection<Document> c = counters("retryWrites=true&maxPoolSize=1");
        for (int i = 0; i < 3; i++) {
            c.updateOne(eq("_id", "day"), Updates.inc("counter", 1), new UpdateOptions().upsert(true));
        }
        assertEquals(3, counter(), "three increments, the first retried once, on " + UpstreamLane.name());
        rig.assertAttempts("update", 4, 1);
    }

    /**
     * Connections reset again and again under a load of increments, one document each: a write at the member when its
     * connection was cut ran there, and its retry is answered from that run (mongod's session holds the retry until the
     * run ends; in the place of a member that would run it again, blackpipe does, and keeps the member's connection
     * until the run answered). No increment is applied twice, and every one the driver saw succeed is applied.
     */
    @Test
    void writesAtTheMemberWhenTheirConnectionsAreResetRunOnce() throws Exception {
        int threads = 4;
        int perThread = 50;
        rig.serverSide("counters").insertMany(IntStream.range(0, threads * perThread)
                .mapToObj(i -> new Document("_id", i).append("counter", 0)).toList());
        MongoCollection<Document> c = counters("retryWrites=true&maxPoolSize=" + threads);
        Set<Integer> succeeded = ConcurrentHashMap.newKeySet();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> work = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int first = t * perThread;
                work.add(pool.submit(() -> {
                    for (int id = first; id < first + perThread; id++) {
                        try {
                            c.updateOne(eq("_id", id), Updates.inc("counter", 1));
                            succeeded.add(id);
                        } catch (MongoException e) {
                            // its retry was cut too: applied once or not at all
                        }
                    }
                }));
            }
            int resets = 0;
            while (!work.stream().allMatch(Future::isDone)) {
                Thread.sleep(60);
                rig.proxy.select("all").forEach(MemberListener::resetConnections);
                resets++;
            }
            for (Future<?> f : work) {
                f.get();
            }
            List<Object> twice = new ArrayList<>();
            List<Object> lost = new ArrayList<>();
            rig.serverSide("counters").find().forEach(d -> {
                int counter = d.getInteger("counter");
                if (counter > 1) {
                    twice.add(d.get("_id"));
                } else if (counter == 0 && succeeded.contains(d.getInteger("_id"))) {
                    lost.add(d.get("_id"));
                }
            });
            assertEquals(List.of(), twice, "applied twice, with " + resets + " resets on " + UpstreamLane.name());
            assertEquals(List.of(), lost, "succeeded but not applied");
            assertTrue(rig.retries("update") > 0, "the resets cut writes: " + resets + " resets");
        } finally {
            pool.shutdownNow();
        }
    }
}
