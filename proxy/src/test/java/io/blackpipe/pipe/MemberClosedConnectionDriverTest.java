package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.TcpTap;
import io.blackpipe.testing.UpstreamLane;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * A member that closes the proxy's connections to it (it exited, restarted, or a middlebox between them dropped them),
 * with the real driver through the proxy to the lane's node, reached through a TCP relay that drops every connection
 * it carries. The driver sees its connections close, and the proxy's log says the close came from the member: without
 * that line, nothing told an on-call engineer why a test's command failed with a network error.
 */
class MemberClosedConnectionDriverTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final String SAID = "closed the proxy's connection to it for client";

    private static MongoClient onePooledConnection(ProxyServer proxy) {
        return MongoClients.create(MongoClientSettings.builder().applyConnectionString(new ConnectionString(proxy.connectionString()))
                .retryWrites(true).applyToConnectionPoolSettings(pool -> pool.maxSize(1)).build());
    }

    @Test
    void aConnectionTheMemberClosesIsLoggedOnceASecondAndTheDriversRetryWritesOnce() throws Exception {
        BsonDocument hello = UpstreamLane.directHello();
        String node = hello.isString("primary") ? hello.getString("primary").getValue() : hello.getString("me").getValue();
        int nodePort = Integer.parseInt(node.substring(node.lastIndexOf(':') + 1));
        String db = UpstreamLane.freshDatabaseName("memberclosed");
        try (TcpTap relay = new TcpTap(node.substring(0, node.lastIndexOf(':')), nodePort);
             LogCapture log = LogCapture.start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(
                     UpstreamLane.directlyTo(UpstreamLane.uri(), "127.0.0.1:" + relay.port())));
             MongoClient client = onePooledConnection(proxy)) {
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            c.insertOne(new Document("_id", 1));
            int open = relay.recordings().size();
            assertTrue(open >= 2, "the pooled connection and the driver's monitor go through the relay: " + open);

            relay.dropConnections();
            String first = log.awaitContaining(WAIT, SAID);
            assertTrue(first.startsWith("member " + proxy.members().get(0).upstream() + " " + SAID + " "), first);
            assertTrue(first.matches(".* \\(connection \\d+\\): the client's connection closes too"), first);
            c.insertOne(new Document("_id", 2)); // its pooled connection closed: a network error, retried once on a new one

            try (MongoClient direct = UpstreamLane.directClient()) {
                List<Document> held = direct.getDatabase(db).getCollection("c").find().sort(new Document("_id", 1)).into(new ArrayList<>());
                assertEquals(List.of(new Document("_id", 1), new Document("_id", 2)), held);
            }
            long lines = log.messages().stream().filter(m -> m.contains(SAID)).count();
            assertTrue(lines < open, "a member's close of all its connections is said a line a second, not one each: " + lines
                    + " lines for " + open + " connections\n" + String.join("\n", log.messages()));
        }
    }

    @Test
    void theProxysOwnClosesAreNoMembers() throws Exception {
        String db = UpstreamLane.freshDatabaseName("proxyclosed");
        try (LogCapture log = LogCapture.start(); MongoClient direct = UpstreamLane.directClient()) {
            ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.singleNodeUri()));
            try (proxy; MongoClient client = onePooledConnection(proxy)) {
                MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
                c.insertOne(new Document("_id", 1));
                assertTrue(proxy.resetConnections(proxy.members().get(0).upstream().toString()) >= 2, "the pooled connection and the monitor's");
                c.insertOne(new Document("_id", 2)); // its pooled connection reset: retried on a new one
                proxy.close(); // with the driver's connections open (closing it again below is a no-op)
            }
            assertEquals(2, direct.getDatabase(db).getCollection("c").countDocuments());
            assertTrue(log.messages().stream().noneMatch(m -> m.contains(SAID)), String.join("\n", log.messages()));
        }
    }
}
