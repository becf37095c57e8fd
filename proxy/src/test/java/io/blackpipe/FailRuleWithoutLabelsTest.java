package io.blackpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.mongodb.MongoNotPrimaryException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.blackpipe.testing.CommandLog;
import io.blackpipe.testing.UpstreamLane;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * FailRule.withoutErrorLabels(): failCommand's {@code errorLabels: []}, which the CLI's --no-labels gives. A reactive
 * driver user found no way to it from Java: {@code errorCode(10107, new String[0])} gives the labels a server adds.
 */
class FailRuleWithoutLabelsTest {
    private final RecordedRules rules = new RecordedRules();

    @Test
    void itBuildsEmptyLabelsAndRefusesLabelsBesideThem() {
        rules.fail("insert").times(1).withoutErrorLabels().error("NotWritablePrimary");
        assertEquals(BsonDocument.parse("{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['insert'],"
                + " errorLabels: [], error: 'NotWritablePrimary'}}"), rules.added.get(0));
        assertEquals("errorCode(): labels [RetryableWriteError] given to a rule whose withoutErrorLabels() said it carries none",
                assertThrows(IllegalStateException.class, () -> rules.fail("insert").withoutErrorLabels()
                        .errorCode(10107, "RetryableWriteError")).getMessage());
        assertEquals("withoutErrorLabels(): called already on this rule",
                assertThrows(IllegalStateException.class, () -> rules.fail("insert").withoutErrorLabels().withoutErrorLabels())
                        .getMessage());
        assertEquals(1, rules.added.size(), "nothing else was added");
    }

    @Test
    void aNotWritablePrimaryWithoutLabelsIsNotRetriedByTheDriver() {
        String db = UpstreamLane.freshDatabaseName("failrule_nolabels");
        CommandLog log = new CommandLog();
        try (BlackPipe blackPipe = BlackPipe.start(UpstreamLane.uri());
             MongoClient client = MongoClients.create(log.driverOn(CommandLog.withOptions(blackPipe.connectionString(),
                     "retryWrites=true")).build());
             MongoClient direct = UpstreamLane.directClient()) {
            blackPipe.fail("insert").times(1).withoutErrorLabels().errorCode(10107);
            assertThrows(MongoNotPrimaryException.class, () -> client.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1)));
            assertEquals(1, log.startedCount("insert"), "not retried: the error carried no RetryableWriteError");
            assertEquals(List.of(1L, 0L), List.of(blackPipe.attempts("insert"), blackPipe.retries("insert")));
            assertEquals(0, direct.getDatabase(db).getCollection("c").countDocuments(), "the server never saw it");
        }
    }
}
