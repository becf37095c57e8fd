package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.connection.ClusterType;
import io.blackpipe.admin.AdminServer;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.testing.BindRetry;
import io.blackpipe.testing.HeldPort;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.wire.BlockingCommandClient;
import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The command line: exit codes (0 ok, 1 failed, 2 bad arguments with usage), options naming
 * themselves in errors, help everywhere, environment defaults, and what `proxy` prints once it
 * serves. In-process through {@link Main#commandLine()} where the command returns; in a child
 * JVM (the test class path, no shaded jar needed) where it serves until stopped or reads the
 * environment.
 */
class CliTest {
    @TempDir
    Path temp;

    private static CliRun run(String... args) {
        return CliRun.of(args);
    }

    /**
     * A loopback port nothing listened on a moment ago (bound, then released), for an upstream that is never dialled
     * (a usage error comes first). One that is dialled and must refuse is a {@link HeldPort}: a port let go could be
     * given to another process, which would answer.
     */
    private static int closedPort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    // ------------------------------------------------------------------ usage errors: exit 2

    @Test
    void anUnknownOptionExitsTwoWithUsage() {
        CliRun run = run("proxy", "--upstream", "mongodb://127.0.0.1:1/", "--no-such-option");
        assertEquals(2, run.exitCode(), run::toString);
        assertTrue(run.err().contains("Unknown option: '--no-such-option'"), run::toString);
        assertTrue(run.err().contains("Usage: blackpipe proxy"), run::toString);

        CliRun top = run("--no-such-option");
        assertEquals(2, top.exitCode(), top::toString);
        assertTrue(top.err().contains("Usage: blackpipe"), top::toString);
    }

    @Test
    void noCommandExitsTwoWithUsage() {
        CliRun run = run();
        assertEquals(2, run.exitCode(), run::toString);
        assertTrue(run.err().contains("a command is required"), run::toString);
        assertTrue(run.err().contains("Usage: blackpipe"), run::toString);
    }

    static Stream<Arguments> badValues() {
        return Stream.of(
                Arguments.of(List.of("--member-port", "db1"), "--member-port"),
                Arguments.of(List.of("--member-port", "db1:27017=next"), "--member-port"),
                Arguments.of(List.of("--member-port", "db1:27017=70000"), "--member-port"),
                Arguments.of(List.of("--member-port", "db1:27017=0"), "--member-port"),
                Arguments.of(List.of("--port", "70000"), "--port"),
                Arguments.of(List.of("--port", "-1"), "--port"),
                Arguments.of(List.of("--port", "first"), "--port"),
                Arguments.of(List.of("--connect-timeout-ms", "0"), "--connect-timeout-ms"),
                Arguments.of(List.of("--connect-timeout-ms", "-5"), "--connect-timeout-ms"),
                Arguments.of(List.of("--connect-timeout-ms", "soon"), "--connect-timeout-ms"),
                Arguments.of(List.of("--admin-port", "-2"), "--admin-port"),
                Arguments.of(List.of("--tls-cert", "server.pem"), "--tls-key"),
                Arguments.of(List.of("--tls-client-ca", "ca.pem"), "--tls-client-ca"),
                Arguments.of(List.of("--max-connections", "-1"), "--max-connections"),
                Arguments.of(List.of("--host", "999.1.1.1"), "--host '999.1.1.1' is neither an IP address nor a host name that resolves"),
                Arguments.of(List.of("--admin-host", "999.1.1.1"), "--admin-host '999.1.1.1' is neither an IP address"),
                // once advertised as given: "mongodb://bad name:27017/", "mongodb://[::g]:27017/", "mongodb://[[::1]:5]:27017/"
                Arguments.of(List.of("--advertise-host", "bad name"), "--advertise-host 'bad name' is not a host name"),
                Arguments.of(List.of("--advertise-host", "::g"), "--advertise-host '::g' is not an IPv6 address"),
                Arguments.of(List.of("--advertise-host", "[::1]:5"), "--advertise-host '[::1]:5' gives a port"),
                Arguments.of(List.of("--advertise-host", "db.example:27017"), "--advertise-host 'db.example:27017' gives a port"),
                Arguments.of(List.of("--advertise-host", "0.0.0.0"), "--advertise-host '0.0.0.0' is a wildcard address"),
                Arguments.of(List.of("--member-port", "[::1]:99999=28000"), "--member-port '[::1]:99999=28000': '[::1]:99999': port 99999 is out of range"),
                Arguments.of(List.of("--port", "65534", "--simulate-members", "3"),
                        "--port 65534 leaves no room for --simulate-members 3: their listeners take ports 65534-65536, past 65535"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badValues")
    void aBadValueExitsTwoNamingTheOption(List<String> option, String name) throws IOException {
        List<String> args = new ArrayList<>(List.of("proxy", "--upstream", "mongodb://127.0.0.1:" + closedPort() + "/"));
        args.addAll(option);
        CliRun run = run(args.toArray(new String[0]));
        assertEquals(2, run.exitCode(), run::toString); // an unreachable upstream would be 1: the bad value is caught first
        String firstLine = run.err().lines().findFirst().orElse("");
        assertTrue(firstLine.contains(name), () -> "the error must name " + name + ": " + run);
        assertTrue(run.err().contains("Usage: blackpipe proxy"), run::toString);
    }

    @Test
    void anAuthMechanismThatIsNoMechanismIsAUsageErrorThatHidesThePassword() {
        CliRun run = run("proxy", "--upstream", "mongodb://u:s3cret@127.0.0.1:1/?authMechanism=SCRAM-SHA-512");
        assertEquals(2, run.exitCode(), run::toString);
        assertTrue(run.err().contains("authMechanism=SCRAM-SHA-512 is not a MongoDB authentication mechanism"), run::toString);
        assertFalse(run.err().contains("s3cret"), run::toString);
    }

    @Test
    void localChecksItsOptionsBeforeStartingAnUpstream() {
        CliRun run = run("local", "--simulate-members", "9", "--check", "--port", "0", "--admin-port", "-1");
        assertEquals(2, run.exitCode(), run::toString);
        assertTrue(run.err().startsWith("--simulate-members 9 must be from 2 to 7"), run::toString);
        assertTrue(run.err().contains("Usage: blackpipe local"), run::toString);
        assertEquals("", run.out(), "no upstream was started for a usage error: " + run);
    }

    @Test
    void aReportUpstreamThatIsNoMongodbUriIsAUsageError() {
        CliRun run = run("report", "--upstream", "http://x", "--iterations", "1");
        assertEquals(2, run.exitCode(), run::toString);
        assertTrue(run.err().startsWith("the upstream URI must start with mongodb:// or mongodb+srv://, got 'http://x'"), run::toString);
        assertTrue(run.err().contains("Usage: blackpipe report"), run::toString);
    }

    /** The report's own clients read the URI with the driver: an option it refuses is the user's to fix, not a failed run. */
    @Test
    void aReportUpstreamWithAnOptionTheDriverRefusesIsAUsageError() {
        for (String option : List.of("readPreference=bogus", "w=-5", "readConcernLevel=bogus", "serverSelectionTimeoutMS=abc")) {
            CliRun run = run("report", "--iterations", "1", "--upstream", "mongodb://127.0.0.1:1/?" + option);
            assertEquals(2, run.exitCode(), run::toString);
            assertTrue(run.err().startsWith("the upstream URI"), run::toString);
            assertTrue(run.err().contains("(" + option.substring(0, option.indexOf('=')) + ")"), run::toString);
            assertTrue(run.err().contains("Usage: blackpipe report"), run::toString);
        }
    }

    /** `--upstream "$MONGODB_URI"` with the variable unset: not a report on a local upstream the user never asked for. */
    @Test
    void anEmptyReportUpstreamIsAUsageErrorNotALocalRun() {
        for (String empty : List.of("", "  ")) {
            CliRun run = run("report", "--spec", "--driver-cmd", "true", "--upstream", empty);
            assertEquals(2, run.exitCode(), run::toString);
            assertTrue(run.err().startsWith("--upstream needs a URI"), run::toString);
            assertTrue(run.err().contains("Usage: blackpipe report"), run::toString);
            assertFalse(run.err().contains("starting a local upstream"), run::toString);
        }
    }

    /** --spec runs each case once and draws nothing: an -n or a --seed given to it would be silently ignored. */
    @Test
    void theReportsIterationsAndSeedAreRefusedWithSpec() {
        for (String[] option : List.of(new String[] {"-n", "5"}, new String[] {"--iterations", "5"}, new String[] {"--seed", "7"})) {
            CliRun run = run("report", "--spec", option[0], option[1], "--upstream", "mongodb://127.0.0.1:1/");
            assertEquals(2, run.exitCode(), run::toString);
            String name = option[0].equals("--seed") ? "--seed" : "--iterations";
            assertTrue(run.err().startsWith(name + " goes with the report, not --spec"), run::toString);
            assertTrue(run.err().contains("Usage: blackpipe report"), run::toString);
        }
    }

    @Test
    void anEmptyDriverCommandIsAUsageError() {
        for (String empty : List.of("", " ")) {
            CliRun run = run("report", "--spec", "--driver-cmd", empty, "--upstream", "mongodb://127.0.0.1:1/");
            assertEquals(2, run.exitCode(), run::toString);
            assertTrue(run.err().startsWith("--driver-cmd needs a command"), run::toString);
            assertTrue(run.err().contains("Usage: blackpipe report"), run::toString);
        }
    }

    // ------------------------------------------------------------------ success: exit 0

    @Test
    void localStartsAnUpstreamAndChecksThePathThroughTheProxy() {
        CliRun run = run("local", "--check", "--port", "0", "--admin-port", "-1");
        assertEquals(0, run.exitCode(), run::toString);
        // the hello came back naming the proxy's listener, and its ok reads as a number, not a BSON type
        assertTrue(run.out().matches("(?s).*\ncheck: hello through 127\\.0\\.0\\.1:(\\d+) answered me=127\\.0\\.0\\.1:\\1, ok: 1\n.*"),
                run::toString);
        assertTrue(run.out().contains("connection string: mongodb://127.0.0.1:"), run::toString);
        assertFalse(run.out().contains("serving;"), "--check exits after the check: " + run);
        // what a user's own tests put an in-process proxy in front of (BlackPipe.start, -Dblackpipe.upstream)
        assertTrue(run.out().matches("(?s).*\nupstream uri: mongodb://127\\.0\\.0\\.1:\\d+[^\n]*\n.*"), run::toString);
    }

    // ------------------------------------------------------------------ failures: exit 1

    @Test
    void theReportNamesTheUpstreamWithoutItsPassword() {
        try (HeldPort refusing = HeldPort.any()) {
            int port = refusing.port();
            CliRun run = run("report", "--upstream", "mongodb://u:s3cret@127.0.0.1:" + port + "/", "--iterations", "1");
            assertEquals(1, run.exitCode(), run::toString);
            assertTrue(run.err().contains("the deployment at mongodb://u:****@127.0.0.1:" + port + "/"), run::toString);
            assertFalse(run.err().contains("s3cret") || run.out().contains("s3cret"), run::toString);
        }
    }

    @Test
    void anUnreachableUpstreamExitsOneNamingTheSeeds() {
        try (HeldPort first = HeldPort.any(); HeldPort second = HeldPort.any()) {
            CliRun run = run("proxy", "--upstream", "mongodb://127.0.0.1:" + first.port() + ",127.0.0.1:" + second.port() + "/?replicaSet=rs0",
                    "--host", "127.0.0.1", "--port", "0", "--admin-port", "-1", "--connect-timeout-ms", "1000");
            assertEquals(1, run.exitCode(), run::toString);
            assertTrue(run.err().contains("no upstream seed answered"), run::toString);
            assertTrue(run.err().contains("127.0.0.1:" + first.port()) && run.err().contains("127.0.0.1:" + second.port()), run::toString);
            assertFalse(run.err().contains("Usage:"), "a failure is not a usage error: " + run);
            assertEquals("", run.out(), "nothing is announced when nothing is served");
        }
    }

    @Test
    void aHistoryFileThatCannotBeOpenedExitsOneSayingWhy() throws IOException {
        Path noDirectory = temp.resolve("missing").resolve("h.jsonl");
        for (String[] file : List.of(new String[] {noDirectory.toString(), "its directory " + noDirectory.getParent() + " does not exist"},
                new String[] {temp.toString(), "cannot open the history file " + temp + ": Is a directory"})) {
            CliRun run = run("proxy", "--upstream", UpstreamLane.uri(), "--host", "127.0.0.1", "--port", "0", "--admin-port", "-1",
                    "--history", file[0]);
            assertEquals(1, run.exitCode(), run::toString);
            assertTrue(run.err().contains(file[1]), run::toString); // it said "cannot open the history file X: X"
        }
    }

    @Test
    void aListenerPortInUseExitsOneNamingItAndLeavesNothingOpen() throws Exception {
        try (ScriptedMongod upstream = ScriptedMongod.start();
             ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CliRun run = run("proxy", "--upstream", rsUri(upstream), "--host", "127.0.0.1",
                    "--port", Integer.toString(taken.getLocalPort()), "--admin-port", "-1");
            assertEquals(1, run.exitCode(), run::toString);
            assertTrue(run.err().contains("cannot listen on port " + taken.getLocalPort()), run::toString);
            assertTrue(run.err().contains(upstream.address()), "the member is named: " + run);
        }
    }

    /**
     * The member port is held until just before the run, which binds it by number; a port given to another process in
     * that moment, or once the proxy let it go and before the test binds it again, runs the whole case again. A proxy
     * that keeps its listener fails every run.
     */
    @Test
    void anAdminPortInUseExitsOneAndReleasesTheMemberListeners() throws Exception {
        BindRetry.upTo(3, CliTest::anAdminPortInUseReleasesTheMemberListener);
    }

    private static void anAdminPortInUseReleasesTheMemberListener() throws Exception {
        int memberPort;
        try (ScriptedMongod upstream = ScriptedMongod.start();
             ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
             HeldPort member = HeldPort.any()) {
            memberPort = member.port();
            member.close();
            CliRun run = run("proxy", "--upstream", rsUri(upstream), "--host", "127.0.0.1", "--port", Integer.toString(memberPort),
                    "--admin-host", "127.0.0.1", "--admin-port", Integer.toString(taken.getLocalPort()));
            BindRetry.throwIfTaken(run.err(), memberPort);
            assertEquals(1, run.exitCode(), run::toString);
            assertTrue(run.err().contains("cannot start the admin server on 127.0.0.1:" + taken.getLocalPort()), run::toString);
        }
        try (ServerSocket again = new ServerSocket()) {
            try {
                again.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), memberPort));
            } catch (BindException e) {
                BindException kept = new BindException("port " + memberPort + " is still in use: the proxy did not close its member"
                        + " listener when the admin server failed (or another process took the port since)");
                kept.initCause(e);
                throw kept;
            }
            assertEquals(memberPort, again.getLocalPort(), "the proxy closed its member listener when the admin server failed");
        }
    }

    // ------------------------------------------------------------------ help: exit 0

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"--help", "-h", "proxy --help", "local --help", "health --help", "help", "help proxy", "proxy -h"})
    void helpExitsZeroOnEveryCommand(String args) {
        CliRun run = run(args.split(" "));
        assertEquals(0, run.exitCode(), run::toString);
        assertTrue(run.out().contains("Usage: blackpipe"), run::toString);
        assertEquals("", run.err(), run::toString);
        if (args.startsWith("proxy") || args.equals("help proxy")) {
            for (String option : List.of("--upstream", "--port", "--member-port", "--connect-timeout-ms", "--admin-port")) {
                assertTrue(run.out().contains(option), () -> option + " missing from " + run);
            }
            assertTrue(run.out().contains("BLACKPIPE_UPSTREAM"), "the env variables are documented: " + run);
        }
    }

    @Test
    void versionExitsZero() {
        CliRun run = run("--version");
        assertEquals(0, run.exitCode(), run::toString);
        assertTrue(run.out().startsWith("blackpipe "), run::toString);
    }

    // ------------------------------------------------------------------ health

    @Test
    void healthExitsZeroAgainstARunningProxyAndOneOtherwise() throws Exception {
        try (ScriptedMongod upstream = ScriptedMongod.start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded("mongodb://" + upstream.address() + "/?replicaSet="
                     + ScriptedMongod.SET_NAME));
             AdminServer admin = AdminServer.start(proxy, "127.0.0.1", 0);
             AdminServer guarded = AdminServer.start(proxy, "127.0.0.1", 0, "s3cret")) {
            CliRun ok = run("health", "--admin", "http://127.0.0.1:" + admin.port());
            assertEquals(0, ok.exitCode(), ok::toString);
            // a script passing the token to every command may pass it here too (it was "Unknown option"); /health needs none
            CliRun withToken = run("health", "--admin", "http://127.0.0.1:" + guarded.port(), "--admin-token", "s3cret");
            assertEquals(0, withToken.exitCode(), withToken::toString);
            CliRun withoutToken = run("health", "--admin", "http://127.0.0.1:" + guarded.port());
            assertEquals(0, withoutToken.exitCode(), withoutToken::toString);
        }
        try (HeldPort closed = HeldPort.any()) {
            CliRun down = run("health", "--admin", "http://127.0.0.1:" + closed.port());
            assertEquals(1, down.exitCode(), down::toString);
            assertEquals("blackpipe: http://127.0.0.1:" + closed.port() + " did not answer: connection refused", down.err().strip()); // not "java.net.ConnectException"
        }
    }

    @Test
    void healthTakesTheAdminAddressesTheControlCommandsTake() throws Exception {
        try (ScriptedMongod upstream = ScriptedMongod.start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(rsUri(upstream)));
             AdminServer admin = AdminServer.start(proxy, "127.0.0.1", 0)) {
            for (String address : List.of("127.0.0.1:" + admin.port(), "localhost:" + admin.port(),
                    "http://127.0.0.1:" + admin.port() + "/")) {
                CliRun stats = run("stats", "--admin", address);
                assertEquals(0, stats.exitCode(), stats::toString);
                CliRun health = run("health", "--admin", address);
                assertEquals(0, health.exitCode(), health::toString);
                assertTrue(health.out().contains("\"status\""), health::toString);
            }
        }
        CliRun bad = run("health", "--admin", "ftp://127.0.0.1:9090");
        assertEquals(2, bad.exitCode(), bad::toString);
        assertTrue(bad.err().startsWith("--admin 'ftp://127.0.0.1:9090' is not a URL"), bad::toString);
        assertTrue(bad.err().contains("Usage: blackpipe health"), bad::toString);
    }

    // ------------------------------------------------------------------ child JVM runs

    /** A child `java io.blackpipe.cli.Main ...` with no BLACKPIPE_* variables except {@code env}. */

    private static String rsUri(ScriptedMongod seed) {
        return "mongodb://" + seed.address() + "/?replicaSet=" + ScriptedMongod.SET_NAME;
    }

    @Test
    void proxyPrintsEachMemberAndTheConnectionStringThenServes() throws Exception {
        try (ScriptedMongod a = ScriptedMongod.start();
             ScriptedMongod b = ScriptedMongod.builder().secondary().primary(a.address()).start()) {
            a.setAdvertisedHosts(List.of(a.address(), b.address()));
            b.setAdvertisedHosts(List.of(a.address(), b.address()));
            try (CliChild child = new CliChild(temp, null, Map.of(), "proxy", "--upstream", rsUri(a), "--host", "127.0.0.1", "--port", "0",
                    "--admin-port", "0")) {
                String connectionLine = child.awaitLine("connection string: ");
                String memberA = find(child.seen, "  upstream " + a.address() + " -> advertised 127.0.0.1:");
                String memberB = find(child.seen, "  upstream " + b.address() + " -> advertised 127.0.0.1:");
                String advertisedA = memberA.substring(memberA.lastIndexOf(' ') + 1);
                String advertisedB = memberB.substring(memberB.lastIndexOf(' ') + 1);
                assertEquals("connection string: mongodb://" + advertisedA + "," + advertisedB + "/?replicaSet=" + ScriptedMongod.SET_NAME,
                        connectionLine);
                assertTrue(child.seen.stream().anyMatch(l -> l.startsWith("admin: http://127.0.0.1:")), child.seen::toString);
                assertTrue(child.seen.get(0).contains("proxying replica set " + ScriptedMongod.SET_NAME), child.seen::toString);

                // What it printed is what it serves.
                try (MongoClient client = MongoClients.create(connectionLine.substring("connection string: ".length())
                        + "&serverSelectionTimeoutMS=10000")) {
                    client.getDatabase("admin").runCommand(new Document("ping", 1));
                    assertEquals(2, client.getClusterDescription().getServerDescriptions().size());
                }
                assertTrue(child.stderrText().contains("listening on 127.0.0.1:"), child::describe);
            }
        }
    }

    @Test
    void proxyOfAShardedClusterPrintsEachRouterAndServesThemAll() throws Exception {
        try (ScriptedMongod a = ScriptedMongod.builder().mongos().start();
             ScriptedMongod b = ScriptedMongod.builder().mongos().start();
             CliChild child = new CliChild(temp, null, Map.of(), "proxy", "--upstream", "mongodb://" + a.address() + "," + b.address() + "/",
                     "--host", "127.0.0.1", "--port", "0", "--admin-port", "-1")) {
            String connectionLine = child.awaitLine("connection string: ");
            assertTrue(child.seen.get(0).endsWith("proxying 2 mongos routers"), child.seen::toString);
            String routerA = find(child.seen, "  upstream " + a.address() + " -> advertised 127.0.0.1:");
            String routerB = find(child.seen, "  upstream " + b.address() + " -> advertised 127.0.0.1:");
            assertEquals("connection string: mongodb://" + routerA.substring(routerA.lastIndexOf(' ') + 1) + ","
                    + routerB.substring(routerB.lastIndexOf(' ') + 1) + "/", connectionLine);
            try (MongoClient client = MongoClients.create(connectionLine.substring("connection string: ".length())
                    + "?serverSelectionTimeoutMS=10000")) {
                client.getDatabase("admin").runCommand(new Document("ping", 1));
                assertEquals(ClusterType.SHARDED, client.getClusterDescription().getType());
                assertEquals(2, client.getClusterDescription().getServerDescriptions().size());
            }
        }
    }

    private static String find(List<String> lines, String prefix) {
        return lines.stream().filter(l -> l.startsWith(prefix)).findFirst()
                .orElseThrow(() -> new AssertionError("no line starting with '" + prefix + "' in " + lines));
    }

    /**
     * The two ports are held until just before the child starts; it binds them by number a second or so later (its JVM
     * starts, it asks the upstream), so one given to another process meanwhile runs the whole case again.
     */
    @Test
    void environmentVariablesAreTheDefaults() throws Exception {
        try (ScriptedMongod a = ScriptedMongod.start();
             ScriptedMongod b = ScriptedMongod.builder().secondary().primary(a.address()).start()) {
            a.setAdvertisedHosts(List.of(a.address(), b.address()));
            b.setAdvertisedHosts(List.of(a.address(), b.address()));
            BindRetry.upTo(3, () -> theEnvironmentConfiguresTheProxy(a, b));
        }
    }

    private void theEnvironmentConfiguresTheProxy(ScriptedMongod a, ScriptedMongod b) throws Exception {
        int port;
        int pinned;
        try (HeldPort first = HeldPort.any(); HeldPort second = HeldPort.any()) {
            port = first.port();
            pinned = second.port();
        }
        Map<String, String> env = Map.of(
                "BLACKPIPE_UPSTREAM", rsUri(a),
                "BLACKPIPE_HOST", "127.0.0.1",
                "BLACKPIPE_PORT", Integer.toString(port),
                "BLACKPIPE_ADVERTISE_HOST", "localhost",
                "BLACKPIPE_ADMIN_PORT", "-1",
                "BLACKPIPE_MEMBER_PORTS", b.address() + "=" + pinned,
                "BLACKPIPE_CONNECT_TIMEOUT_MS", "3000");
        try (CliChild child = new CliChild(temp, null, env, "proxy")) {
            String connectionLine = child.awaitLineListeningOn("connection string: ", port, pinned);
            assertTrue(child.seen.contains("  upstream " + a.address() + " -> advertised localhost:" + port), child.seen::toString);
            assertTrue(child.seen.contains("  upstream " + b.address() + " -> advertised localhost:" + pinned), child.seen::toString);
            assertEquals("connection string: mongodb://localhost:" + port + ",localhost:" + pinned + "/?replicaSet="
                    + ScriptedMongod.SET_NAME, connectionLine);
            assertTrue(child.seen.stream().noneMatch(l -> l.startsWith("admin:")), "BLACKPIPE_ADMIN_PORT=-1 disables admin: " + child.seen);
            try (BlockingCommandClient client = new BlockingCommandClient("127.0.0.1", port, 30_000)) {
                BsonDocument hello = client.run("admin", new BsonDocument("hello", new BsonInt32(1)));
                assertEquals("localhost:" + port, hello.getString("me").getValue(), "the advertised host is written into hello");
            }
        }
    }

    /** Ports held and let go as in {@link #environmentVariablesAreTheDefaults}: the child binds --port's by number. */
    @Test
    void anOptionOnTheCommandLineWinsOverItsEnvironmentVariable() throws Exception {
        try (ScriptedMongod a = ScriptedMongod.start()) {
            BindRetry.upTo(3, () -> theCommandLineWins(a));
        }
    }

    private void theCommandLineWins(ScriptedMongod a) throws Exception {
        int envPort;
        int cliPort;
        try (HeldPort first = HeldPort.any(); HeldPort second = HeldPort.any()) {
            envPort = first.port();
            cliPort = second.port();
        }
        Map<String, String> env = Map.of("BLACKPIPE_UPSTREAM", "mongodb://127.0.0.1:" + closedPort() + "/",
                "BLACKPIPE_PORT", Integer.toString(envPort), "BLACKPIPE_ADVERTISE_HOST", "envhost", "BLACKPIPE_ADMIN_PORT", "-1");
        try (CliChild child = new CliChild(temp, null, env, "proxy", "--upstream", rsUri(a), "--host", "127.0.0.1", "--port",
                Integer.toString(cliPort), "--advertise-host", "127.0.0.1")) {
            assertEquals("connection string: mongodb://127.0.0.1:" + cliPort + "/?replicaSet=" + ScriptedMongod.SET_NAME,
                    child.awaitLineListeningOn("connection string: ", cliPort));
            assertTrue(child.seen.contains("  upstream " + a.address() + " -> advertised 127.0.0.1:" + cliPort), child.seen::toString);
        }
    }

    @Test
    void missingUpstreamExitsTwo() throws Exception {
        try (CliChild child = new CliChild(temp, null, Map.of(), "proxy", "--port", "0", "--admin-port", "-1")) {
            assertEquals(2, child.awaitExit(), child::describe);
            String err = child.stderrText();
            assertTrue(err.contains("Missing required option: '--upstream=URI'"), err);
            assertTrue(err.contains("Usage: blackpipe proxy"), err);
        }
    }

    @Test
    void anEmptyFileVariableCountsAsUnset() throws Exception {
        try (ScriptedMongod a = ScriptedMongod.start()) {
            Map<String, String> env = Map.of("BLACKPIPE_SCENARIO", "", "BLACKPIPE_HISTORY", "", "BLACKPIPE_TLS_CERT", "",
                    "BLACKPIPE_TLS_KEY", "", "BLACKPIPE_TLS_CLIENT_CA", "");
            try (CliChild child = new CliChild(temp, temp, env, "proxy", "--upstream", rsUri(a), "--host", "127.0.0.1", "--port", "0",
                    "--admin-port", "-1")) {
                String connectionLine = child.awaitLine("connection string: ");
                assertTrue(connectionLine.startsWith("connection string: mongodb://127.0.0.1:"), child::describe);
                assertFalse(child.stderrText().contains("scenario"), child::describe);
            }
        }
    }

    /** Configured by the environment alone (a compose file), the error names the variable too: nobody typed --port. */
    @ParameterizedTest(name = "{0}={1}")
    @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
            "BLACKPIPE_CONNECT_TIMEOUT_MS | 0 | --connect-timeout-ms must be positive, got 0 (set by BLACKPIPE_CONNECT_TIMEOUT_MS)",
            "BLACKPIPE_PORT | next | Invalid value for option '--port': 'next' is not an int (set by BLACKPIPE_PORT)",
            "BLACKPIPE_MEMBER_PORTS | db1:27017 | --member-port 'db1:27017' must be HOST:PORT=N (set by BLACKPIPE_MEMBER_PORTS)"})
    void aBadEnvironmentValueExitsTwoNamingTheOptionAndTheVariable(String variable, String value, String expected) throws Exception {
        try (CliChild child = new CliChild(temp, null, Map.of("BLACKPIPE_UPSTREAM", "mongodb://127.0.0.1:" + closedPort() + "/",
                variable, value), "proxy", "--admin-port", "-1")) {
            assertEquals(2, child.awaitExit(), child::describe);
            String firstLine = child.stderrText().lines().findFirst().orElse("");
            assertTrue(firstLine.contains(expected), child::describe);
            assertTrue(child.stderrText().contains("Usage: blackpipe proxy"), child::describe);
        }
    }

    @Test
    void aBadValueTypedOverItsVariableNamesOnlyTheOption() {
        CliRun run = CliRun.withEnvironment(name -> name.equals("BLACKPIPE_CONNECT_TIMEOUT_MS") ? "5" : null,
                "proxy", "--upstream", "mongodb://127.0.0.1:1/", "--connect-timeout-ms", "-1");
        assertEquals(2, run.exitCode(), run::toString);
        assertEquals("--connect-timeout-ms must be positive, got -1", run.err().lines().findFirst().orElse(""), run::toString);
    }
}
