package io.blackpipe.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.UpstreamLane;
import java.time.Duration;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * A read blocked at the member (blockConnection) whose client gave up ends, as the client saw it, when the client
 * leaves, not when the block ends: after the driver's retry answered, the app goes on with the same read in the same
 * session (a polling loop with an explicit session) while the block still runs, and goes on after it ended; none of
 * those polls is counted as a retry, and the block's end changes none of the counts.
 */
class LateEndOfABlockedReadDriverTest {
    @Test
    void theBlockedAttemptEndingLateMakesNoPollAfterItARetry() throws Exception {
        String db = UpstreamLane.freshDatabaseName("late_end");
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            proxy.rules().put(proxy.ruleParser().parse("block", BsonDocument.parse("{configureFailPoint: 'failCommand',"
                    + " mode: {times: 1}, data: {failCommands: ['find'], blockConnection: true, blockTimeMS: 3000}}")));
            try (MongoClient client = MongoClients.create(proxy.connectionString()
                    + "&retryReads=true&socketTimeoutMS=1000&heartbeatFrequencyMS=60000"); // a second: no other command of a loaded machine nears it
                 ClientSession session = client.startSession()) {
                MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
                c.insertOne(new Document("_id", 1));
                long blockEnds = System.nanoTime() + Duration.ofMillis(3_000).toNanos();
                Document polled = c.find(session, new Document("_id", 1)).first(); // blocked, timed out, retried
                assertEquals(1, polled.getInteger("_id"));
                assertEquals(1, Meters.retries(proxy.registry(), "find"), "the driver retried the blocked find once");
                c.find(session, new Document("_id", 1)).first(); // the next poll, while the block still runs

                Thread.sleep(Math.max(0, (blockEnds - System.nanoTime()) / 1_000_000) + 300); // the block ends meanwhile
                assertEquals(1, Meters.outcomes(proxy.registry(), "find", "network_error"), "the blocked attempt ended once");
                c.find(session, new Document("_id", 1)).first(); // a poll after that late end
                c.find(session, new Document("_id", 1)).first();
                assertEquals(5, Meters.attempts(proxy.registry(), "find"), "the blocked attempt, its retry and three polls");
                assertEquals(1, Meters.retries(proxy.registry(), "find"), "the polls are new work, before and after the late end");
            }
        }
    }
}
