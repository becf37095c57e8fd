package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.testing.UpstreamLane;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** `fault add --reply JSON`: a canned reply from the command line, as the driver meets it; what cannot be sent, exit 2. */
class FaultAddReplyCliTest {

    @Test
    void theReplyGivenOnTheCommandLineIsWhatTheDriverReads() {
        String db = UpstreamLane.freshDatabaseName("cliReply");
        try (AdminRig rig = AdminRig.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            CliRun added = rig.run("fault", "add", "--command", "find", "--times", "1", "--reply",
                    "{\"ok\": 1, \"cursor\": {\"id\": 0, \"ns\": \"" + db + ".c\", \"firstBatch\": [{\"_id\": \"ghost\"}]}}");
            assertEquals(0, added.exitCode(), added::toString);
            try (MongoClient client = MongoClients.create(rig.proxy().connectionString())) {
                assertEquals(List.of(new Document("_id", "ghost")),
                        client.getDatabase(db).getCollection("c").find().into(new java.util.ArrayList<>()));
            }
            assertEquals(1, rig.proxy().rules().fired(rig.ruleIds().get(0)));
        }
    }

    /** Before, the reply reached the proxy as relaxed JSON: its {"$numberLong": "3"} was a bare 3, an int for the driver. */
    @Test
    void anInt64InTheReplyStaysOne() {
        try (AdminRig rig = AdminRig.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            CliRun added = rig.run("fault", "add", "--command", "ping", "--reply", "{\"ok\": 1, \"n\": {\"$numberLong\": \"3\"}}");
            assertEquals(0, added.exitCode(), added::toString);
            try (MongoClient client = MongoClients.create(rig.proxy().connectionString())) {
                assertEquals(3L, client.getDatabase("admin").runCommand(new Document("ping", 1)).getLong("n"));
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "{ok: |--reply: not a JSON document",
            "{\"n\": 1}|--reply: required, a number",
            "[1, 2]|--reply: not a JSON document"})
    void aReplyThatCannotBeSentIsAUsageError(String reply, String message) {
        try (AdminRig rig = AdminRig.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            CliRun run = rig.run("fault", "add", "--command", "insert", "--reply", reply);
            assertEquals(2, run.exitCode(), run::toString);
            assertTrue(run.err().contains(message), run::toString);
            assertTrue(run.err().contains("Usage:"), run::toString);
            assertEquals(List.of(), rig.ruleIds(), "nothing was sent");
        }
    }

    @Test
    void aReplyAndAnotherActionAreTwoActions() {
        try (AdminRig rig = AdminRig.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            CliRun run = rig.run("fault", "add", "--command", "insert", "--reply", "{\"ok\": 1}", "--error-code", "2");
            assertEquals(2, run.exitCode(), run::toString);
            assertTrue(run.err().contains("--error-code and --reply are two actions"), run::toString);
        }
    }
}
