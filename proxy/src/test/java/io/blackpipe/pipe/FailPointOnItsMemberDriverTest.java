package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.mongodb.MongoCommandException;
import com.mongodb.ReadPreference;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
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
        String onThePrimary = "failCommand@" + set.proxy().members().get(0).advertised();
        try (MongoClient client = set.client("retryReads=false&heartbeatFrequencyMS=60000")) {
            MongoDatabase admin = client.getDatabase("admin");
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            c.insertOne(new Document("_id", 1));
            admin.runCommand(Document.parse(
                    "{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['find'], errorCode: 2}}"));

            Document onASecondary = c.withReadPreference(ReadPreference.secondary()).find().first();
            assertEquals(1, onASecondary.getInteger("_id"), "a secondary has no failpoint: its find is answered");
            assertEquals(0, set.proxy().rules().fired(onThePrimary), "and spent none of the primary's times");

            MongoCommandException failed = assertThrows(MongoCommandException.class, () -> c.find().first());
            assertEquals(2, failed.getErrorCode(), "the primary's find meets its failpoint");
            assertEquals(1, set.proxy().rules().fired(onThePrimary));
            assertEquals(1, c.find().first().getInteger("_id"), "times: 1, spent");
        }
        assertEquals(1, set.direct().getDatabase(db).getCollection("c").countDocuments(), "the server holds the one document");
    }

    /** Each server keeps its own failpoint: one set on a secondary leaves the primary's in place, and "off" there ends its own. */
    @Test
    void aFailPointSetOnASecondaryLeavesThePrimarysInPlace() {
        String db = UpstreamLane.freshDatabaseName("failpoint_two");
        try (MongoClient client = set.client("retryReads=false&heartbeatFrequencyMS=60000");
             MongoClient secondary = direct(1);
             MongoClient otherSecondary = direct(2)) {
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            c.insertOne(new Document("_id", 1));
            assertEquals(0, configure(client, "mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2}"));
            assertEquals(0, configure(secondary, "mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 13}"));

            assertEquals(2, findFails(c), "the primary's failpoint stays where it was set");
            assertEquals(13, findFails(secondary.getDatabase(db).getCollection("c")), "the secondary's own");
            assertEquals(1, otherSecondary.getDatabase(db).getCollection("c").find().first().getInteger("_id"),
                    "a member nobody set a failpoint on");

            assertEquals(1, configure(secondary, "mode: 'off'"), "the secondary's count: its own find");
            assertEquals(1, secondary.getDatabase(db).getCollection("c").find().first().getInteger("_id"));
            assertEquals(2, findFails(c), "off on the secondary left the primary's failpoint on");
            assertEquals(2, configure(client, "mode: 'off'"), "the primary's count: its two finds");
            assertEquals(1, c.find().first().getInteger("_id"));
        }
        assertEquals(1, set.direct().getDatabase(db).getCollection("c").countDocuments(), "the server holds the one document");
    }

    /** A client of the {@code index}th member alone, as the unified test runner's targetedFailPoint uses one. */
    private MongoClient direct(int index) {
        return MongoClients.create("mongodb://" + set.proxy().members().get(index).advertised() + "/?directConnection=true");
    }

    private static int configure(MongoClient client, String modeAndData) {
        return client.getDatabase("admin").runCommand(Document.parse("{configureFailPoint: 'failCommand', " + modeAndData + "}"))
                .get("count", Number.class).intValue();
    }

    private static int findFails(MongoCollection<Document> c) {
        return assertThrows(MongoCommandException.class, () -> c.find().first()).getErrorCode();
    }
}
