package io.blackpipe.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.blackpipe.BlackPipe;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.UpstreamLane;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.regex.Pattern;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * The log shows who injected a fault: every change through the control API (the CLI's too), and every failpoint an app
 * sets over the wire, is one INFO line naming the rule, its fault and commands, and where it came from. A job's log
 * alone could not show that a test's own rule failed it. The in-process API says nothing, or test output would fill up.
 */
class ControlLogDriverTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final Pattern BY_ADMIN = Pattern.compile(".*, by the admin API from 127\\.0\\.0\\.1:\\d+");

    @Test
    void ruleChangesResetsAndFailoversThroughTheAdminApiAreLoggedWithTheirClient() throws Exception {
        String db = UpstreamLane.freshDatabaseName("controllog");
        try (LogCapture log = LogCapture.start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.singleNodeUri()).withSimulatedMembers(3));
             MongoClient client = MongoClients.create(proxy.connectionString())) {
            AdminServer admin = AdminServer.start(proxy, "127.0.0.1", 0, null);
            try {
                MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
                String id = "ctl-" + System.nanoTime();
                HttpResponse<String> added = AdminHttpRequests.send(admin.port(), "POST", "/api/v1/rules", "{id: '" + id + "',"
                        + " configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find', 'count'], errorCode: 2}}");
                assertEquals(201, added.statusCode(), added.body());
                assertThrows(MongoCommandException.class, () -> c.find().first()); // the logged rule is the one that failed it
                String set = log.awaitContaining(WAIT, "rule " + id + " set: ");
                assertTrue(set.startsWith("rule " + id + " set: errorReply errorCode 2 on count, find (mode alwaysOn), by the admin API from 127.0.0.1:"), set);
                assertTrue(BY_ADMIN.matcher(set).matches(), set);

                assertEquals(200, AdminHttpRequests.send(admin.port(), "PUT", "/api/v1/rules/" + id,
                        "{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['insert'], closeConnection: true}}").statusCode());
                assertTrue(log.awaitContaining(WAIT, "rule " + id + " set: closeConnection on insert (mode {times: 1}").matches(BY_ADMIN.pattern()));
                assertEquals(200, AdminHttpRequests.send(admin.port(), "DELETE", "/api/v1/rules/" + id, null).statusCode());
                assertTrue(log.awaitContaining(WAIT, "rule " + id + " removed").matches(BY_ADMIN.pattern()));
                logged(admin, log, "DELETE", "/api/v1/rules", null, 200, "every rule removed (0 rules)");
                c.insertOne(new Document("_id", 1)); // the pool's connection, for the reset to cut

                logged(admin, log, "POST", "/api/v1/connections/reset", null, 200, "connections of every member reset (");
                logged(admin, log, "POST", "/api/v1/failover", null, 200, "failover asked: fail over");
                logged(admin, log, "POST", "/api/v1/reset", null, 200, "reset: scenario stopped, rules removed, members restored");

                String forged = "forged\n2026-01-01T00:00:00Z INFO blackpipe: all is well";
                assertEquals(201, AdminHttpRequests.send(admin.port(), "POST", "/api/v1/rules", "{id: '" + forged.replace("\n", "\\n")
                        + "', configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['ping'], errorCode: 2}}").statusCode());
                String escaped = log.awaitContaining(WAIT, "rule forged\\n2026-01-01T00:00:00Z INFO blackpipe: all is well set: ");
                assertFalse(escaped.contains("\n"), "a caller's id writes no log line of its own: " + escaped);

                logged(admin, log, "POST", "/api/v1/members/primary/latency?delay=300ms&duration=30s", null, 200,
                        "latency of member primary asked (delay=300ms, duration=30s)");
                long started = System.nanoTime();
                c.find().first(); // the latency the line says was asked is the one the driver meets
                assertTrue(System.nanoTime() - started >= 300_000_000L, "the find waited out the latency");
                logged(admin, log, "POST", "/api/v1/members/all/restore", null, 200, "restore of member all asked");
                logged(admin, log, "POST", "/api/v1/scenario/bundled/narrow-link", null, 200, "bundled scenario narrow-link started");
                logged(admin, log, "DELETE", "/api/v1/scenario", null, 200, "scenario stopped, by the admin API");

                int before = log.messages().size();
                assertEquals(404, AdminHttpRequests.send(admin.port(), "DELETE", "/api/v1/rules/none-such", null).statusCode());
                assertEquals(400, AdminHttpRequests.send(admin.port(), "POST", "/api/v1/rules", "{configureFailPoint: 'failCommand'}").statusCode());
                assertEquals(0, log.messages().subList(before, log.messages().size()).stream().filter(m -> m.contains("by the admin API")).count(),
                        "a refused change is no change: " + log.messages());
            } finally {
                admin.close();
            }
        }
    }

    @Test
    void anAppsConfigureFailPointIsLoggedWithTheClientAndTheInProcessApiIsNot() throws Exception {
        String db = UpstreamLane.freshDatabaseName("wirefailpoint");
        try (LogCapture log = LogCapture.start();
             BlackPipe blackPipe = BlackPipe.start(UpstreamLane.singleNodeUri());
             MongoClient client = MongoClients.create(blackPipe.connectionString())) {
            String member = blackPipe.server().members().get(0).advertised().toString();
            blackPipe.fail("delete").errorCode(2); // a JUnit test's own rule: no line
            assertThrows(MongoCommandException.class, () -> client.getDatabase(db).getCollection("c").deleteOne(new Document()));

            client.getDatabase("admin").runCommand(new Document("configureFailPoint", "failCommand").append("mode", new Document("times", 1))
                    .append("data", new Document("failCommands", java.util.List.of("insert")).append("errorCode", 2)));
            assertThrows(MongoCommandException.class, () -> client.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1)));
            String set = log.awaitContaining(WAIT, "rule failCommand@" + member + " set: ");
            assertTrue(set.matches("rule failCommand@" + Pattern.quote(member) + " set: errorReply errorCode 2 on insert on member " + Pattern.quote(member)
                    + " \\(mode \\{times: 1\\} \\(\\d left\\)\\), by configureFailPoint from client 127\\.0\\.0\\.1:\\d+ \\(connection \\d+\\)"), set);
            client.getDatabase("admin").runCommand(new Document("configureFailPoint", "failCommand").append("mode", "off"));
            String off = log.awaitContaining(WAIT, "rule failCommand@" + member + " removed");
            assertTrue(off.matches(".* removed \\(mode off\\), by configureFailPoint from client 127\\.0\\.0\\.1:\\d+ \\(connection \\d+\\)"), off);
            assertTrue(log.messages().stream().noneMatch(m -> m.contains("on delete")), "BlackPipe.fail(...) says nothing: " + log.messages());
        }
    }

    /** Sends a change the admin API takes with {@code status}, and returns its log line, which names the admin client. */
    private static String logged(AdminServer admin, LogCapture log, String method, String path, String body, int status, String line)
            throws Exception {
        HttpResponse<String> answered = AdminHttpRequests.send(admin.port(), method, path, body);
        assertEquals(status, answered.statusCode(), answered.body());
        String said = log.awaitContaining(WAIT, line);
        assertTrue(BY_ADMIN.matcher(said).matches(), said);
        return said;
    }
}
