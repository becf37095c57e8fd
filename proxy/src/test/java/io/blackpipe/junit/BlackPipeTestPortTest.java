package io.blackpipe.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.blackpipe.BlackPipe;
import io.blackpipe.testing.UpstreamLane;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code @BlackPipeTest(port = ...)}: the builder had port(n), the annotation did not, so an application under test
 * whose configuration names a fixed port could not be pointed at the extension's proxy.
 */
@ExtendWith(BlackPipeTestOptionsTest.LaneAsUpstream.class)
@BlackPipeTest(port = BlackPipeTestPortTest.PORT)
class BlackPipeTestPortTest {
    /** Fixed, as an application's configuration would be (an annotation takes constants only); below Linux's ephemeral ports. */
    static final int PORT = 27391;
    private static final String DB = UpstreamLane.freshDatabaseName("junit-port");

    @Test
    void anApplicationConfiguredWithTheFixedPortWritesThroughTheProxy(BlackPipe blackPipe) {
        assertTrue(blackPipe.connectionString().contains("127.0.0.1:" + PORT), blackPipe.connectionString());
        try (MongoClient app = MongoClients.create("mongodb://127.0.0.1:" + PORT + "/?directConnection=true");
             MongoClient direct = UpstreamLane.directClient()) {
            app.getDatabase(DB).getCollection("orders").insertOne(new Document("_id", 1));
            assertEquals(1, blackPipe.attempts("insert"), "through the proxy on that port");
            MongoCollection<Document> held = direct.getDatabase(DB).getCollection("orders");
            assertEquals(1, held.countDocuments(new Document("_id", 1)), "the server holds the write");
        }
    }
}
