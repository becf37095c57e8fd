package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.CommandLog;
import io.blackpipe.testing.HeldPort;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.ScriptedScramServer;
import io.blackpipe.testing.UpstreamLane;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The commands that control a running proxy (fault, scenario, stats, members, connections,
 * failover, outage, blackhole, restore, completion), run in-process through {@link Main#commandLine()}
 * against a real proxy and admin server with a token: exit codes, what they print, and what they
 * did to the proxy — down to the real driver retrying an insert because of a rule the CLI added.
 */
class ControlCommandsTest {
    private static final String TOKEN = AdminRig.TOKEN;

    /** The shared proxy (in front of the test lane's upstream) and its admin server. */
    private static AdminRig shared;

    @TempDir
    Path temp;

    /** What one in-process run printed and returned. */
    static CliRun run(String... args) {
        return CliRun.of(args);
    }

    @BeforeAll
    static void startShared() {
        shared = AdminRig.start(ProxyConfig.embedded(UpstreamLane.uri()));
    }

    @AfterAll
    static void stopShared() {
        if (shared != null) {
            shared.close();
        }
    }

    @AfterEach
    void resetShared() {
        shared.proxy().scenarios().stop();
        shared.proxy().rules().clear();
    }

    /** A loopback port nothing listened on a moment ago, for an address that is never dialled (see HeldPort for one that is). */
    private static int closedPort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    /** The repository's fault-scripts/ directory, found from the working directory (proxy/ under Maven) upwards. */
    private static Path script(String name) {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            Path file = dir.resolve("fault-scripts").resolve(name);
            if (Files.isRegularFile(file)) {
                return file;
            }
        }
        throw new AssertionError("no fault-scripts/" + name + " above " + Path.of("").toAbsolutePath());
    }

    /** The table row whose first two cells are {@code command} and {@code member}, split on runs of spaces. */
    private static Optional<List<String>> row(CliRun run, String first) {
        return run.lines().stream().map(l -> List.of(l.trim().split(" {2,}"))).filter(cells -> cells.get(0).equals(first)).findFirst();
    }

    // ------------------------------------------------------------------ fault add -> the driver feels it -> stats

    @Test
    void aRuleAddedFromFlagsMakesTheDriverRetryAndStatsCountsIt() throws Exception {
        try (AdminRig rig = AdminRig.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            CliRun added = rig.run("fault", "add", "--command", "insert", "--error", "NotWritablePrimary", "--times", "1");
            assertEquals(0, added.exitCode(), added::toString);
            String id = added.out().strip();
            assertEquals(1, added.lines().size(), "only the id is printed, for scripts: " + added);
            assertEquals(List.of(id), rig.ruleIds(), "the proxy holds the rule under the printed id");
            BsonDocument stored = rig.proxy().rules().rules().get(0).source();
            assertEquals(BsonDocument.parse("{configureFailPoint: 'failCommand', mode: {times: 1},"
                    + " data: {failCommands: ['insert'], error: 'NotWritablePrimary'}}"), stored);

            CommandLog log = new CommandLog();
            String uri = CommandLog.withOptions(rig.proxy().connectionString(), "retryWrites=true&socketTimeoutMS=5000&connectTimeoutMS=5000");
            String db = UpstreamLane.freshDatabaseName("cli");
            try (MongoClient client = MongoClients.create(log.driverOn(uri).build());
                 MongoClient direct = UpstreamLane.directClient()) {
                client.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1)); // succeeds: retried once
                assertEquals(2, log.startedCount("insert"), "the driver sent the insert twice (CommandStartedEvents)");
                assertEquals(1, direct.getDatabase(db).getCollection("c").countDocuments(), "the server holds it once");
            }

            // stats: a readable table, one row per command and member
            CliRun[] stats = new CliRun[1];
            Await.until(Duration.ofSeconds(10), () -> "stats to show the insert's outcomes: " + stats[0], () -> {
                stats[0] = rig.run("stats");
                return row(stats[0], "insert").map(r -> r.get(4).contains("ok=1") && r.get(4).contains("error=1")).orElse(false);
            });
            assertEquals(0, stats[0].exitCode(), stats[0]::toString);
            assertEquals(List.of("COMMAND", "MEMBER", "ATTEMPTS", "RETRIES", "OUTCOMES", "FAULTS"),
                    List.of(stats[0].lines().get(0).trim().split(" {2,}")), stats[0]::toString);
            List<String> insert = row(stats[0], "insert").orElseThrow();
            assertTrue(rig.proxy().members().stream().anyMatch(m -> m.upstream().toString().equals(insert.get(1))),
                    () -> "the member column names an upstream member: " + stats[0]);
            assertEquals("2", insert.get(2), () -> "attempts: " + stats[0]);
            assertEquals("1", insert.get(3), () -> "retries: " + stats[0]);
            assertEquals("errorReply=1", insert.get(5), () -> "faults: " + stats[0]);

            // --json is the API's document
            CliRun json = rig.run("stats", "--json");
            assertEquals(0, json.exitCode(), json::toString);
            BsonDocument document = BsonDocument.parse(json.out());
            long attempts = document.getArray("commands").stream().map(BsonValue::asDocument)
                    .filter(d -> d.getString("command").getValue().equals("insert"))
                    .mapToLong(d -> d.getNumber("attempts").longValue()).sum();
            assertEquals(2, attempts, json::toString);

            // the rule has fired its one time and says so
            CliRun list = rig.run("fault", "list");
            assertEquals(0, list.exitCode(), list::toString);
            List<String> line = row(list, id).orElseThrow(() -> new AssertionError(list.toString()));
            assertEquals(List.of(id, "{times: 1} (0 left)", "errorReply", "error=NotWritablePrimary(10107)", "1", "insert", "-"), line,
                    list::toString);
        }
    }

    @Test
    void statsSumsEveryClientAppIntoTheRowOfItsCommandAndMember() throws Exception {
        // the API has one entry per (command, member, app); the table's row is their sum, not the last one read
        try (AdminRig rig = AdminRig.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            CommandLog log = new CommandLog();
            String uri = CommandLog.withOptions(rig.proxy().connectionString(), "retryWrites=true&socketTimeoutMS=5000&connectTimeoutMS=5000");
            String db = UpstreamLane.freshDatabaseName("cli_apps");
            for (String app : List.of("bp-stats-app-a", "bp-stats-app-b")) {
                CliRun added = rig.run("fault", "add", "--command", "insert", "--error", "NotWritablePrimary", "--times", "1");
                assertEquals(0, added.exitCode(), added::toString);
                try (MongoClient client = MongoClients.create(log.driverOn(uri).applicationName(app).build())) {
                    client.getDatabase(db).getCollection("c").insertOne(new Document("app", app)); // retried once
                }
            }
            long inserts = log.startedCount("insert");
            assertEquals(4, inserts, "each app's driver sent its insert twice");

            CliRun json = rig.run("stats", "--json");
            assertEquals(2, BsonDocument.parse(json.out()).getArray("commands").stream().map(BsonValue::asDocument)
                    .filter(d -> d.getString("command").getValue().equals("insert")).count(),
                    () -> "the API keeps the two apps apart: " + json);

            CliRun[] stats = new CliRun[1];
            Await.until(Duration.ofSeconds(10), () -> "stats to show every insert's outcome: " + stats[0], () -> {
                stats[0] = rig.run("stats");
                return row(stats[0], "insert").map(r -> r.get(4).equals("error=2 ok=2")).orElse(false);
            });
            assertEquals(0, stats[0].exitCode(), stats[0]::toString);
            List<String> insert = row(stats[0], "insert").orElseThrow();
            assertEquals(1, stats[0].lines().stream().filter(l -> l.trim().startsWith("insert ")).count(),
                    () -> "one row for both apps: " + stats[0]);
            assertEquals(Long.toString(inserts), insert.get(2), () -> "attempts = what the drivers sent: " + stats[0]);
            assertEquals("2", insert.get(3), () -> "retries, one per app: " + stats[0]);
            assertEquals("errorReply=2", insert.get(5), () -> "faults: " + stats[0]);
        }
    }

    // ------------------------------------------------------------------ fault list / remove / clear

    @Test
    void faultListShowsRulesAndRemoveAndClearEmptyIt() {
        CliRun json = shared.run("fault", "add", "--id", "by-json",
                "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], closeConnection: true}}");
        assertEquals(0, json.exitCode(), json::toString);
        assertEquals("by-json", json.out().strip());
        CliRun flags = shared.run("fault", "add", "--id", "by-flags", "--command", "update,delete", "--reset", "--skip", "2",
                "--member", "primary", "--app", "shop", "--attempt", "retry");
        assertEquals(0, flags.exitCode(), flags::toString);
        CliRun option = shared.run("fault", "add", "--json",
                "{id: 'by-option', configureFailPoint: 'failCommand', mode: {times: 3}, data: {failCommands: ['count'], hang: true}}");
        assertEquals(0, option.exitCode(), option::toString);
        assertEquals("by-option", option.out().strip());
        CliRun all = shared.run("fault", "add", "--id", "by-all", "--all-commands", "--hang", "--app", "nobody");
        assertEquals(0, all.exitCode(), all::toString);
        assertEquals(List.of("by-all", "by-flags", "by-json", "by-option"), shared.ruleIds().stream().sorted().toList());

        CliRun list = shared.run("fault", "list");
        assertEquals(0, list.exitCode(), list::toString);
        assertEquals(List.of("ID", "MODE", "FAULT", "DETAIL", "FIRED", "COMMANDS", "MATCHING"),
                List.of(list.lines().get(0).trim().split(" {2,}")));
        assertEquals(List.of("by-json", "alwaysOn", "closeConnection", "-", "0", "find", "-"), row(list, "by-json").orElseThrow(),
                list::toString);
        assertEquals(List.of("by-flags", "{skip: 2} (2 to skip)", "resetConnection", "-", "0", "update,delete",
                "member=primary app=shop attempt=retry"), row(list, "by-flags").orElseThrow(), list::toString);
        assertEquals(List.of("by-all", "alwaysOn", "hang", "-", "0", "(all)", "app=nobody"), row(list, "by-all").orElseThrow(),
                list::toString);

        CliRun listJson = shared.run("fault", "list", "--json");
        assertEquals(0, listJson.exitCode(), listJson::toString);
        assertEquals(4, BsonDocument.parse(listJson.out()).getArray("rules").size(), listJson::toString);

        CliRun removed = shared.run("fault", "remove", "by-json");
        assertEquals(0, removed.exitCode(), removed::toString);
        assertEquals("removed rule by-json", removed.out().strip());
        assertEquals(List.of("by-all", "by-flags", "by-option"), shared.ruleIds().stream().sorted().toList());
        assertTrue(row(shared.run("fault", "list"), "by-json").isEmpty());

        CliRun again = shared.run("fault", "remove", "by-json");
        assertEquals(1, again.exitCode(), again::toString);
        assertTrue(again.err().contains("404") && again.err().contains("no rule by-json"), again::toString);
        assertFalse(again.err().contains("Usage:"), "a failure is not a usage error: " + again);

        CliRun cleared = shared.run("fault", "clear");
        assertEquals(0, cleared.exitCode(), cleared::toString);
        assertEquals(List.of(), shared.ruleIds());
        CliRun empty = shared.run("fault", "list");
        assertEquals("no rules", empty.out().strip(), empty::toString);
    }

    static Stream<Arguments> flagRules() {
        return Stream.of(
                Arguments.of(List.of("--command", "find", "--command", "aggregate,count", "--error-code", "91",
                                "--labels", "RetryableWriteError,Custom", "--block", "300ms", "--probability", "0.5",
                                "--namespace", "db.c", "--attempt", "first"),
                        "{configureFailPoint: 'failCommand', mode: {activationProbability: 0.5}, data: {failCommands: ['find', "
                                + "'aggregate', 'count'], errorCode: 91, errorLabels: ['RetryableWriteError', 'Custom'],"
                                + " blockConnection: true, blockTimeMS: 300, namespace: 'db.c', attempt: 'first'}}"),
                Arguments.of(List.of("--command", "insert", "--delay", "1.5s", "--member", "MEMBER"), // the proxy's member: below
                        "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['insert'], delayReplyMS: 1500,"
                                + " member: 'MEMBER'}}"),
                // as on mongod: code 0 is OK (the rule fires, the command runs); appName "" is the clients that send none
                Arguments.of(List.of("--command", "ping", "--error-code", "0", "--app", ""),
                        "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['ping'], errorCode: 0,"
                                + " appName: ''}}"),
                Arguments.of(List.of("--command", "find", "--delay", "200ms", "--jitter", "50ms"),
                        "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], delayReplyMS: 200,"
                                + " delayReplyJitterMS: 50}}"),
                Arguments.of(List.of("--command", "find", "--trickle", "64/250ms", "--times", "1"),
                        "{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['find'], trickleReplyBytes: 64,"
                                + " trickleReplyIntervalMS: 250}}"),
                Arguments.of(List.of("--command", "find", "--trickle", "1B/1.5s", "--block", "10ms"),
                        "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], trickleReplyBytes: 1,"
                                + " trickleReplyIntervalMS: 1500, blockConnection: true, blockTimeMS: 10}}"),
                Arguments.of(List.of("--command", "insert", "--write-concern-error", "10107", "--labels", "RetryableWriteError",
                                "--times", "1"),
                        "{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['insert'],"
                                + " writeConcernError: {code: 10107}, errorLabels: ['RetryableWriteError']}}"),
                Arguments.of(List.of("--command", "insert", "--truncate", "20", "--times", "1"),
                        "{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['insert'], truncateReplyBytes: 20}}"),
                Arguments.of(List.of("--command", "find", "--truncate", "100B", "--block", "10ms"),
                        "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], truncateReplyBytes: 100,"
                                + " blockConnection: true, blockTimeMS: 10}}"),
                Arguments.of(List.of("--command", "insert", "--drop-reply", "--times", "2"),
                        "{configureFailPoint: 'failCommand', mode: {times: 2}, data: {failCommands: ['insert'], dropReply: true}}"),
                Arguments.of(List.of("--command", "find", "--block", "2s"),
                        "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], blockConnection: true,"
                                + " blockTimeMS: 2000}}"),
                Arguments.of(List.of("--command", "find", "--close", "--app", "reporting"),
                        "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], closeConnection: true,"
                                + " appName: 'reporting'}}"),
                Arguments.of(List.of("--command", "insert", "--error", "10107"),
                        "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['insert'], errorCode: 10107}}"),
                Arguments.of(List.of("--all-commands", "--delay", "100ms", "--member", "primary"),
                        "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failAllCommands: true, delayReplyMS: 100,"
                                + " member: 'primary'}}"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("flagRules")
    void theFlagsBuildTheFailCommandDocumentTheProxyStores(List<String> flags, String expected) {
        String member = shared.proxy().members().get(0).upstream().toString();
        List<String> args = new ArrayList<>(List.of("fault", "add", "--id", "r"));
        flags.forEach(flag -> args.add(flag.replace("MEMBER", member)));
        CliRun run = shared.run(args.toArray(new String[0]));
        assertEquals(0, run.exitCode(), run::toString);
        assertEquals("r", run.out().strip());
        BsonDocument stored = shared.proxy().rules().rules().get(0).source();
        BsonDocument want = BsonDocument.parse(expected.replace("MEMBER", member)).append("id", new org.bson.BsonString("r"));
        assertEquals(normalize(want), normalize(stored), () -> "stored " + stored.toJson());
    }

    /** Numbers compared by value (the CLI sends int64 where the JSON above parses int32). */
    private static String normalize(BsonDocument document) {
        return document.toJson(org.bson.json.JsonWriterSettings.builder().outputMode(org.bson.json.JsonMode.RELAXED).build())
                .replace(".0,", ",").replace(".0}", "}");
    }

    @Test
    void aRuleTheApiRefusesExitsOneWithTheApisMessage() {
        CliRun run = shared.run("fault", "add", "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], bogus: 1}}");
        assertEquals(1, run.exitCode(), run::toString);
        assertTrue(run.err().contains("400") && run.err().contains("data.bogus: unknown field"), run::toString);
        assertEquals(List.of(), shared.ruleIds(), "nothing was added");
    }

    // ------------------------------------------------------------------ usage errors: exit 2, nothing sent

    static Stream<Arguments> usageErrors() {
        return Stream.of(
                Arguments.of("fault add --reset", "--command"),
                Arguments.of("fault add --command insert", "no action"),
                Arguments.of("fault add --command insert --reset --hang", "--reset and --hang"),
                Arguments.of("fault add --command insert --error NotWritablePrimary --close", "--error and --close"),
                Arguments.of("fault add --command insert --delay 1s --drop-reply", "--drop-reply and --delay"),
                Arguments.of("fault add --command insert --error NotWritablePrimary --error-code 91", "--error and --error-code"),
                Arguments.of("fault add --command insert --reset --times 1 --skip 2", "--times and --skip"),
                Arguments.of("fault add --command insert --reset --times -1", "--times"),
                Arguments.of("fault add --command insert --reset --times 0", "--times must be at least 1, got 0"),
                Arguments.of("fault add --command insert --reset --times 2147483648", "--times: 2147483648 is too large"),
                Arguments.of("fault add --command insert --reset --skip 2147483648", "--skip: 2147483648 is too large"),
                Arguments.of("fault add --command insert --reset --probability 1.5", "--probability"),
                Arguments.of("fault add --command insert --reset --labels RetryableWriteError", "--labels"),
                Arguments.of("fault add --command insert --reset --no-labels", "--no-labels needs --error, --error-code or --write-concern-error"),
                Arguments.of("fault add --command insert --error-code 91 --labels A --no-labels", "--labels and --no-labels: give one of them"),
                // the hint for an empty label once read "[] sends none", and `--labels '[]'` sent a label named "[]"
                Arguments.of("fault add --command insert --error-code 91 --labels []",
                        "--labels: '[]' is not an error label (labels are names such as RetryableWriteError; --no-labels sends none)"),
                Arguments.of("fault add --command insert --error-code 91 --labels RetryableWriteError,\"Custom\"",
                        "--labels: '\"Custom\"' is not an error label"),
                Arguments.of("fault add --command insert --error NoSuchError", "--error 'NoSuchError'"),
                Arguments.of("fault add --command insert --delay soon", "--delay"),
                Arguments.of("fault add --command find --trickle 0/250ms", "--trickle"),
                Arguments.of("fault add --command find --trickle -64/250ms", "--trickle"),
                Arguments.of("fault add --command find --trickle many/250ms", "--trickle"),
                Arguments.of("fault add --command find --trickle 64", "--trickle"),
                Arguments.of("fault add --command find --trickle 64/", "--trickle"),
                Arguments.of("fault add --command find --trickle 64/soon", "--trickle"),
                Arguments.of("fault add --command find --trickle 64/0ms", "--trickle"),
                Arguments.of("fault add --command find --trickle 64/-5ms", "--trickle"),
                Arguments.of("fault add --command find --trickle 64/0.4ms", "--trickle"),
                Arguments.of("fault add --command find --trickle 64/5ms --delay 1s", "--delay and --trickle"),
                Arguments.of("fault add --command find --jitter 50ms", "--jitter varies a --delay"),
                Arguments.of("fault add --command find --error-code 2 --jitter 50ms", "--jitter varies a --delay"),
                Arguments.of("fault add --command find --delay 200ms --jitter 0.4ms", "--jitter"),
                Arguments.of("fault add --command find --delay 200ms --jitter soon", "--jitter"),
                Arguments.of("fault add --command find --trickle 64/5ms --drop-reply", "--drop-reply and --trickle"),
                Arguments.of("fault add --command find --truncate 0", "--truncate"),
                Arguments.of("fault add --command find --truncate -20", "--truncate"),
                Arguments.of("fault add --command find --truncate 1.5", "--truncate"),
                Arguments.of("fault add --command find --truncate many", "--truncate"),
                Arguments.of("fault add --command find --truncate 20 --drop-reply", "--drop-reply and --truncate"),
                Arguments.of("fault add --command find --truncate 20 --delay 1s", "--truncate and --delay"),
                Arguments.of("fault add --command find --truncate 20 --trickle 64/5ms", "--truncate and --trickle"),
                Arguments.of("fault add --command find --truncate 20 --error-code 91", "--error-code and --truncate"),
                Arguments.of("fault add --command find --truncate 20 --reply {ok:1}", "--truncate and --reply"),
                Arguments.of("fault add --command insert --reset --attempt second", "--attempt"),
                Arguments.of("fault add --command insert --reset --member nowhere", "--member"),
                // only the proxy knows its members: its refusal is a usage error naming the flag, and those it has
                Arguments.of("fault add --command insert --reset --member nosuch:1", "--member: no member 'nosuch:1' (known: primary"),
                Arguments.of("fault add --command insert --error-code 91 --labels RetryableWriteError,,Custom",
                        "--labels: an error label must not be empty, got ''"),
                // picocli's split drops an empty item at the end: `--labels "A,$B"` with B unset went out as [A]
                Arguments.of("fault add --command insert --error-code 91 --labels RetryableWriteError,",
                        "--labels: an error label must not be empty, got ''"),
                // `--command "insert,$MORE"` with MORE unset, or a stray comma: named, not dropped
                Arguments.of("fault add --command insert, --reset", "--command: a command name must not be empty, got 'insert,'"),
                Arguments.of("fault add --command ,insert --reset", "--command: a command name must not be empty, got ',insert'"),
                Arguments.of("fault add --command insert,,find --reset", "--command: a command name must not be empty"),
                Arguments.of("fault add {x", "JSON"),
                Arguments.of("fault add [1]", "JSON: not a JSON document: an array where one document {...} was expected"),
                Arguments.of("fault add {configureFailPoint:'failCommand',mode:'off'}", "JSON: mode: \"off\" removes a rule: `fault remove ID`"),
                Arguments.of("fault add {} --command insert", "--command"),
                Arguments.of("fault add --command insert --all-commands --reset", "--command and --all-commands"),
                Arguments.of("fault add {} --all-commands", "--all-commands"),
                Arguments.of("fault add {} --json {}", "--json"),
                Arguments.of("fault remove", "ID"),
                Arguments.of("fault", "a subcommand is required"),
                Arguments.of("scenario", "a subcommand is required"),
                Arguments.of("connections", "a subcommand is required"),
                Arguments.of("connections reset", "--member"),
                // as fault add's --member: only the proxy knows its members, and its refusal names those it has
                Arguments.of("outage nosuch:1", "MEMBER: no member 'nosuch:1' (known: primary, all, "),
                Arguments.of("restore nosuch:1", "MEMBER: no member 'nosuch:1' (known: primary, all, "),
                Arguments.of("latency secondary --delay 10ms", "MEMBER: no member 'secondary' (known: primary, all, "),
                Arguments.of("outage PRIMARY", "MEMBER: no member 'PRIMARY': did you mean 'primary'? (known: primary, all, "),
                Arguments.of("connections reset --member nosuch:1", "--member: no member 'nosuch:1' (known: primary, all, "),
                Arguments.of("outage primary --duration forever", "--duration"),
                Arguments.of("outage primary --duration 0s", "--duration"),
                Arguments.of("blackhole primary --duration 0.2ms", "--duration"),
                Arguments.of("fault add --command insert --error 99999999999", "--error 99999999999 is out of range"),
                Arguments.of("fault add --command hello --delay 5ms", "--delay: hello and isMaster"),
                Arguments.of("fault add --command isMaster --drop-reply", "--drop-reply: hello and isMaster"),
                Arguments.of("fault add --command hello --trickle 64/5ms", "--trickle: hello and isMaster"),
                Arguments.of("fault add --command hello --truncate 20", "--truncate: hello and isMaster"),
                Arguments.of("fault add {configureFailPoint:'failCommand'}{x:1}", "trailing content after the document: '{x:1}'"),
                Arguments.of("fault add {configureFailPoint:'failCommand'}trailing", "trailing content after the document: 'trailing'"),
                Arguments.of("fault add {id:5,configureFailPoint:'failCommand'}", "JSON: id: must be a string"),
                Arguments.of("stats --no-such-flag", "--no-such-flag"));
    }

    /** An empty or blank JSON argument (`--json "$RULE"` with RULE unset) is named as empty, not as a BSON reader state. */
    @ParameterizedTest(name = "fault add --json ''{0}''")
    @org.junit.jupiter.params.provider.ValueSource(strings = {"", "  "})
    void anEmptyJsonRuleIsAUsageErrorSayingItIsEmpty(String json) {
        CliRun run = shared.run("fault", "add", "--json", json);
        assertEquals(2, run.exitCode(), run::toString);
        String first = run.err().lines().findFirst().orElse("");
        assertEquals("JSON: not a JSON document: nothing (the text is empty) where one document {...} was expected", first, run::toString);
        assertEquals(List.of(), shared.ruleIds(), "a usage error sends nothing");
    }

    /**
     * failCommand takes any command name, and so does a rule (the server has commands blackpipe does not know): a
     * misspelt one never fires. It is added, with a note on standard error naming the one it likely meant.
     */
    @Test
    void aMisspeltCommandNameIsAddedWithANoteNamingTheLikelyOne() {
        String kept = "(kept as given, as failCommand keeps any name: the rule faults only a command of that name)";
        CliRun flags = shared.run("fault", "add", "--command", "insret", "--reset", "--id", "by-flags");
        assertEquals(0, flags.exitCode(), flags::toString);
        assertEquals("by-flags", flags.out().strip());
        assertEquals("note: --command 'insret' is no command blackpipe knows: did you mean 'insert'? " + kept, flags.err().strip());

        CliRun json = shared.run("fault", "add", "{configureFailPoint: 'failCommand', mode: 'alwaysOn',"
                + " data: {failCommands: ['Insert'], closeConnection: true}}", "--id", "by-json");
        assertEquals(0, json.exitCode(), json::toString);
        assertEquals("note: data.failCommands: 'Insert' is no command blackpipe knows: did you mean 'insert'? " + kept, json.err().strip());

        CliRun other = shared.run("fault", "add", "--command", "listSearchIndexes", "--reset", "--id", "other");
        assertEquals(0, other.exitCode(), other::toString);
        assertEquals("", other.err(), "a command blackpipe does not count by name, and no misspelling of one: no note");
        assertEquals(List.of("by-flags", "by-json", "other"), shared.ruleIds().stream().sorted().toList());
    }

    /**
     * `--labels "$LABEL"` with LABEL unset names the empty label, as the Java API and a JSON rule refuse it: it was
     * dropped, and the rule went out with errorLabels: [], which takes away the labels the error would have had.
     */
    @ParameterizedTest(name = "--labels ''{0}''")
    @org.junit.jupiter.params.provider.ValueSource(strings = {"", " "})
    void anEmptyErrorLabelIsAUsageErrorNamingLabels(String label) {
        CliRun run = shared.run("fault", "add", "--command", "insert", "--error-code", "91", "--labels", label);
        assertEquals(2, run.exitCode(), run::toString);
        assertTrue(run.err().startsWith("--labels: an error label must not be empty, got ''"), run::toString);
        assertTrue(run.err().contains("Usage: blackpipe fault add"), run::toString);
        assertEquals(List.of(), shared.ruleIds(), "a usage error sends nothing");
    }

    /** `--command "$CMD"` with CMD unset names the empty name: "--command is required" said it was not given at all. */
    @ParameterizedTest(name = "--command ''{0}''")
    @org.junit.jupiter.params.provider.ValueSource(strings = {"", " ", ","})
    void anEmptyCommandNameIsAUsageErrorSayingItIsEmpty(String command) {
        CliRun run = shared.run("fault", "add", "--command", command, "--reset");
        assertEquals(2, run.exitCode(), run::toString);
        assertTrue(run.err().startsWith("--command: a command name must not be empty, got '" + command + "'"), run::toString);
        assertTrue(run.err().contains("Usage: blackpipe fault add"), run::toString);
        assertEquals(List.of(), shared.ruleIds(), "a usage error sends nothing");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("usageErrors")
    void badFlagCombinationsExitTwoNamingTheFlags(String args, String named) {
        boolean group = List.of("fault", "scenario", "connections").contains(args); // a group takes no --admin
        CliRun run = group ? run(args) : shared.run(args.split(" "));
        assertEquals(2, run.exitCode(), run::toString);
        String first = run.err().lines().findFirst().orElse("");
        assertTrue(first.contains(named), () -> "the first line must name " + named + ": " + run);
        assertTrue(run.err().contains("Usage: blackpipe"), run::toString);
        assertEquals(List.of(), shared.ruleIds(), "a usage error sends nothing");
    }

    /** The API's own path in --admin would be doubled (/api/v1/api/v1/rules, a 404): refused, naming the address to give. */
    @Test
    void anAdminUrlWithTheApisPathIsAUsageErrorNamingTheAddress() {
        CliRun run = CliRun.of("stats", "--admin", "http://127.0.0.1:9090/api/v1/");
        assertEquals(2, run.exitCode(), run::toString);
        assertEquals("--admin 'http://127.0.0.1:9090/api/v1/' names the API's path, which every request adds; give the admin"
                + " address: http://127.0.0.1:9090", run.err().lines().findFirst().orElse(""));
    }

    @Test
    void anEmptyRuleIdIsAUsageErrorAndRemovesNothing() {
        assertEquals(0, shared.run("fault", "add", "--command", "insert", "--reset", "--id", "keep1").exitCode());
        assertEquals(0, shared.run("fault", "add", "--command", "find", "--hang", "--id", "keep2").exitCode());

        for (String id : List.of("", " ")) { // `fault remove "$ID"` with ID unset must not be `fault clear`
            CliRun remove = shared.run("fault", "remove", id);
            assertEquals(2, remove.exitCode(), remove::toString);
            assertTrue(remove.err().startsWith("ID must not be empty"), remove::toString);
            assertTrue(remove.err().contains("Usage: blackpipe fault remove"), remove::toString);
            assertEquals("", remove.out(), remove::toString);

            CliRun add = shared.run("fault", "add", "--command", "insert", "--reset", "--id", id);
            assertEquals(2, add.exitCode(), add::toString);
            assertTrue(add.err().startsWith("--id must not be empty"), add::toString);
            CliRun addJson = shared.run("fault", "add", "{configureFailPoint: 'failCommand', mode: 'alwaysOn', "
                    + "data: {failCommands: ['insert'], hang: true}}", "--id", id);
            assertEquals(2, addJson.exitCode(), addJson::toString);
        }
        CliRun emptyInJson = shared.run("fault", "add", "{id: '', configureFailPoint: 'failCommand', mode: 'alwaysOn', "
                + "data: {failCommands: ['insert'], hang: true}}");
        assertEquals(2, emptyInJson.exitCode(), emptyInJson::toString);
        assertTrue(emptyInJson.err().startsWith("JSON: id: must not be empty"), emptyInJson::toString);
        assertEquals(List.of("keep1", "keep2"), shared.ruleIds());
    }

    @Test
    void aRuleIdWithASlashIsRemovedAsItWasAdded() {
        CliRun add = shared.run("fault", "add", "--command", "insert", "--reset", "--id", "team/a");
        assertEquals(0, add.exitCode(), add::toString);
        assertEquals("team/a", add.out().strip());
        assertEquals(0, shared.run("fault", "add", "--command", "insert", "--reset", "--id", "team").exitCode());
        assertEquals(List.of("team/a", "team"), shared.ruleIds());

        CliRun remove = shared.run("fault", "remove", "team/a");
        assertEquals(0, remove.exitCode(), remove::toString);
        assertEquals(List.of("team"), shared.ruleIds(), "that rule, not the one named by the id's first part");
    }

    @Test
    void aMemberFaultShorterThanOneMillisecondIsAUsageErrorAndTakesNothingDown() throws Exception {
        for (String command : List.of("outage", "blackhole")) {
            for (String duration : List.of("0", "0s", "0.2ms")) {
                CliRun run = shared.run(command, "primary", "--duration", duration);
                assertEquals(2, run.exitCode(), run::toString);
                assertTrue(run.err().startsWith("Invalid value for option '--duration': '" + duration + "' is shorter than 1ms"),
                        run::toString);
                assertTrue(run.err().contains("Usage: blackpipe " + command), run::toString);
            }
        }
        assertTrue(shared.proxy().select("all").stream().noneMatch(l -> l.down() || l.blackholed()), "no member was faulted");
        CliRun shortest = shared.run("outage", "primary", "--duration", "1ms");
        assertEquals(0, shortest.exitCode(), shortest::toString);
        assertEquals("outage of primary for 1 ms", shortest.out().strip());
        Await.until(Duration.ofSeconds(10), "the 1 ms outage to end", () -> shared.proxy().select("all").stream().noneMatch(l -> l.down()));
    }

    @Test
    void anAdminUrlThatIsNoHttpUrlIsAUsageError() {
        CliRun run = run("fault", "list", "--admin", "ftp://127.0.0.1:9090");
        assertEquals(2, run.exitCode(), run::toString);
        assertTrue(run.err().startsWith("--admin 'ftp://127.0.0.1:9090'"), run::toString);
    }

    // ------------------------------------------------------------------ failures: exit 1

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"fault list", "fault add --command insert --reset", "fault clear", "stats", "members",
            "scenario status", "scenario stop", "failover", "connections reset --member all", "restore primary", "history",
            "history --follow", "reset"})
    void anUnreachableProxyExitsOneNamingTheUrl(String args) {
        try (HeldPort refusing = HeldPort.any()) { // bound, not listening: refused, and given to no process that would answer
            String url = "http://127.0.0.1:" + refusing.port();
            List<String> all = new ArrayList<>(List.of(args.split(" ")));
            all.addAll(List.of("--admin", url));
            CliRun run = run(all.toArray(new String[0]));
            assertEquals(1, run.exitCode(), run::toString);
            assertTrue(run.err().startsWith("blackpipe: cannot reach the blackpipe admin API at " + url), run::toString);
            assertFalse(run.err().contains("Usage:"), run::toString);
            assertEquals("", run.out(), run::toString);
        }
    }

    @Test
    void theAdminUrlMayComeWithoutSchemeOrWithATrailingSlash() {
        for (String url : List.of("127.0.0.1:" + shared.admin().port(), shared.url() + "/")) {
            CliRun run = run("fault", "list", "--admin", url, "--admin-token", TOKEN);
            assertEquals(0, run.exitCode(), run::toString);
            assertEquals("no rules", run.out().strip(), run::toString);
        }
    }

    @Test
    void aWrongOrMissingTokenExitsOneNaming401() {
        CliRun wrong = run("fault", "add", "--command", "insert", "--reset", "--admin", shared.url(), "--admin-token", "not-it");
        assertEquals(1, wrong.exitCode(), wrong::toString);
        assertTrue(wrong.err().contains("401"), wrong::toString);
        assertTrue(wrong.err().contains("--admin-token"), "the message says how to fix it: " + wrong);
        assertEquals(List.of(), shared.ruleIds(), "an unauthorized request changes nothing");

        CliRun missing = run("stats", "--admin", shared.url());
        assertEquals(1, missing.exitCode(), missing::toString);
        assertTrue(missing.err().contains("401"), missing::toString);
    }

    // ------------------------------------------------------------------ scenarios

    @Test
    void scenarioValidateIsOfflineAndNamesFileLineAndField() throws IOException {
        Path good = script("transient-blip.yaml");
        String nowhere = "http://127.0.0.1:" + closedPort();
        CliRun ok = run("scenario", "validate", good.toString(), "--admin", nowhere); // taken for wrappers, and unused
        assertEquals(0, ok.exitCode(), "validate asks no proxy, not even one --admin names: " + ok);
        ok = run("scenario", "validate", good.toString());
        assertEquals(0, ok.exitCode(), ok::toString);
        assertTrue(ok.out().startsWith(good + ": valid"), ok::toString);
        assertTrue(ok.out().contains("transient-blip"), ok::toString);

        Path bad = temp.resolve("bad.yaml");
        Files.writeString(bad, String.join("\n",
                "name: bad",
                "rules:",
                "  - configureFailPoint: failCommand",
                "    mode: {times: 1}",
                "    data:",
                "      failCommands: [insert]",
                "      resetConnection: please",
                "colour: red",
                ""));
        CliRun invalid = run("scenario", "validate", bad.toString());
        assertEquals(1, invalid.exitCode(), invalid::toString);
        List<String> errors = invalid.err().lines().toList();
        assertEquals(2, errors.size(), "every error, one a line: " + invalid);
        assertTrue(errors.get(0).startsWith(bad + ":7: rules[0].data.resetConnection: must be true or false"), invalid::toString);
        assertEquals(bad + ":8: colour: unknown field (expected name, description, rules, timeline)", errors.get(1));
        assertEquals("", invalid.out(), invalid::toString);
        CliRun refused = shared.run("scenario", "run", bad.toString());
        assertEquals(1, refused.exitCode(), refused::toString);
        assertEquals(List.of("blackpipe: " + errors.get(0), errors.get(1)), refused.err().lines().toList());
        assertEquals(List.of(), shared.ruleIds(), "a scenario with errors is refused whole");
        Path strangers = temp.resolve("strangers.yaml"); // valid offline: only the proxy knows which host:port is a member
        Files.writeString(strangers, "name: s\ntimeline:\n  - {at: 1s, outage: db9:27017}\n  - {at: 2s, outage: db8:27017}\n");
        CliRun unknownMembers = shared.run("scenario", "run", strangers.toString());
        assertEquals(1, unknownMembers.exitCode(), unknownMembers::toString);
        List<String> refusals = unknownMembers.err().lines().toList();
        assertEquals(2, refusals.size(), unknownMembers::toString);
        assertTrue(refusals.get(0).contains(": " + strangers + ":3: timeline[0].outage.member: no member 'db9:27017'"), unknownMembers::toString);
        assertTrue(refusals.get(1).startsWith(strangers + ":4: timeline[1].outage.member: no member 'db8:27017'"), unknownMembers::toString);

        CliRun missing = run("scenario", "validate", temp.resolve("absent.yaml").toString());
        assertEquals(1, missing.exitCode(), missing::toString);
        assertTrue(missing.err().contains("absent.yaml") && missing.err().contains("no such file"), missing::toString);
    }

    @Test
    void scenarioRunStatusAndStop() {
        Path file = script("transient-blip.yaml");
        CliRun started = shared.run("scenario", "run", file.toString());
        assertEquals(0, started.exitCode(), started::toString);
        assertTrue(started.out().contains("'transient-blip'") && started.out().contains("running"), started::toString);
        assertEquals(List.of("blip"), shared.ruleIds(), "the scenario's rule is live");

        CliRun status = shared.run("scenario", "status");
        assertEquals(0, status.exitCode(), status::toString);
        assertEquals("state: running", status.lines().get(0), status::toString);
        assertTrue(status.out().contains("scenario: transient-blip"), status::toString);
        assertTrue(status.lines().get(2).matches("started: \\S+ \\(\\d+ ms ago\\)"), status::toString);
        assertTrue(status.out().contains("steps left: 0\nin force until an `end` step or `blackpipe scenario stop`"),
                status::toString);
        assertTrue(status.lines().contains("rules: 1 at its start, 1 of its own in force now"), status::toString);
        CliRun statusJson = shared.run("scenario", "status", "--json");
        assertEquals("running", BsonDocument.parse(statusJson.out()).getString("state").getValue(), statusJson::toString);

        CliRun stopped = shared.run("scenario", "stop");
        assertEquals(0, stopped.exitCode(), stopped::toString);
        assertEquals("scenario 'transient-blip' is stopped", stopped.out().strip(), stopped::toString);
        assertEquals(List.of(), shared.ruleIds(), "stopping removed the scenario's rule");
        CliRun after = shared.run("scenario", "status");
        assertEquals("state: stopped", after.lines().get(0), after::toString);
        // its elapsed time stopped with it: the line says how long it ran (it said "N ms ago", N frozen at the stop)
        assertTrue(after.lines().get(2).matches("started: \\S+, ended: \\S+ \\(ran \\d+ ms\\)"), after::toString);
        assertTrue(after.lines().contains("rules: 1 at its start, 0 of its own in force now"), after::toString);
        BsonDocument afterJson = BsonDocument.parse(shared.run("scenario", "status", "--json").out());
        assertFalse(java.time.Instant.parse(afterJson.getString("endedAt").getValue())
                .isBefore(java.time.Instant.parse(afterJson.getString("startedAt").getValue())), afterJson::toJson);
    }

    /** "rules: 1" read wrong once an add step had put a second rule: the status counts those in force too. */
    @Test
    void scenarioStatusCountsTheRulesItsAddStepsPut() throws IOException {
        Path file = temp.resolve("adds.yaml");
        Files.writeString(file, String.join("\n",
                "name: adds",
                "rules:",
                "  - {id: first, configureFailPoint: failCommand, mode: alwaysOn, data: {failCommands: [insert], errorCode: 2}}",
                "timeline:",
                "  - at: 0s",
                "    add: {id: second, configureFailPoint: failCommand, mode: alwaysOn, data: {failCommands: [find], errorCode: 2}}",
                "  - at: 0s",
                "    add: {id: third, configureFailPoint: failCommand, mode: alwaysOn, data: {failCommands: [update], errorCode: 2}}",
                "  - at: 0s",
                "    remove: first",
                ""));
        CliRun started = shared.run("scenario", "run", file.toString());
        assertEquals(0, started.exitCode(), started::toString);
        CliRun status = shared.run("scenario", "status");
        assertTrue(status.lines().contains("rules: 1 at its start, 2 of its own in force now"), status::toString);
        assertEquals(2, BsonDocument.parse(shared.run("scenario", "status", "--json").out()).getInt32("rulesInForce").getValue());
        assertEquals(List.of("second", "third"), shared.ruleIds().stream().sorted().toList());
        assertEquals(0, shared.run("scenario", "stop").exitCode());
    }

    @Test
    void aScenarioTheProxyRefusesExitsOneNamingTheFileAndLine() throws IOException {
        Path file = temp.resolve("unknown-member.yaml");
        Files.writeString(file, String.join("\n",
                "name: unknown-member",
                "timeline:",
                "  - at: 1s",
                "    outage: {member: 'db9:27017', duration: 1s}",
                ""));
        CliRun offline = run("scenario", "validate", file.toString());
        assertEquals(0, offline.exitCode(), "offline, member names cannot be checked: " + offline);

        CliRun run = shared.run("scenario", "run", file.toString());
        assertEquals(1, run.exitCode(), run::toString);
        assertTrue(run.err().contains("400"), run::toString);
        assertTrue(run.err().contains(file + ":4: timeline[0].outage.member: no member 'db9:27017'"), run::toString);
        assertNotEquals("running", shared.proxy().scenarios().status().getString("state").getValue(), "nothing started");

        Path broken = temp.resolve("broken.yaml");
        Files.writeString(broken, "name: broken\nrules: [\n");
        CliRun syntax = shared.run("scenario", "run", broken.toString());
        assertEquals(1, syntax.exitCode(), syntax::toString);
        assertTrue(syntax.err().startsWith("blackpipe: " + broken + ":"), "checked before anything is sent: " + syntax);
    }

    // ------------------------------------------------------------------ members, connections, failover, outage

    @Test
    void membersFailoverOutageBlackholeRestoreAndConnectionReset() throws Exception {
        // three simulated members over one scripted node: a failover and outages without touching the lane's deployment
        try (ScriptedMongod node = ScriptedMongod.start();
             AdminRig rig = AdminRig.start(ProxyConfig.embedded("mongodb://" + node.address() + "/?replicaSet=" + ScriptedMongod.SET_NAME)
                     .withSimulatedMembers(3))) {
            String first = rig.proxy().members().get(0).advertised().toString();
            String second = rig.proxy().members().get(1).advertised().toString();

            CliRun members = rig.run("members");
            assertEquals(0, members.exitCode(), members::toString);
            assertEquals(List.of("UPSTREAM", "ADVERTISED", "ROLE", "STATE", "LATENCY", "BANDWIDTH", "IDLE", "CONNECTIONS"),
                    List.of(members.lines().get(0).trim().split(" {2,}")), members::toString);
            assertEquals(4, members.lines().size(), members::toString);
            assertEquals("primary", roleOf(members, first), members::toString);

            CliRun failover = rig.run("failover");
            assertEquals(0, failover.exitCode(), failover::toString);
            CliRun afterFailover = rig.run("members");
            assertNotEquals("primary", roleOf(afterFailover, first), afterFailover::toString);
            assertEquals(1, afterFailover.lines().stream().filter(l -> l.contains("  primary  ")).count(), afterFailover::toString);

            CliRun electing = rig.run("failover", "--election", "1m");
            assertEquals(0, electing.exitCode(), electing::toString);
            assertEquals("failover started: no primary for 60000 ms", electing.out().strip());
            assertEquals(0, rig.run("members").lines().stream().filter(l -> l.contains("  primary  ")).count(),
                    "no primary while the set elects");
            CliRun duringIt = rig.run("failover");
            assertEquals(1, duringIt.exitCode(), duringIt::toString);
            assertTrue(duringIt.err().contains("409") && duringIt.err().contains("an election is under way"), duringIt::toString);
            CliRun noPrimary = rig.run("outage", "primary");
            assertEquals(1, noPrimary.exitCode(), "a role no member has now is the proxy's state, not a usage error: " + noPrimary);
            assertTrue(noPrimary.err().contains(": no member is primary now (the members: ") && !noPrimary.err().contains("Usage:"), noPrimary::toString);
            CliRun noPrimaryToReset = rig.run("connections", "reset", "--member", "primary"); // it said "reset 0 connections", exit 0
            assertEquals(1, noPrimaryToReset.exitCode(), noPrimaryToReset::toString);
            assertTrue(noPrimaryToReset.err().contains("409") && noPrimaryToReset.err().contains("no member is primary now"), noPrimaryToReset::toString);
            assertEquals(2, rig.run("failover", "--election", "soon").exitCode(), "a bad duration is a usage error");
            rig.proxy().reset();
            CliRun rollback = rig.run("failover", "--rollback", "5s");
            assertEquals(0, rollback.exitCode(), rollback::toString);
            assertEquals("failover started; rolled back 0 documents, what the old primary's writes below majority did in its"
                    + " last 5000 ms", rollback.out().strip(), "the scripted node took no write");
            CliRun tooFar = rig.run("failover", "--rollback", "61s");
            assertEquals(2, tooFar.exitCode(), tooFar::toString);
            assertTrue(tooFar.err().contains("--rollback: must be from 0 (nothing rolled back) to 60s, got 61000ms"), tooFar::toString);
            rig.proxy().reset();
            assertEquals("primary", roleOf(rig.run("members"), first), "a reset ends the election with the first member primary");

            CliRun outage = rig.run("outage", second, "--duration", "30s");
            assertEquals(0, outage.exitCode(), outage::toString);
            assertEquals("outage of " + second + " for 30000 ms", outage.out().strip());
            assertEquals("outage", stateOf(rig.run("members"), second));
            CliRun restore = rig.run("restore", second);
            assertEquals(0, restore.exitCode(), restore::toString);
            assertEquals("restored " + second, restore.out().strip());
            assertEquals("up", stateOf(rig.run("members"), second));

            CliRun blackhole = rig.run("blackhole", second);
            assertEquals(0, blackhole.exitCode(), blackhole::toString);
            assertEquals("blackhole of " + second + " until restore", blackhole.out().strip());
            assertEquals("blackhole", stateOf(rig.run("members", "--json"), second));
            assertEquals(0, rig.run("restore", "all").exitCode());
            assertEquals("up", stateOf(rig.run("members"), second));

            CliRun latency = rig.run("latency", second, "--delay", "200ms", "--jitter", "10ms", "--duration", "1m");
            assertEquals(0, latency.exitCode(), latency::toString);
            assertEquals("latency of 200 ms +/- 10 ms towards the clients on " + second + " for 60000 ms", latency.out().strip());
            assertEquals("200ms+/-10ms(replies)", cellOf(rig.run("members"), second, 4));
            assertEquals("-", cellOf(rig.run("members"), first, 4));
            assertEquals(new MemberLatency(200, 10), latencyOf(rig.run("members", "--json"), second));
            assertEquals("up", stateOf(rig.run("members"), second), "a slow member is up");
            assertEquals(0, rig.run("latency", second, "--delay", "1s").exitCode(), "a new latency replaces the last");
            assertEquals("1000ms(replies)", cellOf(rig.run("members"), second, 4));
            assertEquals("latency of 300 ms towards the member on " + second + " until restore",
                    rig.run("latency", second, "--delay", "300ms", "--direction", "requests").out().strip());
            eachDirectionIsListedAndABadOneRefused(rig, second, 4, "latencyDirection", "300ms", "latency", "--delay", "300ms");
            assertEquals(0, rig.run("restore", second).exitCode());
            assertEquals("-", cellOf(rig.run("members"), second, 4));
            assertEquals(new MemberLatency(0, 0), latencyOf(rig.run("members", "--json"), second));
            CliRun noDelay = rig.run("latency", second);
            assertEquals(2, noDelay.exitCode(), noDelay::toString);
            assertTrue(noDelay.err().contains("Missing required option: '--delay=DURATION'") && noDelay.err().contains("Usage:"), noDelay::toString);
            CliRun zero = rig.run("latency", second, "--delay", "0");
            assertEquals(2, zero.exitCode(), zero::toString);
            assertTrue(zero.err().contains("--delay: a latency of 0 without a jitter slows nothing") && zero.err().contains("Usage:"), zero::toString);
            assertEquals(2, rig.run("latency", second, "--delay", "soon").exitCode(), "a bad duration is a usage error");
            assertEquals(2, rig.run("latency", second, "--delay", "1s", "--duration", "0").exitCode(), "0 would mean until restored");
            CliRun tooLong = rig.run("latency", second, "--delay", "1500m");
            assertEquals(2, tooLong.exitCode(), tooLong::toString);
            assertTrue(tooLong.err().contains("--delay: must be from 0 to 24h, got 90000000ms"), tooLong::toString);
            CliRun nobody = rig.run("latency", "db9:27017", "--delay", "1s");
            assertEquals(2, nobody.exitCode(), nobody::toString);
            assertTrue(nobody.err().startsWith("MEMBER: no member 'db9:27017'") && nobody.err().contains("Usage:"), nobody::toString);

            CliRun bandwidth = rig.run("bandwidth", second, "--rate", "64KiB/s", "--duration", "1m");
            assertEquals(0, bandwidth.exitCode(), bandwidth::toString);
            assertEquals("bandwidth of 64 KiB/s each way on each connection of " + second + " for 60000 ms", bandwidth.out().strip());
            assertEquals("64KiB/s(both)", cellOf(rig.run("members"), second, 5));
            assertEquals("-", cellOf(rig.run("members"), first, 5));
            assertEquals(64 * 1024, listedMember(rig.run("members", "--json"), second).getNumber("bandwidthBytesPerSecond").longValue());
            assertEquals(0, rig.run("bandwidth", second, "--rate", "1500").exitCode(), "a new bandwidth replaces the last; bytes a second");
            assertEquals("1500B/s(both)", cellOf(rig.run("members"), second, 5));
            assertEquals("bandwidth of 1 MB/s towards the clients on each connection of " + second + " until restore",
                    rig.run("bandwidth", second, "--rate", "1MB/s", "--direction", "replies").out().strip());
            eachDirectionIsListedAndABadOneRefused(rig, second, 5, "bandwidthDirection", "1MB/s", "bandwidth", "--rate", "1MB/s");
            assertEquals(0, rig.run("restore", second).exitCode());
            assertEquals("-", cellOf(rig.run("members"), second, 5));
            CliRun noRate = rig.run("bandwidth", second);
            assertEquals(2, noRate.exitCode(), noRate::toString);
            assertTrue(noRate.err().contains("Missing required option: '--rate=RATE'") && noRate.err().contains("Usage:"), noRate::toString);
            CliRun badRate = rig.run("bandwidth", second, "--rate", "fast");
            assertEquals(2, badRate.exitCode(), badRate::toString);
            assertTrue(badRate.err().contains("Invalid value for option '--rate': 'fast' is not a rate such as 64KiB/s")
                    && badRate.err().contains("Usage:"), badRate::toString);
            assertEquals(2, rig.run("bandwidth", second, "--rate", "0").exitCode(), "under 1 B/s is a usage error");
            assertEquals(2, rig.run("bandwidth", second, "--rate", "1MB/s", "--duration", "0").exitCode(), "0 would mean until restored");
            CliRun nobodyNarrow = rig.run("bandwidth", "db9:27017", "--rate", "1MB/s");
            assertEquals(2, nobodyNarrow.exitCode(), nobodyNarrow::toString);
            assertTrue(nobodyNarrow.err().startsWith("MEMBER: no member 'db9:27017'") && nobodyNarrow.err().contains("Usage:"), nobodyNarrow::toString);
            assertEquals("-", cellOf(rig.run("members"), second, 5), "a refused bandwidth changes nothing");

            CliRun idle = rig.run("idle-timeout", second, "--after", "4m", "--then", "reset", "--duration", "60m");
            assertEquals(0, idle.exitCode(), idle::toString);
            assertEquals("idle timeout (idle 240000 ms, then reset) on each connection of " + second + " for 3600000 ms", idle.out().strip());
            assertEquals("240000ms/reset", cellOf(rig.run("members"), second, 6));
            assertEquals("-", cellOf(rig.run("members"), first, 6));
            assertEquals(0, rig.run("idle-timeout", second, "--after", "30s").exitCode(), "a new one replaces the last; drop by default");
            assertEquals("30000ms/drop", cellOf(rig.run("members"), second, 6));
            assertEquals(0, rig.run("restore", second).exitCode());
            assertEquals("-", cellOf(rig.run("members"), second, 6));
            CliRun noAfter = rig.run("idle-timeout", second);
            assertEquals(2, noAfter.exitCode(), noAfter::toString);
            assertTrue(noAfter.err().contains("Missing required option: '--after=DURATION'") && noAfter.err().contains("Usage:"), noAfter::toString);
            CliRun badThen = rig.run("idle-timeout", second, "--after", "30s", "--then", "close");
            assertEquals(2, badThen.exitCode(), badThen::toString);
            assertTrue(badThen.err().contains("--then: must be drop or reset, got 'close'") && badThen.err().contains("Usage:"), badThen::toString);
            assertEquals(2, rig.run("idle-timeout", second, "--after", "0").exitCode(), "at least 1ms");
            CliRun tooIdle = rig.run("idle-timeout", second, "--after", "1500m");
            assertEquals(2, tooIdle.exitCode(), tooIdle::toString);
            assertTrue(tooIdle.err().contains("--after: must be from 1ms to 24h, got 90000000ms"), tooIdle::toString);
            CliRun nobodyIdle = rig.run("idle-timeout", "db9:27017", "--after", "30s");
            assertEquals(2, nobodyIdle.exitCode(), nobodyIdle::toString);
            assertTrue(nobodyIdle.err().startsWith("MEMBER: no member 'db9:27017'") && nobodyIdle.err().contains("Usage:"), nobodyIdle::toString);
            assertEquals("-", cellOf(rig.run("members"), second, 6), "a refused idle timeout changes nothing");

            CliRun restart = rig.run("restart", second, "--quiesce", "60m", "--down", "5s");
            assertEquals(0, restart.exitCode(), restart::toString);
            assertEquals("restart of " + second + " (quiesce 3600000 ms, down 5000 ms)", restart.out().strip());
            assertEquals("quiescing", stateOf(rig.run("members"), second));
            assertEquals("quiescing", stateOf(rig.run("members", "--json"), second));
            assertEquals(0, rig.run("restore", second).exitCode(), "a restore calls the restart off");
            assertEquals("up", stateOf(rig.run("members"), second));
            CliRun quick = rig.run("restart", second, "--quiesce", "0", "--down", "60m");
            assertEquals("restart of " + second + " (quiesce 0 ms, down 3600000 ms)", quick.out().strip(), "no quiesce, as before 5.0");
            assertEquals("restarting", stateOf(rig.run("members"), second), "down: it exited at once");
            assertEquals(0, rig.run("restore", second).exitCode());
            assertEquals("up", stateOf(rig.run("members"), second));
            assertEquals(2, rig.run("restart", second, "--down", "0").exitCode(), "down at least 1ms");
            CliRun longQuiesce = rig.run("restart", second, "--quiesce", "1500m");
            assertEquals(2, longQuiesce.exitCode(), longQuiesce::toString);
            assertTrue(longQuiesce.err().contains("--quiesce: must be from 0 to 24h, got 90000000ms") && longQuiesce.err().contains("Usage:"),
                    longQuiesce::toString);
            CliRun nobodyRestarts = rig.run("restart", "db9:27017");
            assertEquals(2, nobodyRestarts.exitCode(), nobodyRestarts::toString);
            assertTrue(nobodyRestarts.err().startsWith("MEMBER: no member 'db9:27017'") && nobodyRestarts.err().contains("Usage:"), nobodyRestarts::toString);
            assertEquals("up", stateOf(rig.run("members"), second), "a refused restart changes nothing");

            // "secondary" takes down every secondary at once, as the help now says (one of them: its host:port)
            assertTrue(rig.run("outage", "--help").out().contains("secondary (every secondary)"));
            assertEquals(0, rig.run("outage", "secondary").exitCode());
            CliRun bothDown = rig.run("members");
            for (var member : rig.proxy().members()) {
                String advertised = member.advertised().toString();
                assertEquals(roleOf(bothDown, advertised).equals("secondary") ? "outage" : "up", stateOf(bothDown, advertised), bothDown::toString);
            }
            assertEquals(2, bothDown.lines().stream().filter(l -> l.contains("  outage  ")).count(), bothDown::toString);
            assertEquals(0, rig.run("restore", "all").exitCode());

            CliRun unknown = rig.run("outage", "db9:27017");
            assertEquals(2, unknown.exitCode(), unknown::toString);
            assertTrue(unknown.err().startsWith("MEMBER: no member 'db9:27017' (known: primary, secondary, all, ") && unknown.err().contains("Usage:"), unknown::toString);

            String uri = rig.proxy().connectionString() + "&socketTimeoutMS=5000&connectTimeoutMS=5000";
            try (MongoClient client = MongoClients.create(MongoClientSettings.builder()
                    .applyConnectionString(new ConnectionString(uri))
                    .applyToClusterSettings(b -> b.serverSelectionTimeout(10, TimeUnit.SECONDS)).build())) {
                client.getDatabase("admin").runCommand(new Document("ping", 1));
                Await.until(Duration.ofSeconds(10), "connections to every member", () ->
                        rig.proxy().members().stream().allMatch(m -> rig.proxy().openConnections(m.upstream()) > 0));
                CliRun connections = rig.run("connections", "list");
                assertEquals(0, connections.exitCode(), connections::toString);
                assertTrue(Integer.parseInt(row(connections, rig.proxy().members().get(0).upstream().toString())
                        .orElseThrow().get(7)) > 0, connections::toString);

                CliRun reset = rig.run("connections", "reset", "--member", "all");
                assertEquals(0, reset.exitCode(), reset::toString);
                assertTrue(reset.out().matches("reset (1 connection|[2-9][0-9]* connections|[1-9][0-9]+ connections) of all\\R"), reset::toString);
                CliRun noSuch = rig.run("connections", "reset", "--member", "db9:27017");
                assertEquals(2, noSuch.exitCode(), noSuch::toString);
                assertTrue(noSuch.err().startsWith("--member: no member 'db9:27017' (known: ") && noSuch.err().contains("Usage:"), noSuch::toString);
            }
        }
    }

    @Test
    void failoverAuthenticatesWithTheUpstreamUrisUserAndPrintsWhyWhenItCannot() throws Exception {
        // a two-member scripted set with access control: replSetStepDown needs an authenticated user
        ScriptedScramServer users = ScriptedScramServer.builder().user("admin", "alice", "right:pw").build();
        try (ScriptedMongod primary = ScriptedMongod.builder().accessControl(users).start();
             ScriptedMongod secondary = ScriptedMongod.builder().accessControl(users).secondary().primary(primary.address()).start()) {
            primary.setAdvertisedHosts(List.of(primary.address(), secondary.address()));
            secondary.setAdvertisedHosts(List.of(primary.address(), secondary.address()));
            String set = "@" + primary.address() + "/?replicaSet=" + ScriptedMongod.SET_NAME;

            try (AdminRig wrong = AdminRig.start(ProxyConfig.embedded("mongodb://alice:wrong" + set))) {
                CliRun failover = wrong.run("failover");
                assertEquals(1, failover.exitCode(), failover::toString);
                assertTrue(failover.err().startsWith("blackpipe: POST " + wrong.url() + "/api/v1/failover answered 409"), failover::toString);
                assertTrue(failover.err().contains(": failover: authentication as 'alice' on admin (SCRAM-SHA-256) failed:"
                        + " AuthenticationFailed (18): Authentication failed. (primary " + primary.address() + ")"), failover::toString);
                assertEquals(List.of(), primary.stepDowns());
                assertEquals("primary", roleOf(wrong.run("members"), wrong.proxy().members().get(0).advertised().toString()),
                        "nothing changed, and the proxy still answers");
            }
            try (AdminRig right = AdminRig.start(ProxyConfig.embedded("mongodb://alice:right%3Apw" + set))) {
                CliRun failover = right.run("failover");
                assertEquals(0, failover.exitCode(), failover::toString);
                assertEquals(List.of(new ScriptedMongod.StepDownRequest("alice@admin", "SCRAM-SHA-256")), primary.stepDowns());
            }
        }
    }

    private static String roleOf(CliRun members, String advertised) {
        return cellOf(members, advertised, 2);
    }

    private static String stateOf(CliRun members, String advertised) {
        if (members.out().trim().startsWith("{")) {
            return listedMember(members, advertised).getString("state").getValue();
        }
        return cellOf(members, advertised, 3);
    }

    private record MemberLatency(long delayMillis, long jitterMillis) {
    }

    /** The member {@code advertised} in the output of {@code members --json}. */
    /**
     * {@code fault} (its command and {@code arguments}) on {@code member} in each direction: the members table lists it as
     * "{@code cell}(direction)" in {@code column}, the JSON in {@code field}; a bad direction is a usage error that changes nothing.
     */
    private static void eachDirectionIsListedAndABadOneRefused(AdminRig rig, String member, int column, String field, String cell,
                                                               String... fault) {
        for (String way : List.of("replies", "requests", "both")) {
            CliRun run = rig.run(withArguments(fault, member, "--direction", way));
            assertEquals(0, run.exitCode(), run::toString);
            assertEquals(cell + "(" + way + ")", cellOf(rig.run("members"), member, column));
            assertEquals(way, listedMember(rig.run("members", "--json"), member).getString(field).getValue());
        }
        CliRun bad = rig.run(withArguments(fault, member, "--direction", "upstream"));
        assertEquals(2, bad.exitCode(), bad::toString);
        assertTrue(bad.err().contains("--direction: must be both, replies or requests, got 'upstream'") && bad.err().contains("Usage:"),
                bad::toString);
        assertEquals(cell + "(both)", cellOf(rig.run("members"), member, column), "a refused direction changes nothing");
    }

    /** {@code fault}'s command, {@code member}, the rest of {@code fault}, then {@code more}. */
    private static String[] withArguments(String[] fault, String member, String... more) {
        List<String> args = new java.util.ArrayList<>(List.of(fault[0], member));
        args.addAll(List.of(fault).subList(1, fault.length));
        args.addAll(List.of(more));
        return args.toArray(new String[0]);
    }

    private static BsonDocument listedMember(CliRun membersJson, String advertised) {
        return BsonDocument.parse(membersJson.out()).getArray("members").stream().map(BsonValue::asDocument)
                .filter(d -> d.getString("advertised").getValue().equals(advertised)).findFirst().orElseThrow();
    }

    private static MemberLatency latencyOf(CliRun membersJson, String advertised) {
        BsonDocument member = listedMember(membersJson, advertised);
        return new MemberLatency(member.getNumber("latencyMS").longValue(), member.getNumber("jitterMS").longValue());
    }

    private static String cellOf(CliRun members, String advertised, int column) {
        return members.lines().stream().map(l -> List.of(l.trim().split(" {2,}"))).filter(c -> c.get(1).equals(advertised))
                .map(c -> c.get(column)).findFirst().orElseThrow(() -> new AssertionError(advertised + " not in " + members));
    }

    /** A command line's words as a shell splits them: at spaces, but not inside single or double quotes, which go. */
    private static List<String> shellWords(String line) {
        List<String> words = new ArrayList<>();
        StringBuilder word = new StringBuilder();
        boolean inWord = false;
        char quote = 0;
        for (char c : line.toCharArray()) {
            if (quote != 0) {
                if (c == quote) {
                    quote = 0;
                } else {
                    word.append(c);
                }
            } else if (c == '\'' || c == '"') {
                quote = c;
                inWord = true;
            } else if (Character.isWhitespace(c)) {
                if (inWord) {
                    words.add(word.toString());
                    word.setLength(0);
                    inWord = false;
                }
            } else {
                word.append(c);
                inWord = true;
            }
        }
        if (inWord) {
            words.add(word.toString());
        }
        return words;
    }

    @Test
    void theReadmesFaultAddExamplesMakeRules() throws IOException {
        Path readme = script("README.md").getParent().getParent().resolve("README.md");
        String text = Files.readString(readme);
        int start = text.indexOf("## Control a running proxy");
        assertTrue(start >= 0, "README has a 'Control a running proxy' section");
        String section = text.substring(start, text.indexOf("\n## ", start + 1));
        List<String> examples = section.lines().map(String::strip)
                .filter(l -> l.startsWith("blackpipe fault add --"))
                .map(l -> l.replaceAll("\\s+#.*$", ""))
                .toList();
        assertTrue(examples.size() >= 5, () -> "examples: " + examples);
        for (String example : examples) {
            List<String> args = shellWords(example.substring("blackpipe ".length()));
            CliRun run = shared.run(args.toArray(new String[0]));
            assertEquals(0, run.exitCode(), () -> example + "\n" + run);
        }
        assertEquals(examples.size(), shared.ruleIds().size(), "every example added one rule");
    }

    /** docker-compose.yml's app only updates (updateOne, upsert): its comment must break what the README's sidecar example breaks. */
    @Test
    void theComposeFilesFaultExampleIsTheReadmesAndFaultsACommandTheAppSends() throws IOException {
        Path root = script("README.md").getParent().getParent();
        Pattern faultAdd = Pattern.compile("\\./blackpipe (fault add [^#\\n]*?)\\s*(#|\\n)");
        Matcher inCompose = faultAdd.matcher(Files.readString(root.resolve("docker-compose.yml")));
        String readme = Files.readString(root.resolve("README.md"));
        Matcher inReadme = faultAdd.matcher(readme.substring(readme.indexOf("## Run as a sidecar")));
        assertTrue(inCompose.find() && inReadme.find(), "both show a fault add");
        assertEquals(inReadme.group(1), inCompose.group(1));
        assertTrue(Files.readString(root.resolve("docker-compose.yml")).contains("db.counters.updateOne("), "the app sends update");
        assertTrue(inCompose.group(1).contains("--command update"), inCompose.group(1));
        CliRun run = shared.run(inCompose.group(1).split(" "));
        assertEquals(0, run.exitCode(), run::toString);
        // run from a fresh clone, where ./blackpipe builds it: no proxy/target/blackpipe.jar is there before
        assertFalse(readme.substring(readme.indexOf("## Run as a sidecar")).contains("java -jar proxy/target"), "README");
    }

    /**
     * The compose file publishes the admin port alone: a member port on the host collided with a MongoDB of the host's
     * own on 27017 (docker compose up failed, "port is already allocated"), and served nothing there (hello names
     * blackpipe:27017-27019).
     */
    @Test
    void theComposeFilePublishesOnlyTheAdminPort() throws IOException {
        String compose = Files.readString(script("README.md").getParent().getParent().resolve("docker-compose.yml"));
        List<String> published = Pattern.compile("(?m)^\\s*- \"(\\d[^\"]*)\"\\s*$").matcher(compose).results()
                .map(m -> m.group(1)).toList();
        assertEquals(List.of("127.0.0.1:9090:9090"), published);
    }

    // ------------------------------------------------------------------ help and completion

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"fault", "fault add", "fault list", "fault remove", "fault clear", "scenario", "scenario run",
            "scenario validate", "scenario status", "scenario stop", "stats", "members", "connections", "connections list",
            "connections reset", "failover", "outage", "blackhole", "restore", "history", "reset", "expect", "completion"})
    void everyCommandHasHelp(String command) {
        for (String flag : List.of("--help", "-h")) {
            List<String> args = new ArrayList<>(List.of(command.split(" ")));
            args.add(flag);
            CliRun run = run(args.toArray(new String[0]));
            assertEquals(0, run.exitCode(), run::toString);
            assertTrue(run.out().startsWith("Usage: blackpipe " + command), run::toString);
            assertEquals("", run.err(), run::toString);
            boolean talksToAProxy = !command.equals("completion") && !command.equals("scenario validate")
                    && !command.equals("fault") && !command.equals("scenario") && !command.equals("connections");
            assertEquals(talksToAProxy, run.out().contains("--admin=URL") && run.out().contains("BLACKPIPE_ADMIN_TOKEN"), run::toString);
        }
        CliRun help = run("help", command.split(" ")[0]);
        assertEquals(0, help.exitCode(), help::toString);
    }

    @Test
    void completionPrintsABashScriptForEveryCommand() {
        CliRun run = run("completion");
        assertEquals(0, run.exitCode(), run::toString);
        assertTrue(run.out().startsWith("#!/usr/bin/env bash"), run::toString);
        assertTrue(run.out().contains("blackpipe"), run::toString);
        assertTrue(run.out().contains("complete -F _complete_blackpipe"), "registers the completion function");
        for (String word : List.of("fault", "scenario", "stats", "members", "connections", "failover", "outage", "--admin-token",
                "--drop-reply", "--error-code", "history", "--since", "--follow", "reset")) {
            assertTrue(run.out().contains(word), () -> word + " is completed");
        }
        assertEquals("", run.err());
    }
}
