package io.blackpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import io.blackpipe.testing.UpstreamLane;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * runBundledScenario: the scenarios of fault-scripts/ travel in blackpipe's jar, so a test that
 * depends on blackpipe runs them by name, without a checkout of this repository.
 */
class BlackPipeBundledScenarioTest {

    @Test
    void aBundledScenarioRunsByNameAndTheDriverMeetsItsFault() {
        String db = UpstreamLane.freshDatabaseName("api-bundled");
        List<String> inserts = new CopyOnWriteArrayList<>();
        try (BlackPipe blackPipe = BlackPipe.start(UpstreamLane.uri());
             MongoClient client = MongoClients.create(MongoClientSettings.builder()
                     .applyConnectionString(new ConnectionString(blackPipe.connectionString() + "&retryWrites=true"))
                     .addCommandListener(new CommandListener() {
                         @Override
                         public void commandStarted(CommandStartedEvent event) {
                             if (event.getCommandName().equals("insert")) {
                                 inserts.add(event.getConnectionDescription().getServerAddress().toString());
                             }
                         }
                     }).build())) {
            blackPipe.runBundledScenario("transient-blip");
            assertEquals(List.of("blip"), blackPipe.server().rules().rules().stream().map(r -> r.id()).toList());

            client.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1));
            assertEquals(2, inserts.size(), "the driver's insert was reset once and retried: " + inserts);
            assertEquals(1, blackPipe.faultsInjected(Fault.RESET));
            assertEquals(1, blackPipe.retries("insert"));
        }
        try (MongoClient direct = UpstreamLane.directClient()) {
            assertEquals(1, direct.getDatabase(db).getCollection("c").countDocuments(), "the retry wrote it once");
        }
    }

    @Test
    void anUnknownNameIsRefusedNamingTheBundledScenarios() throws IOException {
        List<String> shipped;
        try (Stream<Path> files = Files.list(Path.of("../fault-scripts"))) {
            shipped = files.map(f -> f.getFileName().toString()).filter(f -> f.endsWith(".yaml"))
                    .map(f -> f.substring(0, f.length() - ".yaml".length())).sorted().toList();
        }
        assertTrue(shipped.contains("transient-blip"), shipped.toString());
        try (BlackPipe blackPipe = BlackPipe.start(UpstreamLane.uri())) {
            IllegalArgumentException typo = assertThrows(IllegalArgumentException.class,
                    () -> blackPipe.runBundledScenario("transient-blp"));
            assertEquals("no bundled scenario 'transient-blp' (bundled: " + String.join(", ", shipped)
                    + ")", typo.getMessage());
            // the report's own scenarios are not among them, nor is anything outside fault-scripts/
            for (String name : new String[] {"report/command-error", "../fault-scripts/transient-blip", "transient-blip.yaml", ""}) {
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> blackPipe.runBundledScenario(name));
                assertTrue(e.getMessage().startsWith("no bundled scenario '" + name + "' (bundled: "), e.getMessage());
            }
            // null is no name at all, as RemoteBlackPipe says of it (not a scenario called 'null')
            assertEquals("name: required, e.g. \"transient-blip\"",
                    assertThrows(IllegalArgumentException.class, () -> blackPipe.runBundledScenario(null)).getMessage());
            assertTrue(blackPipe.server().rules().rules().isEmpty(), "nothing was started");
        }
    }
}
