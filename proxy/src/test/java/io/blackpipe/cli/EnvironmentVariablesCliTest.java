package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoSocketException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.connection.ServerDescription;
import com.mongodb.connection.ServerMonitoringMode;
import io.blackpipe.BlackPipe;
import io.blackpipe.observe.HistoryEntry;
import io.blackpipe.pipe.TestCertificates;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.CommandLog;
import io.blackpipe.testing.RawUpstream;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.topology.MemberAddress;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The BLACKPIPE_* variables of the README's option table that no test set to a value of effect
 * (BLACKPIPE_ADMIN_HOST, _SEED, _HISTORY, _SIMULATE_MEMBERS, _MAX_CONNECTIONS, _TLS_CERT, _TLS_KEY,
 * _TLS_CLIENT_CA, _FORWARD_FAILPOINTS, and, with their flags, _CONNECT_TIMEOUT_MS and _ADVERTISE_HOST), each given to
 * `blackpipe proxy` as a compose file or the Docker image gives it: a child process configured by its environment
 * alone, its effect met by the real driver. A bad value
 * in a variable is a usage error (exit 2, with usage) naming the option and the variable, never the value's secret.
 */
class EnvironmentVariablesCliTest {
    private static final Pattern ADMIN = Pattern.compile("^admin: (http://[^/ ]+)/metrics");
    private static final Pattern ADVERTISED = Pattern.compile("^  upstream .* -> advertised (\\S+)$");
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @TempDir
    Path temp;

    private static String connectionString(CliChild child) throws Exception {
        return child.awaitLine("connection string: ").substring("connection string: ".length()).trim();
    }

    private static String admin(CliChild child) {
        return child.seen.stream().map(ADMIN::matcher).filter(Matcher::find).map(m -> m.group(1)).findFirst()
                .orElseThrow(() -> new AssertionError("no admin line in " + child.seen));
    }

    private static int health(String admin) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(URI.create(admin + "/health")).timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    private static int closedPort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    /**
     * --help says each option's own default, whatever the environment: with BLACKPIPE_PORT set it said "default 28000",
     * which reads as blackpipe's. And every option whose default reads a variable says that default, as written.
     */
    @Test
    void helpShowsTheBuiltInDefaultsNotTheEnvironments(@TempDir Path temp) throws Exception {
        try (CliChild help = new CliChild(temp, null, Map.of("BLACKPIPE_PORT", "28000", "BLACKPIPE_ADMIN_HOST", "10.9.9.9"),
                "proxy", "--help")) {
            assertEquals(0, help.awaitExit(), help::describe);
            String out = help.stdoutText().replaceAll("\\s+", " ");
            assertTrue(out.contains("(env BLACKPIPE_PORT; default 27017)") && out.contains("(env BLACKPIPE_ADMIN_HOST; default 127.0.0.1)"), out);
            assertFalse(out.contains("28000") || out.contains("10.9.9.9"), out);
        }
        Pattern fromEnvironment = Pattern.compile("\\$\\{env:(\\w+):-(.*)}");
        List<String> wrong = new ArrayList<>();
        List<picocli.CommandLine> commands = new ArrayList<>(List.of(Main.commandLine()));
        for (int i = 0; i < commands.size(); i++) {
            commands.addAll(commands.get(i).getSubcommands().values());
            for (picocli.CommandLine.Model.OptionSpec option : commands.get(i).getCommandSpec().options()) {
                if (!(option.userObject() instanceof java.lang.reflect.Field field) || !field.isAnnotationPresent(picocli.CommandLine.Option.class)) {
                    continue;
                }
                Matcher annotated = fromEnvironment.matcher(field.getAnnotation(picocli.CommandLine.Option.class).defaultValue());
                String description = String.join(" ", field.getAnnotation(picocli.CommandLine.Option.class).description());
                if (annotated.matches() && !description.contains("(env " + annotated.group(1) + "; default " + annotated.group(2))
                        && !description.contains("DEFAULT-VALUE") && description.contains("default")) {
                    wrong.add(commands.get(i).getCommandName() + " " + option.longestName() + ": " + description);
                }
                assertFalse(annotated.matches() && description.contains("${DEFAULT-VALUE}"), option.longestName()
                        + ": ${DEFAULT-VALUE} shows the variable's value as the default");
            }
        }
        assertEquals(List.of(), wrong, "an option whose default reads a variable says its own default");
    }

    @Test
    void theSeedTheHistoryFileAndTheAdminHostComeFromTheEnvironment() throws Exception {
        Path history = temp.resolve("env-history.jsonl");
        Map<String, String> env = Map.of("BLACKPIPE_UPSTREAM", UpstreamLane.uri(), "BLACKPIPE_HOST", "127.0.0.1", "BLACKPIPE_PORT", "0",
                "BLACKPIPE_ADMIN_HOST", "127.0.0.2", "BLACKPIPE_ADMIN_PORT", "0", "BLACKPIPE_SEED", "7",
                "BLACKPIPE_HISTORY", history.toString());
        List<Boolean> failed;
        try (CliChild child = new CliChild(temp, null, env, "proxy")) {
            String uri = connectionString(child);
            assertTrue(child.seen.contains("fault seed: 7 (replay with --seed 7)"), child.seen::toString);

            String admin = admin(child);
            assertTrue(admin.startsWith("http://127.0.0.2:"), () -> "the admin server binds BLACKPIPE_ADMIN_HOST: " + child.seen);
            assertEquals(200, health(admin));
            String elsewhere = admin.replace("127.0.0.2", "127.0.0.1");
            assertThrows(ConnectException.class, () -> health(elsewhere), "nothing listens on the default admin host");

            CliRun add = CliRun.of("fault", "add", "--command", "insert", "--error-code", "2", "--probability", "0.5", "--admin", admin);
            assertEquals(0, add.exitCode(), add::toString);
            failed = SeedReplayCliTest.runInserts(uri);
        } // SIGTERM: the history file is completed as the proxy stops

        try (BlackPipe blackPipe = BlackPipe.builder().upstream(UpstreamLane.uri()).seed(7).start()) {
            blackPipe.fail("insert").probability(0.5).errorCode(2);
            assertEquals(failed, SeedReplayCliTest.runInserts(blackPipe.connectionString()),
                    "BLACKPIPE_SEED=7 decides as seed 7 does");
        }

        assertTrue(Files.exists(history), "the proxy wrote BLACKPIPE_HISTORY " + history);
        List<HistoryEntry> inserts = Files.readAllLines(history).stream().map(HistoryEntry::fromJson)
                .filter(e -> e.command().equals("insert")).toList();
        assertEquals(failed.size(), inserts.size(), "a line per insert the driver sent");
        for (int i = 0; i < failed.size(); i++) {
            HistoryEntry entry = inserts.get(i);
            assertEquals(failed.get(i) ? "fail" : "ok", entry.type(), entry::toJson);
            assertEquals(failed.get(i) ? "errorReply" : null, entry.fault(), entry::toJson);
        }
    }

    @Test
    void theSimulatedMembersAndTheConnectionLimitComeFromTheEnvironment() throws Exception {
        String db = UpstreamLane.freshDatabaseName("envMembers");
        int limit = 4; // the driver's three (polling) monitors, and its one pooled connection
        Map<String, String> env = Map.of("BLACKPIPE_UPSTREAM", UpstreamLane.singleNodeUri(), "BLACKPIPE_HOST", "127.0.0.1",
                "BLACKPIPE_PORT", "0", "BLACKPIPE_ADMIN_PORT", "0", "BLACKPIPE_SIMULATE_MEMBERS", "3",
                "BLACKPIPE_MAX_CONNECTIONS", String.valueOf(limit));
        try (CliChild child = new CliChild(temp, null, env, "proxy")) {
            String uri = connectionString(child);
            String admin = admin(child);
            List<String> advertised = child.seen.stream().map(ADVERTISED::matcher).filter(Matcher::matches).map(m -> m.group(1)).toList();
            assertEquals(3, advertised.size(), () -> "BLACKPIPE_SIMULATE_MEMBERS=3: three members: " + child.seen);
            assertEquals(Set.copyOf(advertised), Set.copyOf(new ConnectionString(uri).getHosts()), "the connection string names them");

            try (MongoClient client = MongoClients.create(MongoClientSettings.builder()
                    .applyConnectionString(new ConnectionString(uri + "&retryWrites=false&socketTimeoutMS=30000"))
                    .applyToServerSettings(b -> b.serverMonitoringMode(ServerMonitoringMode.POLL))
                    .applyToConnectionPoolSettings(b -> b.maxSize(1))
                    .applyToClusterSettings(b -> b.serverSelectionTimeout(30, TimeUnit.SECONDS)).build())) {
                MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
                c.insertOne(new Document("_id", 1));
                Await.until(Duration.ofSeconds(60), () -> "a primary and two secondaries: " + client.getClusterDescription(), () ->
                        client.getClusterDescription().getServerDescriptions().stream().filter(ServerDescription::isSecondary).count() == 2
                                && client.getClusterDescription().getServerDescriptions().stream().anyMatch(ServerDescription::isPrimary));
                Await.until(Duration.ofSeconds(60), "the driver's connections", () -> MaxConnectionsCliTest.connectionsOpen(HTTP, admin) == limit);
                try (Socket oneMore = MaxConnectionsCliTest.connect(MemberAddress.parse(advertised.get(0)))) {
                    assertNull(MaxConnectionsCliTest.hello(oneMore, 1), "BLACKPIPE_MAX_CONNECTIONS=4: a fifth connection is closed on accept");
                }
                c.insertOne(new Document("_id", 2));
            }
        }
        try (MongoClient direct = UpstreamLane.directClient()) {
            assertEquals(List.of(new Document("_id", 1), new Document("_id", 2)),
                    direct.getDatabase(db).getCollection("c").find().sort(new Document("_id", 1)).into(new ArrayList<>()));
        }
    }

    @Test
    void theListenersTlsAndItsClientCaComeFromTheEnvironment() throws Exception {
        TestCertificates certs = TestCertificates.generate(temp);
        String db = UpstreamLane.freshDatabaseName("envTls");
        Map<String, String> env = Map.of("BLACKPIPE_UPSTREAM", UpstreamLane.uri(), "BLACKPIPE_HOST", "127.0.0.1", "BLACKPIPE_PORT", "0",
                "BLACKPIPE_ADMIN_PORT", "-1", "BLACKPIPE_TLS_CERT", certs.serverCert.toString(),
                "BLACKPIPE_TLS_KEY", certs.serverKey.toString(), "BLACKPIPE_TLS_CLIENT_CA", certs.ca.toString());
        try (CliChild child = new CliChild(temp, null, env, "proxy")) {
            ListenerTlsCliTest.assertOnlyACertifiedDriverGetsThrough(connectionString(child), certs, db);
        }
    }

    private static final Document FAIL_POINT = Document.parse("{configureFailPoint: 'failCommand', mode: {times: 1},"
            + " data: {failCommands: ['count'], errorCode: 2}}");

    /** What {@code client}'s configureFailPoint gets: "ok", or the error's code name; a server that took it is told to forget it. */
    private static String configureFailPoint(MongoClient client) {
        try {
            client.getDatabase("admin").runCommand(FAIL_POINT);
            return "ok";
        } catch (MongoCommandException e) {
            return e.getErrorCodeName();
        } finally {
            try (MongoClient direct = UpstreamLane.directClient()) {
                direct.getDatabase("admin").runCommand(new Document("configureFailPoint", "failCommand").append("mode", "off"));
            } catch (MongoCommandException refused) {
                // a lane without test commands (jongodb) holds no failpoint to forget
            }
        }
    }

    /** What configureFailPoint gets through a proxy started with {@code env} besides the upstream and its ports, and {@code flags}. */
    private String configureFailPointThrough(Map<String, String> env, String... flags) throws Exception {
        Map<String, String> all = new HashMap<>(env);
        all.putAll(Map.of("BLACKPIPE_UPSTREAM", UpstreamLane.uri(), "BLACKPIPE_HOST", "127.0.0.1", "BLACKPIPE_PORT", "0",
                "BLACKPIPE_ADMIN_PORT", "-1"));
        List<String> args = new ArrayList<>(List.of("proxy"));
        args.addAll(List.of(flags));
        try (CliChild child = new CliChild(temp, null, all, args.toArray(String[]::new));
             MongoClient client = MongoClients.create(connectionString(child))) {
            return configureFailPoint(client);
        }
    }

    @Test
    void forwardingFailPointsComesFromTheEnvironment() throws Exception {
        String directly;
        try (MongoClient direct = UpstreamLane.directClient()) {
            directly = configureFailPoint(direct); // the jongodb lane refuses it, a mongod with test commands takes it
        }
        assertEquals(directly, configureFailPointThrough(Map.of("BLACKPIPE_FORWARD_FAILPOINTS", "true")), "the server's own answer");
        assertEquals("ok", configureFailPointThrough(Map.of("BLACKPIPE_FORWARD_FAILPOINTS", "false")), "blackpipe takes it as a rule");
        // typed, the flag means forward whatever the variable says: picocli set a flag to its default's opposite
        assertEquals(directly, configureFailPointThrough(Map.of("BLACKPIPE_FORWARD_FAILPOINTS", "true"), "--forward-failpoints"),
                "the server's own answer");
    }

    /** A typed flag takes no value: a bad one can only be its variable's, which the error names. */
    @Test
    void aBadVariableBehindATypedFlagIsNamed() throws Exception {
        Map<String, String> env = Map.of("BLACKPIPE_UPSTREAM", "mongodb://127.0.0.1:" + closedPort() + "/", "BLACKPIPE_FORWARD_FAILPOINTS", "maybe");
        try (CliChild child = new CliChild(temp, null, env, "proxy", "--forward-failpoints")) {
            assertEquals(2, child.awaitExit(), child::describe);
            assertEquals("Invalid value for option '--forward-failpoints': 'maybe' is not a boolean (set by BLACKPIPE_FORWARD_FAILPOINTS)",
                    child.stderrText().lines().findFirst().orElse(""), child::describe);
        }
    }

    /** Configured by the environment alone, a bad value names the variable too: nobody typed the option it names. */
    @ParameterizedTest(name = "{0}={1}")
    @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
            "BLACKPIPE_ADMIN_HOST | 999.1.1.1 | --admin-host '999.1.1.1' is neither an IP address nor a host name that resolves"
                    + " (set by BLACKPIPE_ADMIN_HOST)",
            "BLACKPIPE_HOST | 999.1.1.1 | --host '999.1.1.1' is neither an IP address nor a host name that resolves (set by BLACKPIPE_HOST)",
            "BLACKPIPE_ADMIN_PORT | 70000 | --admin-port 70000 is out of range (-1 disables, 0 picks a free port) (set by BLACKPIPE_ADMIN_PORT)",
            "BLACKPIPE_SIMULATE_MEMBERS | 9 | --simulate-members 9 must be from 2 to 7 (0 turns it off) (set by BLACKPIPE_SIMULATE_MEMBERS)",
            "BLACKPIPE_MAX_CONNECTIONS | -1 | --max-connections -1 must be 0 (unlimited) or more (set by BLACKPIPE_MAX_CONNECTIONS)",
            "BLACKPIPE_MAX_CONNECTIONS | many | Invalid value for option '--max-connections': 'many' is not an int (set by BLACKPIPE_MAX_CONNECTIONS)",
            "BLACKPIPE_SEED | abc | Invalid value for option '--seed': 'abc' is not a long (set by BLACKPIPE_SEED)",
            "BLACKPIPE_FORWARD_FAILPOINTS | maybe | Invalid value for option '--forward-failpoints': 'maybe' is not a boolean"
                    + " (set by BLACKPIPE_FORWARD_FAILPOINTS)",
            "BLACKPIPE_TLS_CLIENT_CA | /nowhere/ca.pem | --tls-client-ca needs --tls-cert and --tls-key (TLS on the listeners)"
                    + " (set by BLACKPIPE_TLS_CLIENT_CA)",
            "BLACKPIPE_TLS_CERT | /nowhere/cert.pem | --tls-cert and --tls-key go together; got only --tls-cert (set by BLACKPIPE_TLS_CERT)",
            "BLACKPIPE_TLS_KEY | /nowhere/key.pem | --tls-key and --tls-cert go together; got only --tls-key (set by BLACKPIPE_TLS_KEY)",
            "BLACKPIPE_UPSTREAM | notauri | the upstream URI must start with mongodb:// or mongodb+srv://, got 'notauri'"
                    + " (set by BLACKPIPE_UPSTREAM)",
            "BLACKPIPE_UPSTREAM | mongodb://alice:s3cret@db1:27017/?tls=maybe | the upstream URI option tls=maybe must be true or false"
                    + " (set by BLACKPIPE_UPSTREAM)"})
    void aBadValueInAVariableExitsTwoNamingTheOptionAndTheVariable(String variable, String value, String expected) throws Exception {
        Map<String, String> env = new HashMap<>(Map.of("BLACKPIPE_UPSTREAM", "mongodb://127.0.0.1:" + closedPort() + "/"));
        env.put(variable, value);
        try (CliChild child = new CliChild(temp, null, env, "proxy")) {
            assertEquals(2, child.awaitExit(), child::describe); // an unreachable upstream would be 1: the bad value is caught first
            String err = child.stderrText();
            assertEquals(expected, err.lines().findFirst().orElse(""), child::describe);
            assertTrue(err.contains("Usage: blackpipe proxy"), child::describe);
            assertFalse(err.contains("s3cret"), child::describe);
        }
    }

    @Test
    void aBadAdminUrlInTheControlCommandsVariableExitsTwoNamingIt() throws Exception {
        try (CliChild child = new CliChild(temp, null, Map.of("BLACKPIPE_ADMIN", "ftp://127.0.0.1:9090"), "stats")) {
            assertEquals(2, child.awaitExit(), child::describe);
            String err = child.stderrText();
            assertEquals("--admin 'ftp://127.0.0.1:9090' is not a URL such as http://127.0.0.1:9090 (set by BLACKPIPE_ADMIN)",
                    err.lines().findFirst().orElse(""), child::describe);
            assertTrue(err.contains("Usage: blackpipe stats"), child::describe);
        }
    }

    /**
     * A failed start (exit 1) about an option its variable set names the variable too: the TLS files are read, and
     * the history file opened, when the proxy starts, not checked as usage; a flag typed on the command line is named alone.
     */
    @ParameterizedTest(name = "{1}")
    @CsvSource(delimiter = '|', value = {
            "--tls-cert /nowhere/cert.pem --tls-key /nowhere/key.pem | BLACKPIPE_TLS_CERT | --tls-cert /nowhere/cert.pem is not a readable file",
            "--history /nowhere/history.jsonl | BLACKPIPE_HISTORY"
                    + " | cannot open the history file /nowhere/history.jsonl: its directory /nowhere does not exist"})
    void aFileFromAVariableThatTheStartCannotUseFailsItNamingTheVariable(String flags, String variable, String failure) throws Exception {
        Map<String, String> upstream = Map.of("BLACKPIPE_UPSTREAM", UpstreamLane.uri(), "BLACKPIPE_PORT", "0", "BLACKPIPE_ADMIN_PORT", "-1");
        try (CliChild child = proxy(false, upstream, flags.split(" "))) {
            assertEquals(1, child.awaitExit(), child::describe);
            assertEquals("blackpipe: " + failure + " (set by " + variable + ")", child.stderrText().lines()
                    .filter(line -> line.startsWith("blackpipe: ")).findFirst().orElse(""), child::describe);
        }
        try (CliChild child = proxy(true, upstream, flags.split(" "))) {
            assertEquals(1, child.awaitExit(), child::describe);
            String err = child.stderrText();
            assertTrue(err.contains("blackpipe: " + failure), child::describe);
            assertFalse(err.contains("set by"), child::describe);
        }
    }

    /**
     * `blackpipe proxy` configured by {@code env} and by {@code flagsAndValues} (--tls-cert FILE ...): typed on the
     * command line, or each given as its variable instead (BLACKPIPE_TLS_CERT=FILE), as a compose file gives it.
     */
    private CliChild proxy(boolean typed, Map<String, String> env, String... flagsAndValues) throws IOException {
        Map<String, String> all = new HashMap<>(env);
        List<String> args = new ArrayList<>(List.of("proxy"));
        for (int i = 0; i < flagsAndValues.length; i += 2) {
            if (typed) {
                args.addAll(List.of(flagsAndValues[i], flagsAndValues[i + 1]));
            } else {
                all.put("BLACKPIPE_" + flagsAndValues[i].substring(2).replace('-', '_').toUpperCase(Locale.ROOT), flagsAndValues[i + 1]);
            }
        }
        return new CliChild(temp, null, all, args.toArray(String[]::new));
    }

    private static String stderr(CliChild child) {
        try {
            return child.stderrText();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * BLACKPIPE_CONNECT_TIMEOUT_MS (or --connect-timeout-ms) is how long a client of the proxy waits on a member whose
     * connects hang (its packets dropped, here a full backlog): the proxy gives up dialling it after 300 ms, not the
     * default 5 s, and closes the client's connection as a down member's would be, logging the member it could not reach.
     */
    @ParameterizedTest(name = "typed: {0}")
    @ValueSource(booleans = {false, true})
    void theConnectTimeoutToAMemberComesFromTheEnvironmentOrItsFlag(boolean typed) throws Exception {
        try (RawUpstream member = new RawUpstream((socket, index) -> RawUpstream.answerHellos(socket));
             CliChild child = proxy(typed, Map.of("BLACKPIPE_UPSTREAM", "mongodb://" + member.address() + "/", "BLACKPIPE_HOST", "127.0.0.1",
                     "BLACKPIPE_PORT", "0", "BLACKPIPE_ADMIN_PORT", "-1"), "--connect-timeout-ms", "300");
             MongoClient client = MongoClients.create(MongoClientSettings.builder().applyConnectionString(new ConnectionString(connectionString(child)))
                     .applyToServerSettings(b -> b.serverMonitoringMode(ServerMonitoringMode.POLL)).retryReads(false).build())) {
            Await.until(Duration.ofSeconds(30), () -> "the driver's monitor is through to the member: " + client.getClusterDescription(),
                    () -> client.getClusterDescription().getServerDescriptions().stream().anyMatch(ServerDescription::isOk));
            member.stopAccepting(); // the monitor's connection stays; the pool's first is dialled now

            long start = System.nanoTime();
            assertThrows(MongoSocketException.class, () -> client.getDatabase("admin").runCommand(new Document("ping", 1)));
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(tookMillis >= 300 && tookMillis < 3_000, "the connection was closed after " + tookMillis + " ms: 300 ms of dialling,"
                    + " not the default 5000");
            String unreachable = "upstream " + member.address() + " unreachable for client";
            Await.until(Duration.ofSeconds(10), () -> "the proxy logs the member it could not reach: " + child.describe(),
                    () -> stderr(child).lines().anyMatch(line -> line.contains(unreachable) && line.contains("300 ms")));
        }
    }

    /**
     * BLACKPIPE_ADVERTISE_HOST (or --advertise-host) names the members in the hello replies the real driver gets
     * through the proxy (CliTest reads `me` off a raw hello): a driver seeded with the listener's 127.0.0.1 address
     * trades it for the advertised names the set's hello lists (`hosts`, `me`), and its writes go to them.
     */
    @ParameterizedTest(name = "typed: {0}")
    @ValueSource(booleans = {false, true})
    void theAdvertisedHostComesFromTheEnvironmentOrItsFlag(boolean typed) throws Exception {
        String db = UpstreamLane.freshDatabaseName("envAdvertise");
        CommandLog commands = new CommandLog();
        try (CliChild child = proxy(typed, Map.of("BLACKPIPE_UPSTREAM", UpstreamLane.uri(), "BLACKPIPE_HOST", "127.0.0.1", "BLACKPIPE_PORT", "0",
                "BLACKPIPE_ADMIN_PORT", "-1"), "--advertise-host", "localhost")) {
            ConnectionString advertised = new ConnectionString(connectionString(child));
            Set<String> hosts = Set.copyOf(advertised.getHosts());
            assertTrue(hosts.stream().allMatch(host -> host.startsWith("localhost:")), advertised::toString);
            String seed = "mongodb://" + advertised.getHosts().get(0).replace("localhost:", "127.0.0.1:") + "/?replicaSet="
                    + advertised.getRequiredReplicaSetName();
            try (MongoClient client = MongoClients.create(commands.driverOn(seed)
                    .applyToClusterSettings(b -> b.serverSelectionTimeout(30, TimeUnit.SECONDS)).build())) {
                client.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1));
                List<ServerDescription> servers = client.getClusterDescription().getServerDescriptions();
                assertEquals(hosts, servers.stream().map(server -> server.getAddress().toString()).collect(Collectors.toSet()),
                        () -> "the driver's members are the advertised ones, the 127.0.0.1 seed dropped: " + servers);
                for (ServerDescription server : servers.stream().filter(ServerDescription::isOk).toList()) {
                    assertEquals(hosts, Set.copyOf(server.getHosts()), () -> "the hello's hosts: " + server);
                    assertEquals(server.getAddress().toString(), server.getCanonicalAddress(), () -> "the hello's me: " + server);
                }
                List<String> insertedAt = commands.succeeded.stream().filter(insert -> insert.getCommandName().equals("insert"))
                        .map(insert -> insert.getConnectionDescription().getServerAddress().toString()).toList();
                assertEquals(1, insertedAt.size(), insertedAt::toString);
                assertTrue(hosts.contains(insertedAt.get(0)), () -> "the insert went through an advertised name: " + insertedAt);
            }
        }
        try (MongoClient direct = UpstreamLane.directClient()) {
            assertEquals(1, direct.getDatabase(db).getCollection("c").countDocuments());
        }
    }
}
