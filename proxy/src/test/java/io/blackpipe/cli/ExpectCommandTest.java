package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.blackpipe.admin.AdminServer;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.testing.CommandLog;
import io.blackpipe.testing.HeldPort;
import io.blackpipe.testing.UpstreamLane;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** `blackpipe expect`: a CI job's check of what the proxy counted, against a real driver's retried insert. */
class ExpectCommandTest {

    @Test
    void theCountsOfARetriedInsertHoldAndAWrongOneFailsNamingWhatWasCounted() {
        String db = UpstreamLane.freshDatabaseName("expect");
        try (AdminRig rig = AdminRig.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            assertEquals(0, rig.run("fault", "add", "--command", "insert", "--reset", "--times", "1").exitCode());
            CommandLog log = new CommandLog();
            String uri = CommandLog.withOptions(rig.proxy().connectionString(), "retryWrites=true");
            try (MongoClient client = MongoClients.create(log.driverOn(uri).build());
                 MongoClient direct = UpstreamLane.directClient()) {
                client.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1)); // reset, then retried
                assertEquals(2, log.startedCount("insert"), "the driver sent the insert twice");
                assertEquals(1, direct.getDatabase(db).getCollection("c").countDocuments(), "the server holds it once");
            }

            CliRun holds = rig.run("expect", "--attempts", "insert=2", "--retries", "insert=1", "--outcomes", "insert:network_error=1",
                    "--outcomes", "insert:ok=1", "--faults", "resetConnection=1", "--faults", "resetConnection:insert>=1",
                    "--faults", "dropReply<=0", "--wait", "10s");
            assertEquals(0, holds.exitCode(), holds::toString);
            assertEquals(List.of("ok    attempts insert=2 (counted 2)", "ok    retries insert=1 (counted 1)",
                    "ok    outcomes insert:network_error=1 (counted 1)", "ok    outcomes insert:ok=1 (counted 1)",
                    "ok    faults resetConnection=1 (counted 1)", "ok    faults resetConnection:insert>=1 (counted 1)",
                    "ok    faults dropReply<=0 (counted 0)"), holds.lines());

            CliRun fails = rig.run("expect", "--retries", "insert==2", "--attempts", "insert>=2", "--faults", "resetConnection:find=1");
            assertEquals(1, fails.exitCode(), fails::toString);
            assertEquals(List.of("ok    attempts insert>=2 (counted 2)", "FAIL  retries insert=2 (counted 1)",
                    "FAIL  faults resetConnection:find=1 (counted 0)"), fails.lines());
        }
    }

    /**
     * Two test cases against one proxy, as a CI job runs them against one sidecar: the second counts from the
     * `stats --json` saved before it, so it sees its own retried insert alone, where the proxy has counted both.
     */
    @Test
    void aBaselineSavedBeforeATestCaseCountsThatTestCaseAlone(@TempDir Path dir) throws Exception {
        String db = UpstreamLane.freshDatabaseName("expectBaseline");
        try (AdminRig rig = AdminRig.start(ProxyConfig.embedded(UpstreamLane.uri()));
             MongoClient client = MongoClients.create(CommandLog.withOptions(rig.proxy().connectionString(), "retryWrites=true"))) {
            Path before = dir.resolve("before.json");
            for (int testCase = 1; testCase <= 2; testCase++) {
                CliRun saved = rig.run("stats", "--json");
                assertEquals(0, saved.exitCode(), saved::toString);
                Files.writeString(before, saved.out());
                assertEquals(0, rig.run("fault", "add", "--command", "insert", "--reset", "--times", "1").exitCode());
                client.getDatabase(db).getCollection("c").insertOne(new Document("_id", testCase)); // reset, then retried

                CliRun since = rig.run("expect", "--baseline", before.toString(), "--attempts", "insert=2", "--retries", "insert=1",
                        "--outcomes", "insert:network_error=1", "--faults", "resetConnection:insert=1", "--wait", "10s");
                assertEquals(0, since.exitCode(), since::toString);
                assertEquals(List.of("ok    attempts insert=2 (counted 2)", "ok    retries insert=1 (counted 1)",
                        "ok    outcomes insert:network_error=1 (counted 1)", "ok    faults resetConnection:insert=1 (counted 1)"),
                        since.lines(), "test case " + testCase);

                CliRun table = rig.run("stats", "--baseline", before.toString());
                assertEquals(0, table.exitCode(), table::toString);
                List<List<String>> rows = table.lines().stream().skip(1).map(line -> List.of(line.trim().split(" {2,}"))).toList();
                assertEquals(1, rows.stream().filter(row -> row.get(0).equals("insert")).count(), table::toString);
                List<String> insert = rows.stream().filter(row -> row.get(0).equals("insert")).findFirst().orElseThrow();
                assertEquals(List.of("2", "1", "network_error=1 ok=1", "resetConnection=1"), insert.subList(2, 6),
                        "its own insert alone: " + table);
            }
            CliRun whole = rig.run("stats");
            assertTrue(whole.lines().stream().anyMatch(line -> line.trim().matches("insert +\\S+ +4 +2 .*")), whole::toString);
            Path now = dir.resolve("now.json");
            Files.writeString(now, rig.run("stats", "--json").out());
            CliRun nothingSince = rig.run("stats", "--baseline", now.toString());
            assertEquals(List.of("no commands counted since " + now), nothingSince.lines(), nothingSince::toString);
            CliRun withJson = rig.run("stats", "--json", "--baseline", now.toString());
            assertEquals(2, withJson.exitCode(), withJson::toString);
            assertTrue(withJson.err().contains("--baseline: not with --json"), withJson::toString);
            CliRun fromTheStart = rig.run("expect", "--attempts", "insert=4", "--retries", "insert=2");
            assertEquals(0, fromTheStart.exitCode(), fromTheStart::toString);
        }
    }

    /**
     * A baseline that holds more than the proxy counted was saved from another proxy, or before this one started again:
     * a failure naming the count, on standard error, at once (counts only grow); no negative count is printed.
     */
    @Test
    void aBaselineAboveWhatTheProxyCountedIsAFailureThatSaysWhy(@TempDir Path dir) throws Exception {
        Path other = dir.resolve("other.json");
        Files.writeString(other, "{\"commands\": [{\"command\": \"insert\", \"member\": \"db:27017\", \"app\": \"\","
                + " \"attempts\": 5, \"retries\": 1}], \"outcomes\": [{\"command\": \"insert\", \"member\": \"db:27017\","
                + " \"app\": \"\", \"ok\": 5}], \"faults\": []}");
        String why = ": it is not the proxy the file was saved from, or it started again since";
        try (AdminRig rig = AdminRig.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            long start = System.nanoTime();
            CliRun run = rig.run("expect", "--baseline", other.toString(), "--attempts", "insert<=0", "--wait", "20s");
            assertEquals(1, run.exitCode(), run::toString);
            assertEquals("", run.out(), run::toString);
            assertEquals(List.of("blackpipe: the proxy counted less than " + other + " holds (attempts insert: 0, the file 5)" + why),
                    run.err().lines().toList());
            assertTrue(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start) < 10, "no wait: counts only grow");

            CliRun stats = rig.run("stats", "--baseline", other.toString());
            assertEquals(1, stats.exitCode(), stats::toString);
            assertEquals("", stats.out(), stats::toString);
            assertEquals(List.of("blackpipe: the proxy counted less than " + other + " holds (attempts of insert on db:27017: 0,"
                    + " the file 5)" + why), stats.err().lines().toList());
        }
    }

    /**
     * A baseline saved from another run of a proxy, whose counts this one passed since: a sidecar restarted between the
     * baseline and the check counted less than it had, yet may have counted more than the file. Its counts began anew,
     * so what it counted since the file is unknown: a failure, where `--retries insert=1` held (counted 1 since 0).
     */
    @Test
    void aBaselineFromAnotherRunIsAFailureWhateverItCounted(@TempDir Path dir) throws Exception {
        Path before = dir.resolve("before.json");
        try (AdminRig first = AdminRig.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            Files.writeString(before, first.run("stats", "--json").out());
        }
        String db = UpstreamLane.freshDatabaseName("expectRun");
        try (AdminRig again = AdminRig.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            assertEquals(0, again.run("fault", "add", "--command", "insert", "--reset", "--times", "1").exitCode());
            try (MongoClient client = MongoClients.create(CommandLog.withOptions(again.proxy().connectionString(), "retryWrites=true"))) {
                client.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1)); // reset, then retried
            }
            String why = "blackpipe: the proxy is not the run " + before + " was saved from: it started again since, or it is another"
                    + " proxy, so what it counted since the file is unknown";
            CliRun expect = again.run("expect", "--baseline", before.toString(), "--retries", "insert=1");
            assertEquals(1, expect.exitCode(), expect::toString);
            assertEquals("", expect.out(), expect::toString);
            assertEquals(List.of(why), expect.err().lines().toList());
            CliRun stats = again.run("stats", "--baseline", before.toString());
            assertEquals(1, stats.exitCode(), stats::toString);
            assertEquals(List.of(why), stats.err().lines().toList());
            CliRun fromTheStart = again.run("expect", "--retries", "insert=1");
            assertEquals(0, fromTheStart.exitCode(), fromTheStart::toString);
        }
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "missing.json||missing.json: no such file",
            "empty.json||is not what `blackpipe stats --json` writes (it is empty)",
            "cut.json|{\"commands\": [|is not what `blackpipe stats --json` writes (not a JSON document: ",
            "ok.json|{\"ok\": 1}|is not what `blackpipe stats --json` writes (no 'commands' array of rows)",
            "rows.json|{\"commands\": [], \"outcomes\": [1], \"faults\": []}|(no 'outcomes' array of rows)"})
    void aBaselineThatIsNotSavedStatsIsAUsageError(String name, String content, String message, @TempDir Path dir) throws Exception {
        Path file = dir.resolve(name);
        if (!name.equals("missing.json")) {
            Files.writeString(file, content == null ? "" : content);
        }
        CliRun run = CliRun.of("expect", "--baseline", file.toString(), "--attempts", "insert=1", "--admin", "http://127.0.0.1:1");
        assertEquals(2, run.exitCode(), run::toString);
        assertTrue(run.err().contains("--baseline: "), run::toString);
        assertTrue(run.err().contains(message), run::toString);
        assertTrue(run.err().contains("Usage: blackpipe expect"), run::toString);
    }

    /** Before, an empty --baseline ("$FILE" with FILE unset) was read as the working directory: "Is a directory". */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"expect", "stats"})
    void anEmptyBaselineIsAUsageErrorSaidSo(String command) {
        CliRun run = CliRun.of(command, "--baseline", "", "--admin", "http://127.0.0.1:1");
        assertEquals(2, run.exitCode(), run::toString);
        assertTrue(run.err().contains("Invalid value for option '--baseline': an empty path; give a file, or leave the option out"),
                run::toString);
    }

    @Test
    void waitAsksAgainUntilTheCountArrivesOrTheTimeIsUp() throws Exception {
        String db = UpstreamLane.freshDatabaseName("expectWait");
        try (AdminRig rig = AdminRig.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            CliRun once = rig.run("expect", "--attempts", "insert=1");
            assertEquals(List.of("FAIL  attempts insert=1 (counted 0)"), once.lines(), once::toString);

            long start = System.nanoTime();
            CliRun timedOut = rig.run("expect", "--attempts", "insert=1", "--wait", "300ms");
            assertEquals(1, timedOut.exitCode(), timedOut::toString);
            assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(300), "it waited the 300ms out");

            CompletableFuture<CliRun> waiting = CompletableFuture.supplyAsync(() -> rig.run("expect", "--attempts", "insert=1", "--wait", "60s"));
            Thread.sleep(300);
            assertFalse(waiting.isDone(), "still asking: nothing was inserted yet");
            try (MongoClient client = MongoClients.create(rig.proxy().connectionString())) {
                client.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1));
            }
            CliRun arrived = waiting.get(30, TimeUnit.SECONDS);
            assertEquals(0, arrived.exitCode(), arrived::toString);
            assertEquals(List.of("ok    attempts insert=1 (counted 1)"), arrived.lines());
        }
    }

    /**
     * A sidecar still starting: --wait asks until the proxy answers, then until the counts hold. The admin port is held
     * (bound, not listening: connecting is refused) until the admin server binds it, so no other process is given it.
     */
    @Test
    void waitAsksAgainUntilTheProxyAnswers() throws Exception {
        try (HeldPort adminPort = HeldPort.any()) {
            String url = "http://127.0.0.1:" + adminPort.port();
            CompletableFuture<CliRun> waiting = CompletableFuture.supplyAsync(() -> CliRun.of("expect", "--attempts", "insert=0",
                    "--wait", "60s", "--admin", url, "--admin-token", AdminRig.TOKEN));
            Thread.sleep(500);
            assertFalse(waiting.isDone(), "still asking: nothing answers on " + url);
            try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
                adminPort.close(); // just before the bind
                try (AdminServer admin = AdminServer.start(proxy, "127.0.0.1", adminPort.port(), AdminRig.TOKEN)) {
                    CliRun answered = waiting.get(30, TimeUnit.SECONDS);
                    assertEquals(0, answered.exitCode(), answered::toString);
                    assertEquals(List.of("ok    attempts insert=0 (counted 0)"), answered.lines());
                    CliRun wrongToken = CliRun.of("expect", "--attempts", "insert=0", "--wait", "60s", "--admin", url, "--admin-token", "nope");
                    assertEquals(1, wrongToken.exitCode(), "an answer that refuses is a failure at once, not waited out: " + wrongToken);
                }
            }
        }
    }

    /** A handshake's faults are counted per command too: hello is no application command, but its faults are faults. */
    @Test
    void theFaultsOfAHandshakeCommandAreChecked() {
        try (AdminRig rig = AdminRig.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            assertEquals(0, rig.run("fault", "add", "--command", "hello", "--close", "--times", "1", "--app", "expect-hello").exitCode());
            try (MongoClient client = MongoClients.create(rig.proxy().connectionString() + "&appName=expect-hello")) {
                client.getDatabase("admin").runCommand(new Document("ping", 1)); // its first handshake is closed, the next one works
            }
            CliRun run = rig.run("expect", "--faults", "closeConnection:hello=1", "--wait", "10s");
            assertEquals(0, run.exitCode(), run::toString);
            assertEquals(List.of("ok    faults closeConnection:hello=1 (counted 1)"), run.lines());
        }
    }

    /** Every `expect` the README shows is one the command takes (it may fail: nothing was counted here). */
    @Test
    void theReadmesExamplesAreWellFormed(@TempDir Path dir) throws Exception {
        String readme = Files.readString(Path.of("..", "README.md")).replace("\\\n", " ");
        List<String> examples = readme.lines().map(String::strip).filter(line -> line.matches("(\\./blackpipe|blackpipe|java -jar \\S+) expect --.*"))
                .map(line -> line.replaceAll("\\s+#.*$", "")).toList();
        assertTrue(examples.size() >= 3, () -> "the control and sidecar sections show it: " + examples);
        try (AdminRig rig = AdminRig.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            Path before = dir.resolve("before.json");
            Files.writeString(before, rig.run("stats", "--json").out());
            for (String example : examples) {
                String[] args = example.substring(example.indexOf("expect")).replace("--wait 10s", "")
                        .replace("--baseline before.json", "--baseline " + before).strip().split("\\s+");
                CliRun run = rig.run(args);
                assertEquals(1, run.exitCode(), () -> example + "\n" + run);
                assertTrue(run.lines().stream().allMatch(line -> line.startsWith("FAIL  ") || line.startsWith("ok    ")), run::toString);
            }
        }
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource(delimiter = '|', value = {
            "--retries|insrt=1|Invalid value for option '--retries' (COMMAND=N): 'insrt=1': command: 'insrt' is not a command blackpipe counts by name: did you mean 'insert'? (command names are case-sensitive)",
            "--attempts|Insert=1|command: 'Insert' is not a command blackpipe counts by name: did you mean 'insert'?",
            "--attempts|fnd=1|command: 'fnd' is not a command blackpipe counts by name: did you mean 'find'?",
            "--retries|insert|Invalid value for option '--retries' (COMMAND=N): 'insert' is not COMMAND=N such as insert=1",
            "--retries|insert=-1|'insert=-1' is not COMMAND=N such as insert=1",
            "--retries|insert=99999999999999999999|is not COMMAND=N such as insert=1",
            "--retries|insert:ok=1|'insert:ok=1' is not COMMAND=N such as insert=1",
            "--attempts|hello=1|'hello=1': command: 'hello' is a handshake's or monitoring's command",
            "--outcomes|insert=1|'insert=1' is not COMMAND:OUTCOME=N such as insert:network_error=1",
            "--outcomes|insert:networkError=1|'insert:networkError=1': outcome: 'networkError' is none of [ok, error, network_error, no_reply]: did you mean 'network_error'?",
            "--faults|reset=1|'reset=1': fault: 'reset' is none of [resetConnection, ",
            "--faults|resetConnection:insert:x=1|is not FAULT[:COMMAND]=N such as resetConnection:insert=1",
            "--faults|resetConnection:insrt=1|command: 'insrt' is not a command blackpipe counts by name: did you mean 'insert'?",
            "--faults|restConnection=1|fault: 'restConnection' is none of [resetConnection, ",
            "--faults|restConnection=1|]: did you mean 'resetConnection'?",
            "--wait|soon|Invalid value for option '--wait': 'soon' is not a duration"})
    void aNameOrCountThatCannotBeCheckedIsAUsageError(String option, String value, String message) {
        CliRun run = CliRun.of("expect", option, value, "--attempts", "insert=1", "--admin", "http://127.0.0.1:1");
        assertEquals(2, run.exitCode(), run::toString);
        assertTrue(run.err().contains(message), run::toString);
        assertTrue(run.err().contains("Usage: blackpipe expect"), run::toString);
    }

    @Test
    void nothingToExpectIsAUsageErrorAndAnUnreachableProxyAFailure() {
        CliRun nothing = CliRun.of("expect", "--admin", "http://127.0.0.1:1");
        assertEquals(2, nothing.exitCode(), nothing::toString);
        assertTrue(nothing.err().contains("nothing to expect: give --attempts, --retries, --outcomes or --faults"), nothing::toString);

        CliRun unreachable = CliRun.of("expect", "--attempts", "insert=0", "--admin", "http://127.0.0.1:1");
        assertEquals(1, unreachable.exitCode(), unreachable::toString);
        assertTrue(unreachable.err().startsWith("blackpipe: "), unreachable::toString);
        assertEquals("", unreachable.out(), "no verdict without counts");
    }
}
