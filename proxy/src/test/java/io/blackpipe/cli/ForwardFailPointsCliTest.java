package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.blackpipe.testing.UpstreamLane;
import java.nio.file.Path;
import java.util.Map;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * `blackpipe proxy --forward-failpoints`, as a user starts it: a driver's configureFailPoint gets the
 * server's own answer, where without the flag blackpipe takes it as a rule and answers ok itself.
 * (Here the lane's server refuses it; BlackPipeTestOptionsTest also covers a server that takes it.)
 */
class ForwardFailPointsCliTest {
    private static final Document FAIL_POINT = Document.parse("{configureFailPoint: 'failCommand', mode: {times: 1},"
            + " data: {failCommands: ['count'], errorCode: 2}}");

    @TempDir
    Path temp;

    /** What configureFailPoint gets through a CLI proxy started with {@code flags}: "ok", or the error's code name. */
    private String answerThrough(String... flags) throws Exception {
        String[] args = new String[] {"proxy", "--upstream", UpstreamLane.uri(), "--host", "127.0.0.1", "--port", "0", "--admin-port", "-1"};
        String[] all = java.util.stream.Stream.concat(java.util.Arrays.stream(args), java.util.Arrays.stream(flags)).toArray(String[]::new);
        try (CliChild child = new CliChild(temp, null, Map.of(), all)) {
            String uri = child.awaitLine("connection string: ").substring("connection string: ".length()).trim();
            try (MongoClient client = MongoClients.create(uri)) {
                client.getDatabase("admin").runCommand(FAIL_POINT);
                return "ok";
            } catch (MongoCommandException e) {
                return e.getErrorCodeName();
            }
        }
    }

    /** A count run straight against the server: the code name of its error, or "ok". */
    private static String countOnTheServer(MongoClient direct) {
        try {
            direct.getDatabase("test").runCommand(new Document("count", "c"));
            return "ok";
        } catch (MongoCommandException e) {
            return e.getErrorCodeName();
        }
    }

    @Test
    void theFlagSendsTheAppsConfigureFailPointToTheServer() throws Exception {
        try (MongoClient direct = UpstreamLane.directClient()) {
            String directly;
            try {
                direct.getDatabase("admin").runCommand(FAIL_POINT);
                directly = "ok"; // a server with test commands (the mongod lane): it took it, and is told to forget it
                direct.getDatabase("admin").runCommand(new Document("configureFailPoint", "failCommand").append("mode", "off"));
            } catch (MongoCommandException e) { // the jongodb lane, Atlas: refused
                directly = e.getErrorCodeName();
            }
            System.out.println("configureFailPoint straight to the server: " + directly);

            assertEquals(directly, answerThrough("--forward-failpoints"), "the server's own answer");
            if (directly.equals("ok")) {
                assertEquals("BadValue", countOnTheServer(direct), "the server holds the failpoint (errorCode 2)");
            }

            assertEquals("ok", answerThrough(), "without the flag, blackpipe takes it as a rule");
            assertEquals("ok", countOnTheServer(direct), "the server was never told");
        }
    }
}
