package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.testing.ScriptedMongod;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * What a client chose (its appName, its command names) printed raw in the CLI's tables: one holding a newline printed a row of its own
 * making under `connections list`, and a command name holding one under `history` (a fuzzer forged both), and an ESC could drive the reader's terminal.
 * Control characters are now escaped; --json, Prometheus and the history API carried them escaped already.
 */
class ClientTextInTablesTest {
    private static final String FORGED = "app\n999  127.0.0.1:1  10.6.6.6:1  forged-app\u001b[31m\u202e\uDB40\uDC41";

    @Test
    void anAppNameWithANewlinePrintsEscapedInItsOwnRow() throws Exception {
        try (ScriptedMongod member = ScriptedMongod.start();
             AdminRig rig = AdminRig.start(ProxyConfig.embedded("mongodb://" + member.address() + "/?replicaSet=" + ScriptedMongod.SET_NAME));
             MongoClient client = MongoClients.create(MongoClientSettings.builder()
                     .applyConnectionString(new ConnectionString(rig.proxy().connectionString())).applicationName(FORGED).build())) {
            client.getDatabase("admin").runCommand(new Document("ping", 1));
            try {
                client.getDatabase("admin").runCommand(new Document(FORGED, 1)); // a command of that name: the history's row
            } catch (MongoCommandException e) {
                // no such command: its history entry is what this is about
            }
            for (String[] command : new String[][] {{"connections", "list"}, {"history"}}) {
                CliRun run = rig.run(command);
                assertEquals(0, run.exitCode(), run::toString);
                assertTrue(run.out().contains("app\\n999  127.0.0.1:1  10.6.6.6:1  forged-app\\u001b[31m\\u202e\\U000e0041"), run::toString);
                assertFalse(run.out().lines().anyMatch(line -> line.startsWith("999")), () -> "a row the client forged: " + run);
                assertFalse(run.out().contains("\u001b") || run.out().contains("\u202e"), "no ESC, no right-to-left override: " + run);
            }
        }
    }

    /** A lone surrogate (a JSON "\\ud800" with no partner) printed as "?": ids "r\\ud800" and "r\\udbff" listed alike. */
    @Test
    void aLoneSurrogateInARuleIdPrintsEscaped() throws Exception {
        try (ScriptedMongod member = ScriptedMongod.start();
             AdminRig rig = AdminRig.start(ProxyConfig.embedded("mongodb://" + member.address() + "/?replicaSet=" + ScriptedMongod.SET_NAME))) {
            for (String id : new String[] {"r\\ud800", "r\\udbff"}) {
                CliRun added = rig.run("fault", "add", "--json", "{id: '" + id + "', configureFailPoint: 'failCommand', mode: 'alwaysOn',"
                        + " data: {failCommands: ['insert'], errorCode: 91}}");
                assertEquals(0, added.exitCode(), added::toString);
            }
            CliRun list = rig.run("fault", "list");
            assertEquals(0, list.exitCode(), list::toString);
            assertTrue(list.out().contains("r\\ud800 ") && list.out().contains("r\\udbff "), list::toString);
            assertFalse(list.out().contains("?"), list::toString);
        }
    }
}
