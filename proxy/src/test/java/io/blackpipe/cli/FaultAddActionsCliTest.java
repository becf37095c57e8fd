package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoSocketReadException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.blackpipe.testing.CommandLog;
import io.blackpipe.testing.UpstreamLane;
import java.net.SocketException;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The connection-cutting flags of `fault add` do what their help says, as the real driver feels it
 * through a real proxy: --reset and --drop-reply end with a TCP reset, --close with an orderly close
 * (the help of --drop-reply said it closed the connection).
 */
class FaultAddActionsCliTest {
    @RegisterExtension
    static final SharedAdminRig shared = new SharedAdminRig();

    @AfterEach
    void clearRules() { // each case spends its times: 1 rule; one a failure left unspent must not fire in the next
        shared.rig().proxy().rules().clear();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
            "--reset, Reset the connection (TCP RST) before the server sees the command., true, 0",
            "--close, Close the connection before the server sees the command., false, 0",
            "--drop-reply, 'Let the command run, then drop its reply and reset the connection (TCP RST).', true, 1"})
    void eachFlagCutsTheConnectionAsItsHelpSays(String flag, String help, boolean reset, long applied) {
        CliRun usage = CliRun.of("fault", "add", "--help");
        String described = usage.out().replaceAll("\\s+", " ");
        assertTrue(described.contains(flag + " " + help), () -> "the help of " + flag + ": " + usage.out());

        CliRun added = shared.rig().run("fault", "add", "--command", "insert", flag, "--times", "1");
        assertEquals(0, added.exitCode(), added::toString);
        String db = UpstreamLane.freshDatabaseName("cut");
        String uri = CommandLog.withOptions(shared.rig().proxy().connectionString(), "retryWrites=false&socketTimeoutMS=10000");
        try (MongoClient client = MongoClients.create(uri); MongoClient direct = UpstreamLane.directClient()) {
            MongoSocketReadException cut = assertThrows(MongoSocketReadException.class,
                    () -> client.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1)));
            if (reset) {
                assertTrue(cut.getCause() instanceof SocketException && cut.getCause().getMessage().contains("reset"),
                        () -> "a TCP reset: " + cut + " caused by " + cut.getCause());
            } else {
                assertNull(cut.getCause(), "an orderly close ends the stream, it does not fail the read: " + cut);
                assertTrue(cut.getMessage().contains("Prematurely reached end of stream"), cut::toString);
            }
            assertEquals(applied, direct.getDatabase(db).getCollection("c").countDocuments(), "did the server apply the insert?");
        }
    }
}
