package io.blackpipe.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;
import io.blackpipe.BlackPipe;
import io.blackpipe.testing.UpstreamLane;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * {@code @BlackPipeTest}'s options beyond the upstream: an admin server a test (or a CLI it runs)
 * can ask, and the application's own configureFailPoint commands passed on to the server.
 */
@ExtendWith(BlackPipeTestOptionsTest.LaneAsUpstream.class)
@BlackPipeTest(adminPort = 0, forwardFailPoints = true)
class BlackPipeTestOptionsTest {
    private static final String DB = UpstreamLane.freshDatabaseName("junit-options");

    @Test
    void theAdminServerServesTheCountersOfTheTestsCommands(BlackPipe blackPipe) throws Exception {
        try (MongoClient client = MongoClients.create(blackPipe.connectionString())) {
            client.getDatabase(DB).getCollection("orders").insertOne(new Document("n", 1));
        }
        HttpResponse<String> metrics = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(URI.create(blackPipe.adminUrl() + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, metrics.statusCode());
        assertTrue(metrics.body().lines().anyMatch(line -> line.startsWith("blackpipe_command_attempts_total{")
                && line.contains("command=\"insert\"") && line.endsWith(" 1.0")), metrics::body);
    }

    @Test
    void theAppsConfigureFailPointGoesToTheServerNotIntoTheRules(BlackPipe blackPipe) {
        Document failPoint = Document.parse("{configureFailPoint: 'failCommand', mode: {times: 1},"
                + " data: {failCommands: ['count'], errorCode: 2}}");
        try (MongoClient client = MongoClients.create(blackPipe.connectionString()); MongoClient direct = UpstreamLane.directClient()) {
            MongoDatabase admin = client.getDatabase("admin");
            MongoCommandException refused = null;
            try {
                admin.runCommand(failPoint);
            } catch (MongoCommandException e) { // a server without test commands, or the jongodb lane: its own refusal
                refused = e;
            }
            System.out.println("configureFailPoint through blackpipe: the server " + (refused == null ? "took it"
                    : "refused it (" + refused.getErrorCode() + " " + refused.getErrorCodeName() + ")"));
            assertTrue(blackPipe.rules().isEmpty(), "not taken as a rule: " + blackPipe.rules());
            assertEquals(1, blackPipe.attempts("configureFailPoint"), "forwarded, and counted as any forwarded command");
            if (refused != null) {
                int code = refused.getErrorCode();
                MongoCommandException directly = assertThrows(MongoCommandException.class,
                        () -> direct.getDatabase("admin").runCommand(failPoint), "the server refuses it without the proxy too");
                assertEquals(code, directly.getErrorCode(), "the server's own answer came back");
            } else { // the server took it: the server fails the next count, not the proxy
                try {
                    MongoCommandException failed = assertThrows(MongoCommandException.class,
                            () -> client.getDatabase(DB).runCommand(new Document("count", "orders")));
                    assertEquals(2, failed.getErrorCode());
                    assertEquals(0, blackPipe.faultsInjected("errorReply"), "the failure was the server's");
                } finally {
                    direct.getDatabase("admin").runCommand(new Document("configureFailPoint", "failCommand").append("mode", "off"));
                }
            }
        }
    }

    /** The lane's upstream as the system property a build would set. */
    static final class LaneAsUpstream implements BeforeAllCallback, AfterAllCallback {
        private String previous;

        @Override
        public void beforeAll(ExtensionContext context) {
            previous = System.setProperty(BlackPipeExtension.UPSTREAM_PROPERTY, UpstreamLane.uri());
        }

        @Override
        public void afterAll(ExtensionContext context) {
            if (previous == null) {
                System.clearProperty(BlackPipeExtension.UPSTREAM_PROPERTY);
            } else {
                System.setProperty(BlackPipeExtension.UPSTREAM_PROPERTY, previous);
            }
        }
    }
}
