package io.blackpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoSocketReadException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.blackpipe.observe.Outcome;
import io.blackpipe.testing.UpstreamLane;
import java.time.Duration;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** FailRule.truncateReply: the rule it builds, and every refusal, each before anything is added. */
class FailRuleTruncateTest {
    private final RecordedRules rules = new RecordedRules();
    private final List<BsonDocument> added = rules.added;

    private FailRule fail(String... commands) {
        return rules.fail(commands);
    }

    @Test
    void itBuildsTheRuleField() {
        assertEquals("rule-1", fail("insert").times(1).truncateReply(20));
        assertEquals(BsonDocument.parse("{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['insert'],"
                + " truncateReplyBytes: 20}}"), added.get(0));
        fail("find").truncateReply(1);
        assertEquals(BsonDocument.parse("{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'],"
                + " truncateReplyBytes: 1}}"), added.get(1));
    }

    @Test
    void fewerThanOneByteAndASecondTerminalAreRefusedNamingWhatIsWrong() {
        assertEquals("truncateReply(): bytes must be at least 1, got 0",
                assertThrows(IllegalArgumentException.class, () -> fail("insert").truncateReply(0)).getMessage());
        assertEquals("truncateReply(): bytes must be at least 1, got -20",
                assertThrows(IllegalArgumentException.class, () -> fail("insert").truncateReply(-20)).getMessage());
        assertEquals(List.of(), added, "nothing was added");

        FailRule delayed = fail("find");
        delayed.delay(Duration.ofMillis(5));
        assertEquals("truncateReply(): this FailRule already added rule 'rule-1'; start another with fail(...) or failAll()",
                assertThrows(IllegalStateException.class, () -> delayed.truncateReply(20)).getMessage());
        FailRule truncated = fail("find");
        truncated.truncateReply(20);
        assertThrows(IllegalStateException.class, () -> truncated.trickleReply(64, Duration.ofMillis(5)), "a second fate");
        assertThrows(IllegalStateException.class, () -> truncated.with(Fault.DROP_REPLY));
        assertThrows(IllegalStateException.class, () -> truncated.truncateReply(20));
        assertEquals(2, added.size(), "one rule per builder");
    }

    @Test
    void aProxyRefusesATruncateOnHelloAndKeepsTheRulesInForce() {
        try (BlackPipe blackPipe = BlackPipe.start(UpstreamLane.uri())) {
            String kept = blackPipe.fail("insert").truncateReply(20);
            List<String> before = blackPipe.rules();
            IllegalArgumentException hello = assertThrows(IllegalArgumentException.class, () -> blackPipe.fail("hello").truncateReply(20));
            assertTrue(hello.getMessage().startsWith("data.truncateReplyBytes: hello and isMaster can be failed with"), hello.getMessage());
            IllegalArgumentException withDrop = assertThrows(IllegalArgumentException.class, () -> blackPipe.rule(
                    "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], truncateReplyBytes: 20,"
                            + " dropReply: true}}"));
            assertTrue(withDrop.getMessage().startsWith("data.truncateReplyBytes: give dropReply or truncateReplyBytes, not both"),
                    withDrop.getMessage());
            assertThrows(IllegalArgumentException.class, () -> blackPipe.fail("find").truncateReply(0));
            assertEquals(before, blackPipe.rules(), "a refused rule changes nothing");
            assertEquals(1, before.size());
            assertTrue(before.get(0).contains("\"truncateReplyBytes\": 20") && before.get(0).contains("\"id\": \"" + kept + "\""),
                    before.get(0));
            assertEquals(0, blackPipe.faultsInjected("truncateReply"), "a fault label blackpipe counts under");
        }
    }

    @Test
    void aTruncatedInsertThroughBlackPipeIsCountedAsTheDriverSawIt() {
        String db = UpstreamLane.freshDatabaseName("failrule_truncate");
        try (BlackPipe blackPipe = BlackPipe.start(UpstreamLane.uri());
             MongoClient client = MongoClients.create(blackPipe.connectionString()
                     + (blackPipe.connectionString().contains("?") ? "&" : "?") + "retryWrites=false&socketTimeoutMS=5000");
             MongoClient direct = UpstreamLane.directClient()) {
            blackPipe.fail("insert").times(1).truncateReply(20);
            MongoSocketReadException e = assertThrows(MongoSocketReadException.class,
                    () -> client.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1)));
            assertEquals("Prematurely reached end of stream", e.getMessage());
            assertEquals(1, direct.getDatabase(db).getCollection("c").countDocuments(), "the insert ran");
            assertEquals(1, blackPipe.faultsInjected("truncateReply"));
            assertEquals(1, blackPipe.outcomes("insert", Outcome.NETWORK_ERROR));
            assertEquals(0, blackPipe.retries("insert"));
        }
    }
}
