package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.blackpipe.testing.CommandLog;
import io.blackpipe.testing.UpstreamLane;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * `blackpipe proxy --admin-token TOKEN` (or BLACKPIPE_ADMIN_TOKEN in the proxy's environment), as a user
 * starts it, with the control commands as a user runs them: without the token a command is refused
 * (exit 1, 401, saying where the token goes) and changes nothing the driver feels; with it, by flag or
 * or by BLACKPIPE_ADMIN and BLACKPIPE_ADMIN_TOKEN in a control command's environment, the rule it adds fails the driver's insert, which the
 * server then does not hold. /health and /metrics answer without the token.
 */
class AdminTokenCliTest {
    private static final String TOKEN = "s3cret";

    @TempDir
    Path temp;

    /** A proxy child on the lane with a free admin port; its admin URL is read from the banner. */
    private record Proxy(CliChild child, String admin, String connectionString) {
        static Proxy start(Path temp, Map<String, String> env, String... flags) throws Exception {
            List<String> args = new ArrayList<>(List.of("proxy", "--upstream", UpstreamLane.uri(), "--host", "127.0.0.1", "--port", "0",
                    "--admin-port", "0"));
            args.addAll(List.of(flags));
            CliChild child = new CliChild(temp, null, env, args.toArray(String[]::new));
            try {
                // "admin: http://127.0.0.1:PORT/metrics  http://127.0.0.1:PORT/health"
                String adminLine = child.awaitLine("admin: ");
                String metrics = adminLine.substring("admin: ".length()).split("\\s+")[0];
                String admin = metrics.substring(0, metrics.length() - "/metrics".length());
                String uri = child.awaitLine("connection string: ").substring("connection string: ".length()).trim();
                return new Proxy(child, admin, uri);
            } catch (Throwable e) {
                child.close();
                throw e;
            }
        }
    }

    private static MongoClient driver(String connectionString) {
        // no retry: the rule's error reaches the application as the server's would
        return MongoClients.create(new CommandLog().driverOn(CommandLog.withOptions(connectionString, "retryWrites=false")).build());
    }

    private static int status(HttpClient http, String url) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofString()).statusCode();
    }

    /** The fired count of the only rule `fault list --json --admin ADMIN --admin-token TOKEN` shows. */
    private static int firedOfTheOnlyRule(String admin) {
        CliRun list = CliRun.of("fault", "list", "--json", "--admin", admin, "--admin-token", TOKEN);
        assertEquals(0, list.exitCode(), list::toString);
        var rules = BsonDocument.parse(list.out()).getArray("rules");
        assertEquals(1, rules.size(), list::toString);
        return rules.get(0).asDocument().getNumber("fired").intValue();
    }

    /**
     * `blackpipe fault list` run as a child with only {@code env} of the BLACKPIPE_* variables (picocli reads
     * them from the real environment, so an in-process run cannot be given them): its exit code, stdout lines up
     * to the rules table's header and first row when it printed one, and stderr.
     */
    private CliRun faultListWithEnvironment(Map<String, String> env) throws Exception {
        try (CliChild child = new CliChild(temp, null, env, "fault", "list")) {
            int exit = child.awaitExit();
            StringBuilder out = new StringBuilder();
            if (exit == 0) {
                out.append(child.awaitLine("ID")).append('\n').append(child.awaitLine("")).append('\n');
            }
            return new CliRun(exit, out.toString(), child.stderrText());
        }
    }

    private static void assertRefusedForWantOfTheToken(CliRun run) {
        assertEquals(1, run.exitCode(), run::toString);
        assertTrue(run.err().contains("401 Unauthorized"), run::toString);
        assertTrue(run.err().contains("--admin-token or BLACKPIPE_ADMIN_TOKEN"), run::toString);
    }

    /** The token flag, the control commands with and without it, and the open /health and /metrics. */
    @Test
    void theControlCommandsNeedTheTokenTheProxyWasStartedWithAndHealthAndMetricsDoNot() throws Exception {
        Proxy proxy = Proxy.start(temp, Map.of(), "--admin-token", TOKEN);
        String db = UpstreamLane.freshDatabaseName("adminToken");
        try (CliChild child = proxy.child(); MongoClient client = driver(proxy.connectionString());
             MongoClient direct = UpstreamLane.directClient()) {
            MongoCollection<Document> collection = client.getDatabase(db).getCollection("c");

            CliRun none = CliRun.of("fault", "list", "--admin", proxy.admin());
            assertRefusedForWantOfTheToken(none);
            assertTrue(none.err().contains("this resource needs Authorization: Bearer <admin token>"), none::toString);
            CliRun wrong = CliRun.of("fault", "list", "--admin", proxy.admin(), "--admin-token", "n0t-the-t0ken");
            assertRefusedForWantOfTheToken(wrong);
            assertTrue(wrong.err().contains("the Authorization given is not this proxy's"), () -> "not told as none: " + wrong);
            assertFalse(wrong.err().contains("n0t-the-t0ken"), () -> "the token given is never quoted: " + wrong);
            assertRefusedForWantOfTheToken(CliRun.of("fault", "add", "--admin", proxy.admin(), "--command", "insert",
                    "--error-code", "2", "--times", "1"));
            collection.insertOne(new Document("_id", 1)); // the refused rule is not there to fail it

            CliRun added = CliRun.of("fault", "add", "--admin", proxy.admin(), "--admin-token", TOKEN, "--command", "insert",
                    "--error-code", "2", "--times", "1");
            assertEquals(0, added.exitCode(), added::toString);
            MongoCommandException failed = assertThrows(MongoCommandException.class, () -> collection.insertOne(new Document("_id", 2)));
            assertEquals(2, failed.getErrorCode(), failed::toString);

            assertEquals(1, firedOfTheOnlyRule(proxy.admin()), "the rule added with the token failed the second insert");
            CliRun listed = faultListWithEnvironment(Map.of("BLACKPIPE_ADMIN", proxy.admin(), "BLACKPIPE_ADMIN_TOKEN", TOKEN));
            assertEquals(0, listed.exitCode(), listed::toString);
            assertTrue(listed.lines().get(1).contains("errorReply") && listed.lines().get(1).contains("insert"),
                    () -> "the table's row of the rule: " + listed);
            assertRefusedForWantOfTheToken(faultListWithEnvironment(Map.of("BLACKPIPE_ADMIN", proxy.admin())));

            assertEquals(List.of(new Document("_id", 1)), direct.getDatabase(db).getCollection("c").find().into(new ArrayList<>()),
                    "the server holds the insert no rule failed, not the one the token's rule failed");

            HttpClient http = HttpClient.newHttpClient();
            assertEquals(200, status(http, proxy.admin() + "/health"));
            assertEquals(200, status(http, proxy.admin() + "/metrics"));
            assertEquals(401, status(http, proxy.admin() + "/api/v1/rules"), "the API itself, not only the CLI, wants the token");
        }
    }

    /** BLACKPIPE_ADMIN_TOKEN in the proxy's own environment sets its token as --admin-token does. */
    @Test
    void theProxyTakesItsTokenFromBlackpipeAdminTokenInItsEnvironment() throws Exception {
        Proxy proxy = Proxy.start(temp, Map.of("BLACKPIPE_ADMIN_TOKEN", TOKEN));
        String db = UpstreamLane.freshDatabaseName("adminTokenEnv");
        try (CliChild child = proxy.child(); MongoClient client = driver(proxy.connectionString());
             MongoClient direct = UpstreamLane.directClient()) {
            assertRefusedForWantOfTheToken(CliRun.of("fault", "add", "--admin", proxy.admin(), "--command", "insert",
                    "--error-code", "2", "--times", "1"));
            client.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1));

            CliRun added = CliRun.of("fault", "add", "--admin", proxy.admin(), "--admin-token", TOKEN, "--command", "insert",
                    "--error-code", "2", "--times", "1");
            assertEquals(0, added.exitCode(), added::toString);
            assertThrows(MongoCommandException.class, () -> client.getDatabase(db).getCollection("c").insertOne(new Document("_id", 2)));
            assertEquals(1, firedOfTheOnlyRule(proxy.admin()));

            assertEquals(List.of(new Document("_id", 1)), direct.getDatabase(db).getCollection("c").find().into(new ArrayList<>()));
            HttpClient http = HttpClient.newHttpClient();
            assertEquals(200, status(http, proxy.admin() + "/health"));
            assertEquals(401, status(http, proxy.admin() + "/api/v1/rules"));
        }
    }
}
