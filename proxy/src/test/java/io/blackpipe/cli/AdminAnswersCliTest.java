package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What the control commands do with what is not a blackpipe at --admin, and with an admin token no HTTP header can
 * carry. Before, an answer that was no JSON, or JSON of another shape, ended several commands with a stack trace; a
 * token with a newline failed as its header was built, printing the token; and the proxy started with such a token
 * answered every request 401.
 */
class AdminAnswersCliTest {
    /** An HTTP server that answers every request 200 with {@code body}, as another web server at --admin would. */
    private static HttpServer answering(String body) throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", exchange -> {
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, bytes.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        });
        server.start();
        return server;
    }

    private static void assertOneLineFailure(CliRun run) {
        assertEquals(1, run.exitCode(), run::toString);
        assertTrue(run.err().startsWith("blackpipe: the answer is not the admin API's JSON (is --admin a blackpipe's admin URL?)"),
                run::toString);
        assertFalse(run.err().contains("\tat "), () -> "no stack trace: " + run);
    }

    /** {@code command} run against a server that answers every request with {@code body}: one line, exit 1. */
    private static void assertOneLineFailureAgainst(String body, String command) throws IOException {
        HttpServer other = answering(body);
        try {
            String admin = "http://127.0.0.1:" + other.getAddress().getPort();
            assertOneLineFailure(CliRun.of((command + " --admin " + admin).split(" ")));
        } finally {
            other.stop(0);
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"expect --retries insert=1", "history", "fault add --command insert --reset", "health"})
    void anAnswerThatIsNoJsonIsSaidInOneLine(String command) throws IOException {
        assertOneLineFailureAgainst("<html><body>another web server</body></html>", command);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"members", "fault list", "connections list", "health"})
    void jsonOfAnotherShapeIsSaidInOneLine(String command) throws IOException {
        assertOneLineFailureAgainst("{}", command);
    }

    /** Docker's HEALTHCHECK reads the exit code: before, any 200 at --admin was healthy, whatever it said. */
    @Test
    void healthIsUnhealthyWhenTheAnswerDoesNotSayOk() throws IOException {
        HttpServer notOk = answering("{\"status\": \"starting\"}");
        try {
            CliRun run = CliRun.of("health", "--admin", "http://127.0.0.1:" + notOk.getAddress().getPort());
            assertEquals(1, run.exitCode(), run::toString);
            assertTrue(run.err().contains("/health did not say its status is ok"), run::toString);
            // a line of its own: in a terminal the error came on the body's line
            assertEquals("{\"status\": \"starting\"}" + System.lineSeparator(), run.out(), run::toString);
        } finally {
            notOk.stop(0);
        }
        HttpServer anotherOk = answering("{\"status\": \"ok\"}"); // another server's health page may say so too
        try {
            CliRun run = CliRun.of("health", "--admin", "http://127.0.0.1:" + anotherOk.getAddress().getPort());
            assertEquals(1, run.exitCode(), run::toString);
            assertTrue(run.err().contains("/health said ok but gave no connectionString: no blackpipe answered there"), run::toString);
        } finally {
            anotherOk.stop(0);
        }
    }

    @Test
    void aTokenNoHeaderCanCarryIsAUsageErrorThatDoesNotRepeatTheToken() {
        CliRun run = CliRun.of("stats", "--admin", "http://127.0.0.1:1", "--admin-token", "s3cret\nsecond line");
        assertEquals(2, run.exitCode(), run::toString);
        assertTrue(run.err().contains("--admin-token must be printable ASCII without spaces"), run::toString);
        assertFalse(run.err().contains("s3cret"), () -> "the token is a secret: " + run);

        CliRun proxy = CliRun.of("proxy", "--upstream", "mongodb://127.0.0.1:1/", "--admin-token", "two words");
        assertEquals(2, proxy.exitCode(), proxy::toString);
        assertTrue(proxy.err().contains("--admin-token must be printable ASCII without spaces"), proxy::toString);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"http://127.0.0.1:99999", "http://127.0.0.1:0"})
    void anAdminUrlWithAPortOutOfRangeIsAUsageError(String admin) {
        CliRun run = CliRun.of("stats", "--admin", admin);
        assertEquals(2, run.exitCode(), run::toString);
        assertTrue(run.err().contains("--admin '" + admin + "' is not a URL"), run::toString);
    }

    /** "Leave the option out" is the hint where that lasts until restore (--duration), not for --after or --down. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"idle-timeout primary --after 0", "restart primary --down 0"})
    void aZeroLengthOfItsOwnIsRefusedWithoutTheRestoreHint(String command) {
        CliRun run = CliRun.of(command.split(" "));
        assertEquals(2, run.exitCode(), run::toString);
        assertTrue(run.err().contains("'0' is shorter than 1ms"), run::toString);
        assertFalse(run.err().contains("leave the option out"), run::toString);
        CliRun outage = CliRun.of("outage", "primary", "--duration", "0");
        assertTrue(outage.err().contains("'0' is shorter than 1ms (leave the option out to last until restore)"), outage::toString);
    }

    /** An empty file typed on the command line ("$CERT" unset) is a usage error; before, the proxy started without it. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"--tls-cert", "--tls-key", "--tls-client-ca", "--scenario", "--history"})
    void anEmptyFileOptionIsAUsageError(String option) {
        CliRun run = CliRun.of("proxy", "--upstream", "mongodb://127.0.0.1:1/", option, "");
        assertEquals(2, run.exitCode(), run::toString);
        assertTrue(run.err().contains(option) && run.err().contains("an empty path; give a file, or leave the option out"), run::toString);
    }

    /** A usage error that quotes an upstream URI (a misspelt --upstream, the URI given to another option) masks its password. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"--upstrem", "--port"})
    void aUsageErrorQuotingAnUpstreamUriMasksItsPassword(String option) {
        CliRun run = CliRun.of("proxy", option, "mongodb://alice:TypoPW1@127.0.0.1:1/?replicaSet=rs0");
        assertEquals(2, run.exitCode(), run::toString);
        assertTrue(run.err().contains("mongodb://alice:****@127.0.0.1:1/?replicaSet=rs0"), run::toString);
        assertFalse(run.err().contains("TypoPW1"), run::toString);
        if (option.equals("--upstrem")) {
            assertTrue(run.err().contains("--upstream"), () -> "picocli's suggestion stays: " + run);
        }
    }

    /** An empty token typed on the command line ("$TOKEN" unset) is a usage error; before, the control API was left open. */
    @Test
    void anEmptyAdminTokenIsAUsageError() {
        CliRun run = CliRun.of("proxy", "--upstream", "mongodb://127.0.0.1:1/", "--admin-token", "");
        assertEquals(2, run.exitCode(), run::toString);
        assertTrue(run.err().contains("--admin-token") && run.err().contains("an empty token would leave the control API open"),
                run::toString);
    }

    /** `history --follow` cut off by the proxy (it fell behind) says why, exit 1, not "did the proxy stop?". */
    @Test
    void aFollowTheProxyEndsSaysWhy() throws IOException {
        String entry = "{\"type\": \"ok\", \"invoke\": \"2026-11-25T10:00:00Z\", \"complete\": \"2026-11-25T10:00:00.001Z\","
                + " \"member\": \"m:1\", \"command\": \"find\", \"ns\": \"db.c\", \"attempt\": 1, \"outcome\": \"ok\"}";
        HttpServer stream = answering(entry + "\n{\"error\": \"this follower fell more than 8 MiB behind, and its stream ends;"
                + " GET /api/v1/history?since=INSTANT catches up\"}\n");
        try {
            CliRun run = CliRun.of("history", "--follow", "--admin", "http://127.0.0.1:" + stream.getAddress().getPort());
            assertEquals(1, run.exitCode(), run::toString);
            assertTrue(run.out().contains("find"), run::toString);
            assertTrue(run.err().contains("this follower fell more than 8 MiB behind"), run::toString);
        } finally {
            stream.stop(0);
        }
    }

    /** A host name that does not resolve (a typo'd service name) is said so, not "connection refused". */
    @Test
    void anAdminHostThatDoesNotResolveIsSaidSo() {
        CliRun run = CliRun.of("stats", "--admin", "http://no-such-host.invalid:9090");
        assertEquals(1, run.exitCode(), run::toString);
        assertTrue(run.err().contains("cannot reach the blackpipe admin API at http://no-such-host.invalid:9090 (its host name does not resolve)"),
                run::toString);
    }
}
