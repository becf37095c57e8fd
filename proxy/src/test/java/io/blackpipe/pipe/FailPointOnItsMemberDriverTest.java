package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.mongodb.MongoCommandException;
import com.mongodb.ReadPreference;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import io.blackpipe.testing.UpstreamLane;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A failpoint is one server's own: configureFailPoint sent through the proxy, as the driver sends it (to the primary),
 * fails what that member runs and nothing another member runs, and only that member's commands spend its times, as
 * the unified test runner's failPoint (on the primary) and targetedFailPoint (on one mongos) expect.
 */
class FailPointOnItsMemberDriverTest {
    @RegisterExtension
    final SimulatedSetOverTheLane set = new SimulatedSetOverTheLane();

    @Test
    void aFailPointSetOnThePrimaryFailsThePrimarysFindsNotASecondarys() {
        String db = UpstreamLane.freshDatabaseName("failpoint_member");
        try (MongoClient client = set.client("retryReads=false&heartbeatFrequencyMS=60000")) {
            MongoDatabase admin = client.getDatabase("admin");
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            c.insertOne(new Document("_id", 1));
            admin.runCommand(Document.parse(
                    "{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['find'], errorCode: 2}}"));

            Document onASecondary = c.withReadPreference(ReadPreference.secondary()).find().first();
            assertEquals(1, onASecondary.getInteger("_id"), "a secondary has no failpoint: its find is answered");
            assertEquals(0, set.proxy().rules().fired("failCommand"), "and spent none of the primary's times");

            MongoCommandException failed = assertThrows(MongoCommandException.class, () -> c.find().first());
            assertEquals(2, failed.getErrorCode(), "the primary's find meets its failpoint");
            assertEquals(1, set.proxy().rules().fired("failCommand"));
            assertEquals(1, c.find().first().getInteger("_id"), "times: 1, spent");
        }
        assertEquals(1, set.direct().getDatabase(db).getCollection("c").countDocuments(), "the server holds the one document");
    }
}
