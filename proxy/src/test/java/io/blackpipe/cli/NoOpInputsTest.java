package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.bson.BsonDocument;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Inputs that were taken without a word and then did nothing: a duration under 1 ms (rounded to 0,
 * which means "no delay" or "until restored") and an empty --namespace (a rule that never fires).
 * Each is refused where it is typed, naming it, and nothing reaches the real proxy behind the admin API.
 */
class NoOpInputsTest {
    @RegisterExtension
    static final SharedAdminRig shared = new SharedAdminRig();

    @TempDir
    Path temp;

    @AfterEach
    void clear() {
        shared.rig().proxy().rules().clear();
        shared.rig().proxy().restore("all");
    }

    private static CliRun run(String... args) {
        return shared.rig().run(args);
    }

    private static List<String> ruleIds() {
        return shared.rig().ruleIds();
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"--delay, 0.4ms", "--delay, 0.0004s", "--block, 0.4ms", "--block, 0.9"})
    void aFaultAddDurationUnderOneMillisecondIsAUsageErrorNamingTheFlag(String flag, String duration) {
        CliRun run = run("fault", "add", "--command", "insert", flag, duration);
        assertEquals(2, run.exitCode(), run::toString);
        assertTrue(run.err().startsWith("Invalid value for option '" + flag + "': '" + duration + "' is shorter than 1ms"), run::toString);
        assertTrue(run.err().contains("Usage: blackpipe fault add"), run::toString);
        assertEquals(List.of(), ruleIds(), "nothing was added");
    }

    @Test
    void zeroAndWholeMillisecondsStillMakeRules() {
        CliRun noDelay = run("fault", "add", "--command", "insert", "--delay", "0", "--id", "zero");
        assertEquals(0, noDelay.exitCode(), noDelay::toString);
        CliRun rounded = run("fault", "add", "--command", "find", "--block", "1.4ms", "--reset", "--id", "rounded");
        assertEquals(0, rounded.exitCode(), rounded::toString);
        assertEquals(List.of("zero", "rounded"), ruleIds());
        BsonDocument block = shared.rig().proxy().rules().rules().get(1).source().getDocument("data");
        assertEquals(1, block.getNumber("blockTimeMS").longValue(), block::toJson);
    }

    @Test
    void aMemberFaultOfPartOfAMillisecondIsRefusedNotRoundedUpToOne() throws Exception {
        CliRun run = run("outage", "primary", "--duration", "0.6ms");
        assertEquals(2, run.exitCode(), run::toString);
        assertTrue(run.err().startsWith("Invalid value for option '--duration': '0.6ms' is shorter than 1ms"), run::toString);

        HttpResponse<String> api = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                        URI.create(shared.rig().url() + "/api/v1/members/primary/blackhole?duration=0.6ms"))
                .header("Authorization", "Bearer " + AdminRig.TOKEN).POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(400, api.statusCode(), api::body);
        assertTrue(api.body().contains("duration: '0.6ms' is shorter than 1ms"), api::body);
        assertTrue(shared.rig().proxy().select("all").stream().noneMatch(l -> l.down() || l.blackholed()), "no member was faulted");
    }

    /** {@code step}: the step's YAML, its lines separated by '|'; {@code line}: where {@code field} is. */
    @ParameterizedTest(name = "{0}")
    @CsvSource({"'at: 0.4ms|    clear: true', 3, timeline[0].at, 0.4ms",
            "'at: 0.4|    clear: true', 3, timeline[0].at, 0.4",
            "'at: 1s|    outage: {member: primary, duration: 0.6ms}', 4, timeline[0].outage.duration, 0.6ms"})
    void aScenarioDurationUnderOneMillisecondRejectsTheFileNamingLineAndField(String step, int line, String field, String written)
            throws Exception {
        Path file = temp.resolve("short.yaml");
        Files.writeString(file, "name: short\ntimeline:\n  - " + step.replace("|", "\n") + "\n");
        CliRun run = CliRun.of("scenario", "validate", file.toString());
        assertEquals(1, run.exitCode(), run::toString);
        assertEquals(file + ":" + line + ": " + field + ": '" + written + "' is shorter than 1ms, the shortest duration blackpipe keeps",
                run.err().strip());
    }

    @Test
    void anEmptyNamespaceFlagIsAUsageErrorButAnEmptyNamespaceDocumentIsTakenAsMongodTakesIt() {
        for (String empty : List.of("", " ")) {
            CliRun run = run("fault", "add", "--command", "insert", "--reset", "--namespace", empty);
            assertEquals(2, run.exitCode(), run::toString);
            assertTrue(run.err().startsWith("--namespace must not be empty"), run::toString);
        }
        assertEquals(List.of(), ruleIds(), "nothing was added");

        // mongod's failCommand stores namespace: "" and never matches it; a failCommand document here does the same
        CliRun document = run("fault", "add", "{id: 'as-mongod', configureFailPoint: 'failCommand', mode: 'alwaysOn',"
                + " data: {failCommands: ['insert'], resetConnection: true, namespace: ''}}");
        assertEquals(0, document.exitCode(), document::toString);
        assertEquals(List.of("as-mongod"), ruleIds());
    }
}
