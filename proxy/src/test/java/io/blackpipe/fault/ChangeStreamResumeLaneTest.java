package io.blackpipe.fault;

import static org.junit.jupiter.api.Assumptions.assumeFalse;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.blackpipe.testing.UpstreamLane;
import org.bson.Document;

/**
 * {@link ChangeStreamResumeDriverTest} against the test lane's deployment, where it has change
 * streams (an external deployment, a mongod on PATH, Docker): a real server's change stream and
 * its resume through the proxy. jongodb answers $changeStream NotImplemented: there this class
 * is skipped, saying so, and the scripted upstream's run stands.
 */
class ChangeStreamResumeLaneTest extends ChangeStreamResumeDriverTest {
    @Override
    Upstream startUpstream() {
        // each case reported skipped, with why
        assumeFalse(UpstreamLane.isJongodb(), "the " + UpstreamLane.name() + " lane has no $changeStream");
        MongoClient direct = UpstreamLane.directClient();
        return new Upstream() {
            @Override
            public String uri() {
                return UpstreamLane.uri();
            }

            @Override
            public MongoCollection<Document> direct(String db, String collection) {
                return direct.getDatabase(db).getCollection(collection);
            }

            @Override
            public void close() {
                direct.close();
            }
        };
    }
}
