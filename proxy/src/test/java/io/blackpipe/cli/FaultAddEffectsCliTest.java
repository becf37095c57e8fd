package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoSocketReadException;
import com.mongodb.MongoSocketReadTimeoutException;
import com.mongodb.MongoWriteConcernException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.event.CommandFailedEvent;
import com.mongodb.event.CommandSucceededEvent;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.CommandLog;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.UpstreamLane;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.LongSummaryStatistics;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.bson.Document;
import org.bson.RawBsonDocument;
import org.bson.codecs.DocumentCodec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The action flags of `fault add` whose effect was only checked as the rule document they build
 * (--labels, --hang, --delay, --jitter, --trickle, --truncate, --block alone and before an error), each
 * added with the CLI to a running proxy and met by the real driver: what the driver threw or got, how often
 * it sent the command (its command events), and what the server holds, read past the proxy.
 */
class FaultAddEffectsCliTest {
    @RegisterExtension
    static final SharedAdminRig shared = new SharedAdminRig();

    private final CommandLog log = new CommandLog();
    private final String db = UpstreamLane.freshDatabaseName("faultEffects");

    @AfterEach
    void clearRules() { // a rule a failed test left unspent must not fire in the next
        shared.rig().proxy().rules().clear();
    }

    /** `fault add FLAGS` against the shared proxy: exit 0, and the id it prints. */
    private static String add(String... flags) {
        List<String> args = new ArrayList<>(List.of("fault", "add"));
        args.addAll(List.of(flags));
        CliRun added = shared.rig().run(args.toArray(String[]::new));
        assertEquals(0, added.exitCode(), added::toString);
        assertEquals(1, added.lines().size(), added::toString);
        return added.out().strip();
    }

    /** A driver through the shared proxy, with {@code options}, its commands reported to {@link #log}. */
    private MongoClient driver(String options) {
        return MongoClients.create(log.driverOn(CommandLog.withOptions(shared.rig().proxy().connectionString(), options)).build());
    }

    private MongoCollection<Document> collection(MongoClient client) {
        return client.getDatabase(db).getCollection("c");
    }

    /** What the server holds in the test's collection, read straight from the upstream. */
    private List<Document> onTheServer() {
        try (MongoClient direct = UpstreamLane.directClient()) {
            return direct.getDatabase(db).getCollection("c").find().sort(new Document("_id", 1)).into(new ArrayList<>());
        }
    }

    private void awaitOnTheServer(List<Document> expected) throws InterruptedException {
        List<List<Document>> last = new ArrayList<>(List.of(List.of()));
        Await.until(Duration.ofSeconds(30), () -> "the server to hold " + expected + ", it holds " + last.get(0), () -> {
            last.set(0, onTheServer());
            return expected.equals(last.get(0));
        });
    }

    private static long faults(String fault, String command) {
        return Meters.faults(shared.rig().proxy().registry(), fault, command);
    }

    private static long fired(String id) {
        return shared.rig().proxy().rules().fired(id);
    }

    private List<Long> succeededMillis(String command) {
        return log.succeeded.stream().filter(e -> e.getCommandName().equals(command))
                .map((CommandSucceededEvent e) -> e.getElapsedTime(TimeUnit.MILLISECONDS)).toList();
    }

    /** The driver's failed events of {@code command} (not the endSessions a lane may refuse as the client closes). */
    private List<CommandFailedEvent> failed(String command) {
        return log.failed.stream().filter(e -> e.getCommandName().equals(command)).toList();
    }

    // ------------------------------------------------------------------ --labels

    @Test
    void labelsMakeANonRetryableErrorRetryableForTheDriver() {
        String id = add("--command", "insert", "--error-code", "2", "--labels", "RetryableWriteError", "--times", "1");
        try (MongoClient client = driver("retryWrites=true&socketTimeoutMS=30000")) {
            collection(client).insertOne(new Document("_id", 1)); // BadValue, but labelled retryable: retried, and it lands
        }
        assertEquals(2, log.startedCount("insert"), "the driver sent the insert again, on the label alone");
        assertEquals(1, failed("insert").size(), () -> "the first attempt failed: " + failed("insert"));
        assertEquals(List.of(new Document("_id", 1)), onTheServer());
        assertEquals(1, fired(id));
    }

    @Test
    void labelsReplaceTheOnesTheProxyWouldComputeSoARetryableErrorIsNotRetried() {
        String id = add("--command", "insert", "--error", "NotWritablePrimary", "--labels", "CustomLabel,Another", "--times", "1");
        try (MongoClient client = driver("retryWrites=true&socketTimeoutMS=30000")) {
            MongoCommandException e = assertThrows(MongoCommandException.class, () -> collection(client).insertOne(new Document("_id", 1)));
            assertEquals(10107, e.getErrorCode(), e::toString);
            assertTrue(e.hasErrorLabel("CustomLabel") && e.hasErrorLabel("Another"), () -> "the labels given: " + e.getErrorLabels());
            assertFalse(e.hasErrorLabel("RetryableWriteError"), () -> "the computed label is replaced: " + e.getErrorLabels());
        }
        assertEquals(1, log.startedCount("insert"), "without RetryableWriteError the driver does not retry");
        assertEquals(List.of(), onTheServer());
        assertEquals(1, fired(id));
    }

    /** errorLabels: [], as a JSON rule writes it: the error goes out with no labels, and `fault list` says so. */
    @Test
    void noLabelsSendsTheErrorWithoutTheLabelsTheProxyWouldCompute() {
        String id = add("--command", "insert", "--error", "NotWritablePrimary", "--no-labels", "--times", "1");
        CliRun listed = shared.rig().run("fault", "list");
        assertTrue(listed.out().lines().anyMatch(row -> row.startsWith(id) && row.contains("error=NotWritablePrimary(10107) labels=none")),
                listed::toString);
        try (MongoClient client = driver("retryWrites=true&socketTimeoutMS=30000")) {
            MongoCommandException e = assertThrows(MongoCommandException.class, () -> collection(client).insertOne(new Document("_id", 1)));
            assertEquals(10107, e.getErrorCode(), e::toString);
            assertEquals(Set.of(), e.getErrorLabels(), "no labels, not the computed RetryableWriteError");
        }
        assertEquals(1, log.startedCount("insert"), "without RetryableWriteError the driver does not retry");
        assertEquals(List.of(), onTheServer());
        assertEquals(1, fired(id));
    }

    // ------------------------------------------------------------------ --hang

    @Test
    void hangLeavesTheDriverToItsOwnTimeoutAndTheServerNeverSeesTheCommand() {
        long hangs = faults("hang", "insert");
        String id = add("--command", "insert", "--hang", "--times", "1");
        try (MongoClient client = driver("retryWrites=false&socketTimeoutMS=1000")) {
            assertThrows(MongoSocketReadTimeoutException.class, () -> collection(client).insertOne(new Document("_id", 1)));
            collection(client).insertOne(new Document("_id", 2)); // the rule is spent; the proxy serves on
        }
        assertEquals(2, log.startedCount("insert"));
        assertEquals(List.of(new Document("_id", 2)), onTheServer(), "the hung insert never reached the server");
        assertEquals(1, fired(id));
        assertEquals(hangs + 1, faults("hang", "insert"));
    }

    // ------------------------------------------------------------------ --delay, --jitter

    @Test
    void delayHoldsTheReplyOfACommandThatRanSoALateReplyIsAReadTimeoutForAWriteThatHappened() throws Exception {
        String id = add("--command", "insert", "--delay", "5s", "--times", "1");
        try (MongoClient client = driver("retryWrites=false&socketTimeoutMS=1000")) {
            assertThrows(MongoSocketReadTimeoutException.class, () -> collection(client).insertOne(new Document("_id", 1)));
        }
        assertEquals(1, log.startedCount("insert"));
        awaitOnTheServer(List.of(new Document("_id", 1))); // forwarded at once: only its reply was held
        assertEquals(1, fired(id));
    }

    @Test
    void delayHandsTheDriverTheRightReplyLate() {
        try (MongoClient client = driver("retryReads=false&socketTimeoutMS=30000")) {
            collection(client).insertOne(new Document("_id", 1));
            String id = add("--command", "find", "--delay", "400ms", "--times", "1");
            assertEquals(new Document("_id", 1), collection(client).find().first());
            assertEquals(1, fired(id));
        }
        List<Long> finds = succeededMillis("find");
        assertEquals(1, finds.size(), finds::toString);
        assertTrue(finds.get(0) >= 400, "the reply came no sooner than the delay: " + finds);
    }

    @Test
    void jitterHoldsEachReplyForItsOwnTimeAroundTheDelay() {
        String id = add("--command", "find", "--delay", "300ms", "--jitter", "250ms");
        int finds = 16;
        try (MongoClient client = driver("retryReads=false&socketTimeoutMS=30000")) {
            collection(client).insertOne(new Document("_id", 1));
            for (int i = 0; i < finds; i++) {
                assertEquals(new Document("_id", 1), collection(client).find().first());
            }
        }
        List<Long> took = succeededMillis("find");
        assertEquals(finds, took.size(), took::toString);
        LongSummaryStatistics stats = took.stream().mapToLong(Long::longValue).summaryStatistics();
        // drawn evenly from 50 to 550 ms: none sooner than delay - jitter, and spread far wider than a plain delay's
        assertTrue(stats.getMin() >= 50, "no reply sooner than delay - jitter: " + took);
        assertTrue(stats.getMax() - stats.getMin() >= 150, "the replies were held for different times: " + took);
        assertEquals(finds, fired(id));
    }

    // ------------------------------------------------------------------ --trickle

    @Test
    void aTrickledReplyArrivesWholeLongAfterTheSocketTimeoutWithoutTrippingIt() {
        List<Document> documents = new ArrayList<>();
        IntStream.range(0, 16).forEach(i -> documents.add(new Document("_id", i).append("text", "x".repeat(300))));
        long bytes = documents.stream().mapToLong(d -> new RawBsonDocument(d, new DocumentCodec()).getByteBuffer().remaining()).sum();
        int piece = 256;
        int intervalMillis = 100;
        long leastTrickle = ((bytes + piece - 1) / piece - 1) * intervalMillis; // the first piece goes at once
        assertTrue(leastTrickle >= 2 * 600, "the whole trickle outlasts the socket timeout: " + leastTrickle + " ms");
        try (MongoClient client = driver("retryReads=false&socketTimeoutMS=600")) {
            collection(client).insertMany(documents);
            String id = add("--command", "find", "--trickle", piece + "/" + intervalMillis + "ms", "--times", "1");
            List<Document> found = collection(client).find().sort(new Document("_id", 1)).into(new ArrayList<>());
            assertEquals(documents, found, "every document, whole: no piece waited as long as socketTimeoutMS");
            assertEquals(1, fired(id));
        }
        assertEquals(1, log.startedCount("find"), "one attempt: nothing timed out");
        List<Long> took = succeededMillis("find");
        assertTrue(took.get(0) >= leastTrickle, "took " + took + " ms, the trickle at least " + leastTrickle + " ms");
    }

    // ------------------------------------------------------------------ --truncate

    @Test
    void truncateCutsTheReplyOfAWriteThatHappened() throws Exception {
        long truncated = faults("truncateReply", "insert");
        String id = add("--command", "insert", "--truncate", "20", "--times", "1");
        try (MongoClient client = driver("retryWrites=false&socketTimeoutMS=30000")) {
            MongoSocketReadException cut = assertThrows(MongoSocketReadException.class,
                    () -> collection(client).insertOne(new Document("_id", 1)));
            assertTrue(cut.getMessage().contains("Prematurely reached end of stream"), cut::toString);
        }
        assertEquals(1, log.startedCount("insert"));
        awaitOnTheServer(List.of(new Document("_id", 1)));
        assertEquals(1, fired(id));
        assertEquals(truncated + 1, faults("truncateReply", "insert"));
    }

    // ------------------------------------------------------------------ --write-concern-error

    /** The write runs; its reply says replication timed out, which the driver throws and does not retry (64 is no state change). */
    @Test
    void aWriteConcernErrorComesOnTheReplyOfAWriteThatHappened() throws Exception {
        String id = add("--command", "insert", "--write-concern-error", "64", "--times", "1");
        CliRun listed = shared.rig().run("fault", "list");
        assertTrue(listed.out().lines().anyMatch(row -> row.startsWith(id) && row.contains("writeConcernError=WriteConcernFailed")),
                listed::toString);
        try (MongoClient client = driver("retryWrites=true&socketTimeoutMS=30000")) {
            MongoWriteConcernException e = assertThrows(MongoWriteConcernException.class,
                    () -> collection(client).insertOne(new Document("_id", 1)));
            assertEquals(64, e.getWriteConcernError().getCode(), e::toString);
            assertEquals("waiting for replication timed out", e.getWriteConcernError().getMessage());
        }
        assertEquals(1, log.startedCount("insert"), "not retried");
        awaitOnTheServer(List.of(new Document("_id", 1)));
        assertEquals(1, fired(id));
    }

    // ------------------------------------------------------------------ --block

    @Test
    void aBlockAloneStillRunsTheCommandOfAClientThatGaveUp() throws Exception {
        long blocks = faults("blockConnection", "insert");
        String id = add("--command", "insert", "--block", "3s", "--times", "1");
        try (MongoClient client = driver("retryWrites=false&socketTimeoutMS=500")) {
            assertThrows(MongoSocketReadTimeoutException.class, () -> collection(client).insertOne(new Document("_id", 1)));
        }
        assertEquals(1, log.startedCount("insert"));
        awaitOnTheServer(List.of(new Document("_id", 1))); // as on mongod: the block ends, the command runs, its reply goes nowhere
        assertEquals(1, fired(id));
        assertEquals(blocks + 1, faults("blockConnection", "insert"));
    }

    @Test
    void aBlockThenAnErrorAnswersLateWithTheErrorAndTheCommandNeverRuns() {
        String id = add("--command", "insert", "--block", "500ms", "--error-code", "2", "--times", "1");
        try (MongoClient client = driver("retryWrites=false&socketTimeoutMS=30000")) {
            MongoCommandException e = assertThrows(MongoCommandException.class, () -> collection(client).insertOne(new Document("_id", 1)));
            assertEquals(2, e.getErrorCode(), e::toString);
        }
        List<CommandFailedEvent> inserts = failed("insert");
        assertEquals(1, inserts.size(), inserts::toString);
        assertTrue(inserts.get(0).getElapsedTime(TimeUnit.MILLISECONDS) >= 500,
                () -> "held first: " + inserts.get(0).getElapsedTime(TimeUnit.MILLISECONDS) + " ms");
        assertEquals(List.of(), onTheServer(), "blocked and then failed, it never ran");
        assertEquals(1, fired(id));
    }
}
