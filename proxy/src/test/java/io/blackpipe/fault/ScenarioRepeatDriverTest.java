package io.blackpipe.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.blackpipe.BlackPipe;
import io.blackpipe.testing.UpstreamLane;
import java.nio.file.Files;
import java.nio.file.Path;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A step with {@code repeat}: a one-time fault added afresh every 1.5 s, three times, as a flaky
 * network would break a write now and then. Each copy fires once, the driver retries each broken
 * insert once, and the server holds every insert once. The fault takes first attempts only: a copy
 * added while a retry waits (the driver first hears from the member again, at least 500 ms after the
 * error) would break the retry too, as a network that flaky would. The copies are far enough apart
 * for that wait to end before the next one: a copy that replaced one not yet fired left three copies
 * two faults (every 300 ms, once, on a loaded machine).
 */
class ScenarioRepeatDriverTest {
    @TempDir
    Path dir;

    @Test
    void aRepeatedAddArmsItsOneTimeFaultAgainEachTime() throws Exception {
        Path scenario = Files.writeString(dir.resolve("flaky.yaml"), """
                name: flaky
                timeline:
                  - at: 0s
                    add: {id: blip, configureFailPoint: failCommand, mode: {times: 1}, data: {failCommands: [insert], closeConnection: true, attempt: first}}
                    repeat: {every: 1500ms, times: 3}
                """);
        String db = UpstreamLane.freshDatabaseName("repeat");
        try (BlackPipe proxy = BlackPipe.start(UpstreamLane.uri());
             MongoClient client = MongoClients.create(proxy.connectionString() + "&retryWrites=true")) {
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            c.insertOne(new Document("_id", -1)); // connected before the first copy
            proxy.runScenario(scenario);
            int inserted = 0;
            long deadline = System.nanoTime() + 20_000_000_000L;
            while (proxy.fired("blip") < 3 && System.nanoTime() < deadline) {
                c.insertOne(new Document("_id", inserted++)); // each broken one is retried, and lands once
            }
            assertEquals(3, proxy.fired("blip"), "each of the three copies fired once");
            assertEquals(3, proxy.retries("insert"), "one retry per broken insert");
            assertEquals(inserted + 1, proxy.attempts("insert") - 3, "every other attempt was a first attempt that landed");
            try (MongoClient direct = UpstreamLane.directClient()) {
                assertEquals(inserted + 1, direct.getDatabase(db).getCollection("c").countDocuments(), "every insert landed once");
            }
        }
    }
}
