package io.blackpipe.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoExecutionTimeoutException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.testing.UpstreamLane;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The failCommand failpoint's count, as suites written for the server use it: configureFailPoint
 * answers how many times the failpoint was entered so far (never reset by a new mode or "off"),
 * and waitForFailPoint blocks until it reaches a number or its maxTimeMS passes, the real Java
 * driver sending both through the proxy.
 */
class FailPointCountDriverTest {
    private ProxyServer proxy;
    private MongoClient client;
    private MongoDatabase admin;
    private MongoCollection<Document> collection;

    @BeforeEach
    void start() {
        proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()));
        client = MongoClients.create(proxy.connectionString() + (proxy.connectionString().contains("?") ? "&" : "?")
                + "retryReads=false&socketTimeoutMS=20000");
        admin = client.getDatabase("admin");
        collection = client.getDatabase(UpstreamLane.freshDatabaseName("fpcount")).getCollection("c");
    }

    @AfterEach
    void stop() {
        client.close();
        proxy.close();
    }

    private long configure(String modeAndData) {
        Document reply = admin.runCommand(Document.parse("{configureFailPoint: 'failCommand', " + modeAndData + "}"));
        return reply.get("count", Number.class).longValue();
    }

    private void findFails() {
        assertEquals(2, assertThrows(MongoCommandException.class, () -> collection.find().first()).getErrorCode());
    }

    @Test
    void configureFailPointAnswersTheTimesEnteredSoFarWhichNoNewModeResets() {
        assertEquals(0, configure("mode: {times: 2}, data: {failCommands: ['find'], errorCode: 2}"));
        findFails();
        findFails();
        collection.find().first(); // spent: passes, and is no entry
        assertEquals(2, configure("mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2}"));
        findFails();
        assertEquals(3, configure("mode: 'off'"));
        assertEquals(3, configure("mode: {times: 1}, data: {failCommands: ['insert'], errorCode: 2}"), "off resets nothing");
        assertEquals(3, proxy.rules().fired("failCommand"));
    }

    @Test
    void waitForFailPointReturnsOnceTheFailpointIsEnteredThatManyTimes() throws Exception {
        long count = configure("mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2}");
        AtomicLong findSentAt = new AtomicLong();
        CompletableFuture<Void> failingFind = CompletableFuture.runAsync(() -> {
            sleep(300);
            findSentAt.set(System.nanoTime());
            findFails();
        });
        Document waited = admin.runCommand(new Document("waitForFailPoint", "failCommand")
                .append("timesEntered", count + 1).append("maxTimeMS", 20_000));
        long returnedAt = System.nanoTime();
        assertEquals(1.0, waited.get("ok", Number.class).doubleValue());
        failingFind.get(20, TimeUnit.SECONDS);
        assertTrue(findSentAt.get() != 0 && returnedAt > findSentAt.get(), "the wait returned before the find was sent");

        // reached already: answered at once, and the connection goes on serving
        assertEquals(1.0, admin.runCommand(new Document("waitForFailPoint", "failCommand")
                .append("timesEntered", count + 1).append("maxTimeMS", 1000)).get("ok", Number.class).doubleValue());
        assertEquals(1.0, admin.runCommand(new Document("ping", 1)).get("ok", Number.class).doubleValue());
    }

    @Test
    void waitForFailPointThatIsNeverReachedFailsWithMaxTimeMsExpired() {
        long count = configure("mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2}");
        // the driver takes MaxTimeMSExpired for what it is: a MongoExecutionTimeoutException
        MongoExecutionTimeoutException expired = assertThrows(MongoExecutionTimeoutException.class, () -> admin.runCommand(
                new Document("waitForFailPoint", "failCommand").append("timesEntered", count + 5).append("maxTimeMS", 200)));
        assertEquals(50, expired.getCode());
        assertTrue(expired.getMessage().contains("operation exceeded time limit"), expired::getMessage);
        findFails(); // the rule is still in force, the connection still serves
    }

    @Test
    void aMalformedWaitForFailPointIsRefusedAsTheServerRefusesIt() {
        assertEquals(266, refused(new Document("waitForFailPoint", "failGetMoreAfterCursorCheckout")
                .append("timesEntered", 1).append("maxTimeMS", 100)), "a failpoint blackpipe does not have: FailPointSetFailed");
        assertEquals(40414, refused(new Document("waitForFailPoint", "failCommand").append("maxTimeMS", 100)),
                "timesEntered is required");
        assertEquals(40414, refused(new Document("waitForFailPoint", "failCommand").append("timesEntered", 1)),
                "maxTimeMS is required too");
        assertEquals(14, refused(new Document("waitForFailPoint", "failCommand").append("timesEntered", "one").append("maxTimeMS", 100)),
                "TypeMismatch");
        assertEquals(14, refused(new Document("waitForFailPoint", 1).append("timesEntered", 1).append("maxTimeMS", 100)), "TypeMismatch");
        assertEquals(2, refused(new Document("waitForFailPoint", "failCommand").append("timesEntered", -1).append("maxTimeMS", 100)),
                "BadValue");
        // admin only, as on the server
        MongoDatabase other = client.getDatabase("test");
        MongoCommandException elsewhere = assertThrows(MongoCommandException.class, () -> other.runCommand(
                new Document("waitForFailPoint", "failCommand").append("timesEntered", 0).append("maxTimeMS", 100)));
        assertEquals(13, elsewhere.getErrorCode());
        assertEquals("waitForFailPoint may only be run against the admin database.", elsewhere.getErrorMessage());
        assertEquals(13, assertThrows(MongoCommandException.class, () -> other.runCommand(Document.parse(
                "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2}}"))).getErrorCode());
        assertEquals(0, proxy.rules().rules().size(), "a configureFailPoint refused adds no rule");
    }

    private int refused(Document command) {
        return assertThrows(MongoCommandException.class, () -> admin.runCommand(command)).getErrorCode();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
