package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.blackpipe.BlackPipe;
import io.blackpipe.testing.UpstreamLane;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * `blackpipe proxy --seed N` replays a run, as a user starts it: a child proxy process, a rule added
 * with the CLI's `fault add --probability 0.5`, and 40 inserts from the real driver (no retries) fail
 * in the same pattern under the same seed in another process, and in another pattern under another
 * seed. The server holds exactly the inserts the driver saw succeed.
 */
class SeedReplayCliTest {
    private static final Pattern ADMIN = Pattern.compile("^admin: http://([^/ ]+)/metrics");
    private static final int INSERTS = 40;

    @TempDir
    Path temp;

    /**
     * Starts `proxy --seed {@code seed}`, adds the rule through `fault add`, runs the inserts: which of
     * them failed (true) as the driver saw it, checked against what the server holds.
     */
    private List<Boolean> failuresUnderCliSeed(long seed) throws Exception {
        try (CliChild child = new CliChild(temp, null, Map.of(), "proxy", "--upstream", UpstreamLane.uri(), "--host", "127.0.0.1",
                "--port", "0", "--admin-port", "0", "--seed", Long.toString(seed))) {
            String uri = child.awaitLine("connection string: ").substring("connection string: ".length()).trim();
            assertTrue(child.seen.contains("fault seed: " + seed + " (replay with --seed " + seed + ")"), () -> child.seen.toString());
            String admin = child.seen.stream().map(ADMIN::matcher).filter(Matcher::find).map(m -> "http://" + m.group(1)).findFirst()
                    .orElseThrow(() -> new AssertionError("no admin line in " + child.seen));
            CliRun add = CliRun.of("fault", "add", "--command", "insert", "--error-code", "2", "--probability", "0.5", "--admin", admin);
            assertEquals(0, add.exitCode(), add::toString);
            return runInserts(uri);
        }
    }

    /** The inserts through {@code uri}, one by one: which failed with the rule's error; the server holds the others, and only them. */
    static List<Boolean> runInserts(String uri) {
        String db = UpstreamLane.freshDatabaseName("seedreplay");
        List<Boolean> failed = new ArrayList<>();
        List<Document> expected = new ArrayList<>();
        try (MongoClient client = MongoClients.create(uri + (uri.contains("?") ? "&" : "/?") + "retryWrites=false&socketTimeoutMS=30000")) {
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            for (int i = 0; i < INSERTS; i++) {
                try {
                    c.insertOne(new Document("_id", i));
                    failed.add(false);
                    expected.add(new Document("_id", i));
                } catch (MongoException e) {
                    assertEquals(2, e.getCode(), () -> "the rule's error, not " + e);
                    failed.add(true);
                }
            }
        }
        try (MongoClient direct = UpstreamLane.directClient()) {
            assertEquals(expected, direct.getDatabase(db).getCollection("c").find().sort(new Document("_id", 1)).into(new ArrayList<>()),
                    "the server holds exactly the inserts that succeeded");
        }
        long failures = failed.stream().filter(f -> f).count();
        assertTrue(failures > 0 && failures < INSERTS, "a probability of 0.5 fails some and not all: " + failed);
        return failed;
    }

    @Test
    void theSameSeedReplaysTheSamePatternInAnotherProcessAndAnotherSeedGivesAnother() throws Exception {
        List<Boolean> first = failuresUnderCliSeed(7);
        List<Boolean> replay = failuresUnderCliSeed(7);
        List<Boolean> other = failuresUnderCliSeed(8);
        assertEquals(first, replay, "--seed 7 twice: the same inserts failed");
        assertNotEquals(first, other, "--seed 8: another pattern");

        // and the CLI's seed is the in-process API's seed: the same rule, the same decisions
        try (BlackPipe blackPipe = BlackPipe.builder().upstream(UpstreamLane.uri()).seed(7).start()) {
            blackPipe.fail("insert").probability(0.5).errorCode(2);
            assertEquals(first, runInserts(blackPipe.connectionString()), "BlackPipe.builder().seed(7): the CLI's pattern");
        }
    }
}
