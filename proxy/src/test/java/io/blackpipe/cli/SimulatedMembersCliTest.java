package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.connection.ServerDescription;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.UpstreamLane;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * `blackpipe proxy --simulate-members 3` as a user starts it (a child process over the lane's one
 * node): its startup lines and the real driver's cluster description show three members, one
 * primary; the CLI's `blackpipe failover` makes another member primary as the driver sees it, and
 * retryable writes issued before and after it land exactly once each on the server.
 */
class SimulatedMembersCliTest {
    private static final Pattern ADMIN = Pattern.compile("^admin: http://([^/ ]+)/metrics");
    private static final Pattern ADVERTISED = Pattern.compile("^  upstream .* -> advertised (\\S+)$");
    private static final int WRITES_EACH_SIDE = 10;

    @TempDir
    Path temp;

    private static String primaryOf(MongoClient client) {
        return client.getClusterDescription().getServerDescriptions().stream()
                .filter(ServerDescription::isPrimary).map(d -> d.getAddress().toString()).findFirst().orElse("none");
    }

    private static long count(MongoClient client, java.util.function.Predicate<ServerDescription> role) {
        return client.getClusterDescription().getServerDescriptions().stream().filter(role).count();
    }

    @Test
    void threeSimulatedMembersOnePrimaryAndTheCliFailoverMovesItWhileRetryableWritesLandOnce() throws Exception {
        try (CliChild child = new CliChild(temp, null, Map.of(), "proxy", "--upstream", UpstreamLane.singleNodeUri(), "--host", "127.0.0.1",
                "--port", "0", "--admin-port", "0", "--simulate-members", "3")) {
            String uri = child.awaitLine("connection string: ").substring("connection string: ".length()).trim();
            List<String> advertised = child.seen.stream().map(ADVERTISED::matcher).filter(Matcher::matches).map(m -> m.group(1)).toList();
            assertEquals(3, advertised.size(), () -> "one startup line per simulated member: " + child.seen);
            assertEquals(3, advertised.stream().distinct().count(), () -> "each on its own listener: " + child.seen);
            assertEquals(java.util.Set.copyOf(advertised), java.util.Set.copyOf(new ConnectionString(uri).getHosts()),
                    "the connection string names the three members");
            String admin = child.seen.stream().map(ADMIN::matcher).filter(Matcher::find).map(m -> "http://" + m.group(1)).findFirst()
                    .orElseThrow(() -> new AssertionError("no admin line in " + child.seen));

            String db = UpstreamLane.freshDatabaseName("simcli");
            // no heartbeat during the test, polled: the driver learns of the failover from a write, not before it
            MongoClientSettings settings = MongoClientSettings.builder()
                    .applyConnectionString(new ConnectionString(uri + "&retryWrites=true&socketTimeoutMS=30000"
                            + "&heartbeatFrequencyMS=120000&serverMonitoringMode=poll"))
                    .applyToClusterSettings(b -> b.serverSelectionTimeout(30, TimeUnit.SECONDS))
                    .build();
            List<Document> written = new ArrayList<>();
            try (MongoClient client = MongoClients.create(settings)) {
                MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
                for (int i = 0; i < WRITES_EACH_SIDE; i++) {
                    c.insertOne(new Document("_id", i));
                    written.add(new Document("_id", i));
                }
                Await.until(Duration.ofSeconds(30), () -> "the driver has heard from both secondaries: " + client.getClusterDescription(),
                        () -> count(client, ServerDescription::isSecondary) == 2);
                assertEquals(3, client.getClusterDescription().getServerDescriptions().size(), () -> client.getClusterDescription().toString());
                assertEquals(1, count(client, ServerDescription::isPrimary), () -> client.getClusterDescription().toString());
                assertEquals(advertised.get(0), primaryOf(client), "the first member is primary at start");

                CliRun failover = CliRun.of("failover", "--admin", admin);
                assertEquals(0, failover.exitCode(), failover::toString);

                for (int i = WRITES_EACH_SIDE; i < 2 * WRITES_EACH_SIDE; i++) {
                    c.insertOne(new Document("_id", i)); // the first one on the old primary: NotWritablePrimary, retried on the new one
                    written.add(new Document("_id", i));
                }
                String after = primaryOf(client);
                assertNotEquals(advertised.get(0), after, "the driver sees another member primary");
                assertEquals(advertised.get(1), after, "the simulated set's next member");
                assertEquals(1, count(client, ServerDescription::isPrimary), () -> client.getClusterDescription().toString());
            }
            // The driver learns of the failover from the old primary's refusal of the first write after it (then that write is
            // retried once), or, now and then, from a monitor check the driver had asked for before the failover and that
            // came after it (the CLI runs in this JVM, so the failover follows the first writes within milliseconds): then
            // no write meets the old primary. Either way no write is retried twice, lost or applied twice.
            CliRun refusedThenRetried = CliRun.of("expect", "--retries", "insert=1", "--outcomes", "insert:error=1",
                    "--attempts", "insert=" + (2 * WRITES_EACH_SIDE + 1), "--admin", admin);
            CliRun learnedFirst = refusedThenRetried.exitCode() == 0 ? null : CliRun.of("expect", "--retries", "insert=0",
                    "--outcomes", "insert:error=0", "--attempts", "insert=" + 2 * WRITES_EACH_SIDE, "--admin", admin);
            assertTrue(learnedFirst == null || learnedFirst.exitCode() == 0,
                    () -> "one write met the old primary and was retried once, or none did: " + refusedThenRetried + "\n" + learnedFirst);
            try (MongoClient direct = UpstreamLane.directClient()) {
                assertEquals(written, direct.getDatabase(db).getCollection("c").find().sort(new Document("_id", 1)).into(new ArrayList<>()),
                        "every write landed exactly once");
            }
        }
    }
}
