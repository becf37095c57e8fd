package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.ScriptedMongod;
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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Where the CLI takes a scenario file it also takes a bundled scenario's name (a Docker sidecar
 * needs no mounted file): `scenario run transient-blip`, `proxy --scenario transient-blip`; an
 * unknown name's error lists the bundled ones; an existing file of that name wins.
 */
class BundledScenarioCliTest {
    private static final String TOKEN = AdminRig.TOKEN;
    private static final Pattern ADMIN = Pattern.compile("^admin: http://([^/ ]+)/metrics");
    /** A file called like a bundled scenario, with another rule: which of the two ran shows in the rule id. */
    private static final String IMPOSTOR = "name: impostor\nrules:\n  - id: from-the-file\n    configureFailPoint: failCommand\n"
            + "    mode: {times: 1}\n    data: {failCommands: [find], errorCode: 91}\n";

    @RegisterExtension
    static final SharedAdminRig shared = new SharedAdminRig();

    @TempDir
    Path temp;

    @AfterEach
    void reset() {
        shared.rig().proxy().scenarios().stop();
        shared.rig().proxy().rules().clear();
    }

    private static String adminUrl() {
        return shared.rig().url();
    }

    private static List<String> ruleIds() {
        return shared.rig().ruleIds();
    }

    @Test
    void scenarioRunTakesABundledName() {
        // the working directory (proxy/ under Maven) holds no file called transient-blip
        CliRun run = CliRun.of("scenario", "run", "transient-blip", "--admin", adminUrl(), "--admin-token", TOKEN);
        assertEquals(0, run.exitCode(), run::toString);
        assertTrue(run.out().contains("started scenario 'transient-blip' (running)"), run::toString);
        assertEquals(List.of("blip"), ruleIds(), "the bundled scenario's rule is live");

        CliRun validate = CliRun.of("scenario", "validate", "failover-during-writes");
        assertEquals(0, validate.exitCode(), validate::toString);
        assertTrue(validate.out().startsWith("fault-scripts/failover-during-writes.yaml (bundled): valid"), validate::toString);
    }

    @Test
    void anUnknownNameNamesTheMissingFileAndListsTheBundledOnes() throws Exception {
        String expected = "cannot read no-such-scenario: no such file, nor a bundled scenario (bundled: "
                + "command-error-not-retried, failover-during-writes, failover-with-rollback, hang-until-socket-timeout, narrow-link,"
                + " not-writable-primary-once, "
                + "persistent-outage, reply-lost-after-apply, rolling-restart, slow-network, slow-primary, transient-blip, write-concern-error-after-apply)";
        CliRun run = CliRun.of("scenario", "run", "no-such-scenario", "--admin", adminUrl(), "--admin-token", TOKEN);
        assertEquals(1, run.exitCode(), run::toString);
        assertEquals("blackpipe: " + expected, run.err().strip(), run::toString);
        assertEquals(List.of(), ruleIds(), "nothing started");

        CliRun validate = CliRun.of("scenario", "validate", "no-such-scenario");
        assertEquals(1, validate.exitCode(), validate::toString);
        assertEquals("blackpipe: " + expected, validate.err().strip(), validate::toString);

        try (ScriptedMongod upstream = ScriptedMongod.start()) {
            CliRun startup = CliRun.of("proxy", "--upstream", uri(upstream), "--host", "127.0.0.1", "--port", "0",
                    "--admin-port", "-1", "--scenario", "no-such-scenario");
            assertEquals(1, startup.exitCode(), "a missing file exits 1, as before: " + startup);
            assertEquals("blackpipe: " + expected.replace("cannot read ", "cannot read scenario "), startup.err().strip(),
                    startup::toString);
        }
    }

    @Test
    void scenarioRunPrefersAnExistingFileOfThatName() throws Exception {
        Files.writeString(temp.resolve("transient-blip"), IMPOSTOR);
        try (CliChild child = new CliChild(temp, temp, Map.of(), "scenario", "run", "transient-blip", "--admin", adminUrl(),
                "--admin-token", TOKEN)) {
            assertEquals(0, child.awaitExit(), child::describe);
        }
        assertEquals(List.of("from-the-file"), ruleIds(), "the file in the working directory ran, not the bundled scenario");
    }

    @Test
    void theProxyStartsWithABundledScenarioByName() throws Exception {
        try (ScriptedMongod upstream = ScriptedMongod.start();
             CliChild child = new CliChild(temp, temp, Map.of(), "proxy", "--upstream", uri(upstream), "--host", "127.0.0.1",
                     "--port", "0", "--admin-port", "0", "--scenario", "transient-blip")) {
            child.awaitLine("connection string: ");
            assertEquals(List.of("blip"), liveRules(child), child::describe);
            assertTrue(child.stderrText().contains("scenario 'transient-blip' started"), child::describe);
        }
    }

    @Test
    void theProxyPrefersAnExistingFileOfThatNameFromTheEnvironment() throws Exception {
        Files.writeString(temp.resolve("transient-blip"), IMPOSTOR);
        try (ScriptedMongod upstream = ScriptedMongod.start();
             CliChild child = new CliChild(temp, temp, Map.of("BLACKPIPE_SCENARIO", "transient-blip"), "proxy", "--upstream",
                     uri(upstream), "--host", "127.0.0.1", "--port", "0", "--admin-port", "0")) {
            child.awaitLine("connection string: ");
            assertEquals(List.of("from-the-file"), liveRules(child), child::describe);
        }
    }

    private static String uri(ScriptedMongod upstream) {
        return "mongodb://" + upstream.address() + "/?replicaSet=" + ScriptedMongod.SET_NAME;
    }

    /** The ids of the rules a child proxy lists on its admin API (no token: a child started without one). */
    private static List<String> liveRules(CliChild child) throws Exception {
        String address = child.seen.stream().map(ADMIN::matcher).filter(Matcher::find).map(m -> m.group(1)).findFirst()
                .orElseThrow(() -> new AssertionError("no admin line in " + child.seen));
        HttpResponse<String> rules = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://" + address + "/api/v1/rules"))
                .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, rules.statusCode(), rules::body);
        return BsonDocument.parse(rules.body()).getArray("rules").stream().map(BsonValue::asDocument)
                .map(rule -> rule.getString("id").getValue()).toList();
    }
}
