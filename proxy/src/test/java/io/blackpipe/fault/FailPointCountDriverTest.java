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
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.UpstreamLane;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.bson.BsonDecimal128;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.types.Decimal128;
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

    /** mongod's failpoint counts {times: 0} down to -1 on its first match and only then turns off: it fires once. */
    @Test
    void timesZeroFiresOnceAsOnTheServer() {
        assertEquals(0, configure("mode: {times: 0}, data: {failCommands: ['find'], errorCode: 2}"));
        findFails();
        collection.find().first(); // spent
        assertEquals(1, configure("mode: 'off'"));
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
        assertEquals(3, proxy.rules().fired("failCommand@" + proxy.members().get(0).advertised()));
    }

    @Test
    void timesAndSkipAboveTwoToTheThirtyFirstMinusOneAreRefusedWithBadValueAsTheServerRefusesThem() {
        for (String key : List.of("times", "skip")) {
            MongoCommandException tooLarge = assertThrows(MongoCommandException.class, () -> admin.runCommand(
                    new Document("configureFailPoint", "failCommand").append("mode", new Document(key, Integer.MAX_VALUE + 1L))
                            .append("data", Document.parse("{failCommands: ['find'], errorCode: 2}"))));
            assertEquals(2, tooLarge.getErrorCode(), "BadValue");
            assertEquals("mode." + key + ": 2147483648 is too large: at most 2147483647 (2^31-1), as the server takes it",
                    tooLarge.getErrorMessage());
            assertEquals(0, proxy.rules().rules().size(), "a configureFailPoint refused adds no rule");
        }
        configure("mode: {skip: 2147483647}, data: {failCommands: ['find'], errorCode: 2}");
        collection.find().first(); // skipped: the rule is in force and lets it pass
        configure("mode: {times: {$numberLong: '2147483647'}}, data: {failCommands: ['find'], errorCode: 2}");
        findFails();
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
        assertEquals(40414, refused(new Document("waitForFailPoint", "failCommand").append("maxTimeMS", 100)),
                "timesEntered is required");
        assertEquals(40414, refused(new Document("waitForFailPoint", "failCommand").append("timesEntered", 1)),
                "maxTimeMS is required too");
        MongoCommandException mistyped = assertThrows(MongoCommandException.class, () -> admin.runCommand(
                new Document("waitForFailPoint", "failCommand").append("timesEntered", "one").append("maxTimeMS", 100)));
        assertEquals(14, mistyped.getErrorCode(), "TypeMismatch");
        assertEquals("BSON field 'waitForFailPoint.timesEntered' is the wrong type 'string', expected types"
                + " '[long, int, decimal, double']", mistyped.getErrorMessage(), "the server's words, its odd quote included");
        assertEquals(14, refused(new Document("waitForFailPoint", "failCommand").append("timesEntered", 1).append("maxTimeMS", true)),
                "TypeMismatch");
        assertEquals(14, refused(new Document("waitForFailPoint", 1).append("timesEntered", 1).append("maxTimeMS", 100)), "TypeMismatch");
        // maxTimeMS as every command takes it: 0 to 2^31-1, a double only if whole (BadValue)
        MongoCommandException negative = assertThrows(MongoCommandException.class, () -> admin.runCommand(
                new Document("waitForFailPoint", "failCommand").append("timesEntered", 0).append("maxTimeMS", -1)));
        assertEquals(2, negative.getErrorCode());
        assertEquals("-1 value for maxTimeMS is out of range [0, 2147483647]", negative.getErrorMessage());
        assertEquals(2, refused(new Document("waitForFailPoint", "failCommand").append("timesEntered", 0)
                .append("maxTimeMS", Integer.MAX_VALUE + 1L)), "BadValue: past the 32-bit range");
        assertEquals(2, refused(new Document("waitForFailPoint", "failCommand").append("timesEntered", 0).append("maxTimeMS", 2.5)),
                "BadValue: non-integral");
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

    @Test
    void waitForFailPointTakesTimesEnteredAsAnyNumberTheServerTakesAndComparesItIn64Bits() {
        long reached = configure("mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2}") + 1;
        findFails();
        // as the server reads them: a double toward zero, a decimal half to even, a negative number reached already
        for (BsonValue timesEntered : List.of(new BsonInt32((int) reached), new BsonInt64(reached), new BsonDouble(reached),
                new BsonDouble(reached + 0.9), new BsonDecimal128(new Decimal128(reached)), new BsonInt64(-1),
                new BsonDouble(Double.NaN))) {
            assertEquals(1.0, waitFor(timesEntered, 1000).get("ok", Number.class).doubleValue(), timesEntered::toString);
        }
        // beyond 32 bits: a target cut to an int would be reached already (2^32 + n as n, 2^31 as negative)
        for (BsonValue timesEntered : List.of(new BsonInt64((1L << 32) + reached), new BsonInt64(Integer.MAX_VALUE + 1L),
                new BsonInt64(Long.MAX_VALUE), new BsonDouble(1e19), new BsonDecimal128(Decimal128.parse("1E+30")))) {
            assertEquals(50, assertThrows(MongoExecutionTimeoutException.class, () -> waitFor(timesEntered, 50),
                    timesEntered::toString).getCode());
        }
    }

    private Document waitFor(BsonValue timesEntered, int maxTimeMillis) {
        return admin.runCommand(new BsonDocument("waitForFailPoint", new BsonString("failCommand"))
                .append("timesEntered", timesEntered).append("maxTimeMS", new BsonInt32(maxTimeMillis)));
    }

    /**
     * A failpoint other than failCommand is the server's own, which only the server can run: its configureFailPoint and
     * waitForFailPoint go to the member, which answers as it answers without a proxy (a server with test commands runs
     * them; jongodb, or one without, refuses them). Before, blackpipe refused them itself (BadValue, FailPointSetFailed),
     * and a suite using failCommand and another failpoint could not run through it.
     */
    @Test
    void anotherFailPointIsTheServersAndGoesToTheMember() {
        List<Document> commands = List.of(
                new Document("configureFailPoint", "failGetMoreAfterCursorCheckout").append("mode", "off"),
                new Document("waitForFailPoint", "failGetMoreAfterCursorCheckout").append("timesEntered", 1).append("maxTimeMS", 100));
        try (MongoClient direct = UpstreamLane.directClient()) {
            for (Document command : commands) {
                assertEquals(outcome(direct.getDatabase("admin"), command), outcome(admin, command),
                        () -> "the member's own answer to " + command.toJson());
            }
        }
        assertEquals(1, Meters.attempts(proxy.registry(), "configureFailPoint"), "an application command that reached the member");
        assertEquals(1, Meters.attempts(proxy.registry(), "waitForFailPoint"));
        assertEquals(List.of(), proxy.rules().rules(), "no rule: not blackpipe's failpoint");
    }

    /** "ok", or the error's code and message. */
    private static String outcome(MongoDatabase database, Document command) {
        try {
            database.runCommand(command);
            return "ok";
        } catch (MongoCommandException e) {
            return e.getErrorCode() + " " + e.getErrorMessage();
        }
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
