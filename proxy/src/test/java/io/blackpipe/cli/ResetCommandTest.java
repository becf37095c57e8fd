package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.CommandLog;
import io.blackpipe.testing.HeldPort;
import io.blackpipe.testing.UpstreamLane;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * `blackpipe reset` against a real proxy (three simulated members over the test lane's upstream) that a real
 * driver wrote through: the clean slate it promises, what it keeps, and its failures.
 */
class ResetCommandTest {
    private static final Pattern RESET_LINE = Pattern.compile(
            "reset at (\\S+): scenario stopped, rules and fired counts cleared, members restored, sessions forgotten, seeded draws started over");

    private static String driverUri(AdminRig rig) {
        return CommandLog.withOptions(rig.proxy().connectionString(), "retryWrites=true&socketTimeoutMS=5000&connectTimeoutMS=5000");
    }

    /** --help says what the README's `blackpipe reset` comment says it does, the seeded draws included. */
    @Test
    void theHelpNamesEverythingResetStartsOver() {
        String help = CliRun.of("reset", "--help").out().replaceAll("\\s+", " ");
        for (String part : List.of("the scenario stopped", "every rule removed", "every member restored",
                "a simulated set's first member primary again", "the sessions seen forgotten", "the seeded draws started over",
                "Counters and history are kept")) {
            assertTrue(help.contains(part), "reset --help must say " + part + ": " + help);
        }
        String follow = CliRun.of("history", "--help").out().replaceAll("\\s+", " ");
        assertTrue(follow.contains("until interrupted or the proxy stops (exit 1)"), follow);
    }

    @Test
    void resetClearsRulesScenarioMemberFaultsAndTheFailoverButKeepsTheCounters() throws Exception {
        String db = UpstreamLane.freshDatabaseName("cli_reset");
        try (AdminRig rig = AdminRig.start(ProxyConfig.embedded(UpstreamLane.singleNodeUri()).withSimulatedMembers(3))) {
            assertEquals(0, rig.run("fault", "add", "--id", "once", "--command", "insert", "--error", "NotWritablePrimary",
                    "--times", "1").exitCode());
            CommandLog log = new CommandLog();
            try (MongoClient client = MongoClients.create(log.driverOn(driverUri(rig)).build())) {
                client.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1)); // faulted once, retried
            }
            assertEquals(2, log.startedCount("insert"));
            assertEquals(1, rig.proxy().rules().fired("once"));
            assertEquals(0, rig.run("fault", "add", "--id", "slow", "--command", "find", "--delay", "10ms").exitCode());
            assertEquals(0, rig.run("scenario", "run", "transient-blip").exitCode());
            assertEquals(0, rig.run("failover").exitCode());
            String second = rig.proxy().members().get(1).advertised().toString();
            assertEquals(0, rig.run("outage", second).exitCode());
            String first = rig.proxy().members().get(0).advertised().toString();
            assertEquals("secondary", cells(rig.run("members"), first).get(2), "the failover moved the primary away");

            Instant before = Instant.now();
            CliRun reset = rig.run("reset");
            assertEquals(0, reset.exitCode(), reset::toString);
            assertEquals(1, reset.lines().size(), "one short line: " + reset);
            Matcher line = RESET_LINE.matcher(reset.lines().get(0));
            assertTrue(line.matches(), reset::toString);
            Instant at = Instant.parse(line.group(1));
            assertFalse(at.isBefore(before) || at.isAfter(Instant.now()), "the proxy's clock at the reset: " + at);

            CliRun rules = rig.run("fault", "list");
            assertEquals("no rules", rules.out().strip(), rules::toString);
            assertEquals(0, rig.proxy().rules().fired("once"), "the fired count went with the rule");
            assertEquals("state: stopped", rig.run("scenario", "status").lines().get(0));
            CliRun members = rig.run("members");
            assertEquals(List.of("primary", "up"), cells(members, first).subList(2, 4), members::toString);
            assertEquals("up", cells(members, second).get(3), members::toString);

            // counters and history only grow: the insert's two attempts are still counted
            CliRun stats = rig.run("stats");
            assertEquals(List.of("2", "1"), cells(stats, "insert").subList(2, 4), stats::toString);
            // and the printed instant is what `history --since` takes: nothing since, then a new write alone
            CliRun since = rig.run("history", "--since", at.toString());
            assertEquals("no commands recorded since " + at, since.out().strip(), since::toString);
            try (MongoClient client = MongoClients.create(driverUri(rig))) {
                client.getDatabase(db).getCollection("c").insertOne(new Document("_id", 2));
            }
            Await.until(Duration.ofSeconds(10), "the new insert in the history", () ->
                    rig.run("history", "--since", at.toString()).out().contains(" insert "));
            List<String> inserts = rig.run("history", "--since", at.toString()).lines().stream().filter(l -> l.contains(" insert "))
                    .toList();
            assertEquals(1, inserts.size(), "one attempt, no fault: the rule is gone: " + inserts);
            assertTrue(inserts.get(0).contains(" ok ") && inserts.get(0).endsWith(db + ".c"), inserts::toString);
        }
    }

    @Test
    void resetJsonIsTheApisAnswer() {
        try (AdminRig rig = AdminRig.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            assertEquals(0, rig.run("fault", "add", "--command", "insert", "--reset").exitCode());
            CliRun reset = rig.run("reset", "--json");
            assertEquals(0, reset.exitCode(), reset::toString);
            BsonDocument answer = BsonDocument.parse(reset.out());
            assertEquals(1, answer.getNumber("ok").intValue(), reset::toString);
            Instant.parse(answer.getString("at").getValue());
            assertEquals(List.of(), rig.ruleIds());
        }
    }

    @Test
    void resetFailsAsTheOtherControlCommandsDo() throws IOException {
        try (HeldPort closed = HeldPort.any()) { // bound, not listening: refused, and given to no process that would answer
            CliRun unreachable = CliRun.of("reset", "--admin", "127.0.0.1:" + closed.port());
            assertEquals(1, unreachable.exitCode(), unreachable::toString);
            assertTrue(unreachable.err().startsWith("blackpipe: cannot reach the blackpipe admin API at http://127.0.0.1:" + closed.port()),
                    unreachable::toString);
            assertEquals("", unreachable.out());
        }

        try (AdminRig rig = AdminRig.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            assertEquals(0, rig.run("fault", "add", "--id", "kept", "--command", "insert", "--reset").exitCode());
            CliRun wrongToken = CliRun.of("reset", "--admin", rig.url(), "--admin-token", "not-it");
            assertEquals(1, wrongToken.exitCode(), wrongToken::toString);
            assertTrue(wrongToken.err().contains("answered 401") && wrongToken.err().contains("--admin-token"), wrongToken::toString);

            CliRun extra = rig.run("reset", "everything");
            assertEquals(2, extra.exitCode(), extra::toString);
            assertTrue(extra.err().contains("Usage: blackpipe reset"), extra::toString);
            assertEquals(List.of("kept"), rig.ruleIds(), "neither a refused nor a mistyped reset changed anything");
        }
    }

    /** The cells of the table row whose first cell is {@code first}, or of the row naming it second (members' advertised). */
    static List<String> cells(CliRun table, String first) {
        return table.lines().stream().map(l -> List.of(l.trim().split(" {2,}")))
                .filter(c -> c.get(0).equals(first) || c.size() > 1 && c.get(1).equals(first)).findFirst()
                .orElseThrow(() -> new AssertionError(first + " not in " + table));
    }
}
