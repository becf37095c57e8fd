package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.UpstreamLane;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * `proxy --scenario FILE`: a bad file stops the proxy before it serves, exit 1 with
 * "file:line: field: message" on stderr; a shipped script starts with the proxy and its rules are
 * live (listed by the admin API).
 */
class ScenarioCliTest {
    private static final Pattern ADMIN = Pattern.compile("^admin: http://([^/ ]+)/metrics");

    @TempDir
    Path temp;

    private static CliRun run(String... args) {
        return CliRun.of(args);
    }

    private static String uri(ScriptedMongod upstream) {
        return "mongodb://" + upstream.address() + "/?replicaSet=" + ScriptedMongod.SET_NAME;
    }

    /** The repository root: the directory above the working directory (proxy/ under Maven) that holds fault-scripts/. */
    private static Path repositoryRoot() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null) {
            if (Files.isRegularFile(dir.resolve("fault-scripts").resolve("transient-blip.yaml"))) {
                return dir;
            }
            dir = dir.getParent();
        }
        throw new AssertionError("no fault-scripts/ above " + Path.of("").toAbsolutePath());
    }

    @Test
    void aBadScenarioFileExitsOneNamingFileLineAndField() throws Exception {
        Path bad = temp.resolve("bad-scenario.yaml");
        Files.writeString(bad, """
                name: bad
                rules:
                  - id: broken
                    configureFailPoint: failCommand
                    mode: alwaysOn
                    data:
                      failCommands: [insert]
                      errorCode: "x"
                """);
        try (ScriptedMongod upstream = ScriptedMongod.start()) {
            CliRun run = run("proxy", "--upstream", uri(upstream), "--host", "127.0.0.1", "--port", "0", "--admin-port", "0",
                    "--scenario", bad.toString());
            assertEquals(1, run.exitCode(), run::toString);
            assertTrue(run.err().contains(bad + ":8: rules[0].data.errorCode: must be an integer"), run::toString);
            assertTrue(!run.err().contains("(set by"), "a typed --scenario is no variable's: " + run);
            assertTrue(!run.out().contains("connection string:"), "the proxy never said it serves: " + run);
        }
    }

    @Test
    void aScenarioNamingAMemberTheDeploymentLacksExitsOne() throws Exception {
        Path bad = temp.resolve("member.yaml");
        Files.writeString(bad, "name: m\ntimeline:\n  - at: 1s\n    outage: {member: \"db9:27017\", duration: 5s}\n");
        try (ScriptedMongod upstream = ScriptedMongod.start()) {
            CliRun run = run("proxy", "--upstream", uri(upstream), "--host", "127.0.0.1", "--port", "0", "--admin-port", "-1",
                    "--scenario", bad.toString());
            assertEquals(1, run.exitCode(), run::toString);
            assertTrue(run.err().contains(bad + ":4: timeline[0].outage.member: no member 'db9:27017'"), run::toString);
        }
    }

    @Test
    void validateRefusesAMemberNameTheProxyWouldRefuseAndLeavesHostPortsToIt() throws Exception {
        Path typo = temp.resolve("typo.yaml");
        Files.writeString(typo, "name: t\ntimeline:\n  - at: 1s\n    outage: {member: primry, duration: 5s}\n");
        String refused = typo + ":4: timeline[0].outage.member: no member 'primry': did you mean 'primary'? (use primary, secondary, all,"
                + " or a member's host:port)";
        CliRun offline = run("scenario", "validate", typo.toString());
        assertEquals(1, offline.exitCode(), offline::toString); // it said "valid", then the proxy refused the file
        assertTrue(offline.err().startsWith(refused), offline::toString);
        CliRun online = run("proxy", "--upstream", UpstreamLane.uri(), "--host", "127.0.0.1", "--port", "0", "--admin-port", "-1",
                "--scenario", typo.toString());
        assertEquals(1, online.exitCode(), online::toString);
        assertTrue(online.err().startsWith("blackpipe: " + refused), "the proxy refuses it too, before it starts: " + online);

        Path hostPort = temp.resolve("host-port.yaml"); // may be a member of the deployment it runs against: the proxy decides
        Files.writeString(hostPort, "name: h\ntimeline:\n  - at: 1s\n    blackhole: {member: \"db9:27017\"}\n  - at: 2s\n    restore: all\n");
        CliRun valid = run("scenario", "validate", hostPort.toString());
        assertEquals(0, valid.exitCode(), valid::toString);
    }

    /**
     * failCommand takes any command name, and so does a scenario's rule: a misspelt one is valid and never fires. validate
     * says which name it likely meant, on standard error, once for a repeated add's copies; the file stays valid.
     */
    @Test
    void validateNotesACommandNameThatLooksMisspelt() throws Exception {
        Path typo = temp.resolve("misspelt.yaml");
        Files.writeString(typo, """
                name: misspelt
                rules:
                  - {id: lost, configureFailPoint: failCommand, mode: alwaysOn, data: {failCommands: [insret, find], dropReply: true}}
                timeline:
                  - at: 1s
                    add: {id: later, configureFailPoint: failCommand, mode: {times: 1}, data: {failCommands: [Update], closeConnection: true}}
                    repeat: {every: 1s, times: 3}
                """);
        CliRun validate = run("scenario", "validate", typo.toString());
        assertEquals(0, validate.exitCode(), validate::toString);
        assertEquals(typo + ": valid (scenario 'misspelt': 1 rule, 3 timeline steps)", validate.out().strip(), validate::toString);
        String kept = "(kept as given, as failCommand keeps any name: the rule faults only a command of that name)";
        assertEquals(List.of("note: " + typo + ": rule 'lost': 'insret' is no command blackpipe knows: did you mean 'insert'? " + kept,
                "note: " + typo + ": rule 'later': 'Update' is no command blackpipe knows: did you mean 'update'? " + kept),
                validate.err().lines().toList(), validate::toString);
    }

    /**
     * A wrapper that passes --admin and --admin-token to every scenario command: validate takes them (before, exit 2,
     * "Unknown options"), asks nothing of that address, and says what it says without them, a valid file or not.
     */
    @Test
    void validateTakesAWrappersAdminOptionsAndAsksNoProxy() throws Exception {
        Path bad = temp.resolve("bad.yaml");
        Files.writeString(bad, "name: b\ntimeline:\n  - at: soon\n    failover: primary\n");
        try (ServerSocket admin = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            String url = "http://127.0.0.1:" + admin.getLocalPort();
            for (String scenario : List.of("transient-blip", bad.toString())) {
                CliRun alone = run("scenario", "validate", scenario);
                CliRun wrapped = run("scenario", "validate", "--admin", url, scenario, "--admin-token", "s3cret");
                assertEquals(List.of(alone.exitCode(), alone.out(), alone.err()), List.of(wrapped.exitCode(), wrapped.out(), wrapped.err()),
                        () -> "alone:\n" + alone + "\nwrapped:\n" + wrapped);
                assertEquals(scenario.equals(bad.toString()) ? 1 : 0, wrapped.exitCode(), wrapped::toString);
            }
            admin.setSoTimeout(200);
            assertThrows(SocketTimeoutException.class, admin::accept, "validate connected to the admin address it was given");
        }
        CliRun help = run("scenario", "validate", "--help");
        assertTrue(help.out().replaceAll("\\s+", " ").contains("--admin=URL Accepted and unused (validate asks no proxy), for wrappers"
                + " that pass --admin to every scenario command."), help::toString);
    }

    /** Before, an empty FILE|NAME was read as the working directory: "cannot read : Is a directory", exit 1. */
    @ParameterizedTest(name = "scenario {0} ''")
    @ValueSource(strings = {"validate", "run"})
    void anEmptyScenarioArgumentIsAUsageError(String subcommand) {
        CliRun run = run("scenario", subcommand, "", "--admin", "http://127.0.0.1:1");
        assertEquals(2, run.exitCode(), run::toString);
        assertTrue(run.err().contains("an empty scenario; give a file, or a bundled scenario's name"), run::toString);
        assertTrue(run.err().contains("Usage: blackpipe scenario " + subcommand), run::toString);
    }

    @Test
    void aScenarioFileThatIsNotUtf8IsSaidSoWithItsLine() throws Exception {
        Path latin1 = temp.resolve("latin1.yaml");
        Files.write(latin1, "name: x\ndescription: caf\u00e9\n".getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
        CliRun run = run("scenario", "validate", latin1.toString());
        assertEquals(1, run.exitCode(), run::toString);
        assertTrue(run.err().startsWith(latin1 + ":2: (file): is not UTF-8 text (the byte 0xE9 on this line); save it as UTF-8"),
                run::toString);
    }

    @Test
    void aMissingScenarioFileExitsOne() throws Exception {
        Path missing = temp.resolve("nowhere.yaml");
        try (ScriptedMongod upstream = ScriptedMongod.start()) {
            CliRun run = run("proxy", "--upstream", uri(upstream), "--host", "127.0.0.1", "--port", "0", "--admin-port", "-1",
                    "--scenario", missing.toString());
            assertEquals(1, run.exitCode(), run::toString);
            assertTrue(run.err().contains("cannot read scenario " + missing + ": no such file"), run::toString);
        }
    }

    @Test
    void aShippedScriptStartsWithTheProxyAndItsRuleIsListed() throws Exception {
        try (ScriptedMongod upstream = ScriptedMongod.start();
             CliChild child = new CliChild(temp, repositoryRoot(), Map.of(), "proxy", "--upstream", uri(upstream), "--host", "127.0.0.1",
                     "--port", "0", "--admin-port", "0", "--scenario", "fault-scripts/transient-blip.yaml")) {
            child.awaitLine("connection string: ");
            String admin = child.seen.stream().map(ADMIN::matcher).filter(Matcher::find).map(m -> m.group(1)).findFirst()
                    .orElseThrow(() -> new AssertionError("no admin line in " + child.seen));

            HttpResponse<String> rules = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://" + admin + "/api/v1/rules"))
                    .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, rules.statusCode(), rules::body);
            List<BsonValue> listed = BsonDocument.parse(rules.body()).getArray("rules");
            assertEquals(1, listed.size(), rules::body);
            BsonDocument blip = listed.get(0).asDocument();
            assertEquals("blip", blip.getString("id").getValue());
            assertEquals("resetConnection", blip.getString("fault").getValue());

            HttpResponse<String> scenario = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://" + admin + "/api/v1/scenario"))
                    .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
            BsonDocument status = BsonDocument.parse(scenario.body());
            assertEquals("running", status.getString("state").getValue());
            assertEquals("transient-blip", status.getString("name").getValue());
            assertTrue(child.stderrText().contains("scenario 'transient-blip' started"), child::describe);
        }
    }

    @Test
    void theScenarioMayComeFromTheEnvironment() throws Exception {
        Path bad = temp.resolve("env.yaml");
        Files.writeString(bad, "name: e\n\nnonsense: 1\ncolour: red\n");
        try (ScriptedMongod upstream = ScriptedMongod.start();
             CliChild child = new CliChild(temp, temp, Map.of("BLACKPIPE_SCENARIO", bad.toString()), "proxy", "--upstream", uri(upstream),
                     "--host", "127.0.0.1", "--port", "0", "--admin-port", "-1")) {
            assertEquals(1, child.awaitExit(), child::describe);
            List<String> lines = child.stderrText().lines().filter(line -> line.contains(bad.toString())).toList();
            assertEquals(List.of("blackpipe: " + bad + ":3: nonsense: unknown field (expected name, description, rules, timeline)"
                    + " (set by BLACKPIPE_SCENARIO)", bad + ":4: colour: unknown field (expected name, description, rules, timeline)"),
                    lines, "a file nobody typed is named with its variable, on the first of its errors: " + child.describe());
            assertFalse(child.stderrText().contains("listening on"), () -> "refused before the proxy bound a port: " + child.describe());
        }
        // a bundled scenario the variable names, refused for this deployment (one node: no failover)
        try (ScriptedMongod upstream = ScriptedMongod.start();
             CliChild child = new CliChild(temp, temp, Map.of("BLACKPIPE_SCENARIO", "failover-during-writes"), "proxy", "--upstream",
                     uri(upstream), "--host", "127.0.0.1", "--port", "0", "--admin-port", "-1")) {
            assertEquals(1, child.awaitExit(), child::describe);
            assertTrue(child.stderrText().contains("blackpipe: fault-scripts/failover-during-writes.yaml (bundled):"), child::describe);
            assertTrue(child.stderrText().contains("(set by BLACKPIPE_SCENARIO)"), child::describe);
        }
    }

    /** A scenario file the variable names but that is not there: the error says which variable named it. */
    @Test
    void aMissingScenarioFromTheEnvironmentNamesTheVariable() throws Exception {
        Path missing = temp.resolve("nope.yaml");
        try (ScriptedMongod upstream = ScriptedMongod.start();
             CliChild child = new CliChild(temp, temp, Map.of("BLACKPIPE_SCENARIO", missing.toString()), "proxy", "--upstream", uri(upstream),
                     "--host", "127.0.0.1", "--port", "0", "--admin-port", "-1")) {
            assertEquals(1, child.awaitExit(), child::describe);
            assertTrue(child.stderrText().contains("cannot read scenario " + missing), child::describe);
            assertTrue(child.stderrText().contains("(set by BLACKPIPE_SCENARIO)"), child::describe);
            assertFalse(child.stderrText().contains("listening on"), () -> "refused before the proxy bound a port: " + child.describe());
        }
    }

    /** `local` refuses a scenario it cannot run before it starts its upstream, which takes seconds, not after. */
    @Test
    void localRefusesAnInvalidScenarioBeforeItStartsItsUpstream() throws Exception {
        Path bad = temp.resolve("local-bad.yaml");
        Files.writeString(bad, "name: l\nrules: 5\n");
        try (CliChild child = new CliChild(temp, temp, Map.of(), "local", "--scenario", bad.toString(), "--port", "0", "--admin-port", "-1")) {
            assertEquals(1, child.awaitExit(), child::describe);
            assertTrue(child.stderrText().contains("blackpipe: " + bad + ":2: rules: must be a list"), child::describe);
            assertFalse(child.stdoutText().contains("starting a local upstream"), child::describe);
        }
    }

    /** A child `java io.blackpipe.cli.Main ...` in {@code directory}, with no BLACKPIPE_* variables except {@code env}. */
}
