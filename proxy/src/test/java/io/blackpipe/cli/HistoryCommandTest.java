package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.blackpipe.admin.AdminHttp;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.CommandLog;
import io.blackpipe.testing.HeldPort;
import io.blackpipe.testing.UpstreamLane;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.stream.Stream;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * `blackpipe history` against a real proxy in front of the test lane's upstream, with the real driver's
 * commands in it: the table, --json, --since, and their usage errors (--follow: {@link HistoryFollowTest}).
 */
class HistoryCommandTest {
    static final List<String> HEADER = List.of("TIME", "MEMBER", "COMMAND", "ATTEMPT", "RETRY", "OUTCOME", "FAULT", "DURATION", "NS");

    @RegisterExtension
    static final SharedAdminRig shared = new SharedAdminRig();

    /** Inserts {@code documents} into {@code ns} (db.collection) through the proxy with retryable writes. */
    static void insert(AdminRig rig, String ns, Document... documents) {
        String uri = CommandLog.withOptions(rig.proxy().connectionString(), "retryWrites=true&socketTimeoutMS=5000&connectTimeoutMS=5000");
        int dot = ns.indexOf('.');
        try (MongoClient client = MongoClients.create(uri)) {
            for (Document document : documents) {
                client.getDatabase(ns.substring(0, dot)).getCollection(ns.substring(dot + 1)).insertOne(document);
            }
        }
    }

    /** The table's rows (split on runs of spaces) for commands on {@code ns}, once there are {@code count}. */
    static List<List<String>> rowsOf(AdminRig rig, String ns, int count, String... options) throws InterruptedException {
        String[] args = Stream.concat(Stream.of("history"), Stream.of(options)).toArray(String[]::new);
        CliRun[] history = new CliRun[1];
        Await.until(Duration.ofSeconds(10), () -> count + " rows of " + ns + ": " + history[0], () -> {
            history[0] = rig.run(args);
            return rows(history[0], ns).size() >= count;
        });
        assertEquals(0, history[0].exitCode(), history[0]::toString);
        assertEquals(HEADER, List.of(history[0].lines().get(0).split(" {2,}")), history[0]::toString);
        return rows(history[0], ns);
    }

    private static List<List<String>> rows(CliRun history, String ns) {
        return history.lines().stream().map(l -> List.of(l.split(" {2,}"))).filter(c -> c.get(c.size() - 1).equals(ns)).toList();
    }

    @Test
    void aFaultedInsertAndItsRetryAreTwoRowsTheSecondMarkedAsARetry() throws Exception {
        String ns = UpstreamLane.freshDatabaseName("cli_history") + ".c";
        CliRun added = shared.rig().run("fault", "add", "--command", "insert", "--error", "NotWritablePrimary", "--times", "1", "--namespace", ns);
        assertEquals(0, added.exitCode(), added::toString);
        CommandLog log = new CommandLog();
        String uri = CommandLog.withOptions(shared.rig().proxy().connectionString(), "retryWrites=true&socketTimeoutMS=5000");
        try (MongoClient client = MongoClients.create(log.driverOn(uri).build())) {
            client.getDatabase(ns.substring(0, ns.indexOf('.'))).getCollection("c").insertOne(new Document("_id", 1));
        }
        assertEquals(2, log.startedCount("insert"), "the driver retried the insert");

        List<List<String>> rows = rowsOf(shared.rig(), ns, 2);
        assertEquals(2, rows.size(), rows::toString);
        List<String> first = rows.get(0);
        List<String> retry = rows.get(1);
        String member = shared.rig().proxy().members().get(0).upstream().toString();
        assertEquals(List.of(member, "insert", "1", "-", "error 10107", "errorReply"), first.subList(1, 7), rows::toString);
        assertEquals(List.of(member, "insert", "2", "retry", "ok", "-"), retry.subList(1, 7), rows::toString);
        for (List<String> row : rows) {
            assertTrue(row.get(0).matches("\\d\\d:\\d\\d:\\d\\d\\.\\d{3}"), () -> "time of day: " + row);
            assertTrue(row.get(7).matches("\\d+\\.\\dms"), () -> "duration: " + row);
        }
        assertTrue(first.get(0).compareTo(retry.get(0)) <= 0, "in the order they happened: " + rows);
    }

    @Test
    void jsonPassesTheApisLinesThroughUnchanged() throws Exception {
        String ns = UpstreamLane.freshDatabaseName("cli_history_json") + ".c";
        insert(shared.rig(), ns, new Document("_id", 1));
        rowsOf(shared.rig(), ns, 1);

        CliRun json = shared.rig().run("history", "--json");
        assertEquals(0, json.exitCode(), json::toString);
        String api = new AdminHttp(shared.rig().url(), AdminRig.TOKEN, "", "").call("GET", "history", null).body();
        assertEquals(api, json.out(), "byte for byte what GET /api/v1/history answered");
        List<BsonDocument> lines = json.lines().stream().map(BsonDocument::parse).toList();
        BsonDocument insert = lines.stream().filter(l -> l.getString("ns").getValue().equals(ns)).findFirst().orElseThrow();
        assertEquals("insert", insert.getString("command").getValue());
        assertEquals(1, insert.getNumber("attempt").intValue());
        assertEquals("ok", insert.getString("type").getValue());
    }

    @Test
    void sinceShowsOnlyWhatWasRecordedFromThatInstantOn() throws Exception {
        String before = UpstreamLane.freshDatabaseName("cli_before") + ".c";
        String after = UpstreamLane.freshDatabaseName("cli_after") + ".c";
        insert(shared.rig(), before, new Document("_id", 1));
        rowsOf(shared.rig(), before, 1);
        Instant since = Instant.now(); // the proxy runs in this JVM: the same clock
        insert(shared.rig(), after, new Document("_id", 1));

        assertEquals(1, rowsOf(shared.rig(), after, 1, "--since", since.toString()).size());
        CliRun table = shared.rig().run("history", "--since", since.toString());
        assertTrue(rows(table, before).isEmpty(), table::toString);
        CliRun json = shared.rig().run("history", "--since", since.toString(), "--json");
        assertEquals(0, json.exitCode(), json::toString);
        List<String> namespaces = json.lines().stream().map(l -> BsonDocument.parse(l).getString("ns").getValue()).toList();
        assertTrue(namespaces.contains(after) && !namespaces.contains(before), namespaces::toString);

        CliRun future = shared.rig().run("history", "--since", Instant.now().plusSeconds(3600).toString());
        assertEquals("no commands recorded since", future.out().strip().replaceAll(" \\S+$", ""), future::toString);
    }

    @Test
    void aLongNamespaceLengthensOnlyItsOwnLineAndCutsNothing() throws Exception {
        String shortNs = UpstreamLane.freshDatabaseName("cli_short") + ".c";
        String longNs = UpstreamLane.freshDatabaseName("cli_long") + "." + "orders_archive_".repeat(8) + "end";
        insert(shared.rig(), shortNs, new Document("_id", 1));
        insert(shared.rig(), longNs, new Document("_id", 1));
        rowsOf(shared.rig(), longNs, 1);
        CliRun history = shared.rig().run("history");
        String header = history.lines().get(0);
        int nsColumn = header.indexOf("NS");
        assertTrue(nsColumn < longNs.length(), "the columns are not as wide as the long namespace: " + header);
        for (String ns : List.of(shortNs, longNs)) {
            String line = history.lines().stream().filter(l -> l.endsWith(ns)).findFirst().orElseThrow();
            assertEquals(nsColumn, line.length() - ns.length(), () -> "whole, in the NS column: " + history);
            String duration = line.split(" {2,}")[7];
            assertTrue(line.substring(header.indexOf("DURATION")).startsWith(duration + " "), () -> "the columns line up: " + history);
        }
    }

    static Stream<Arguments> usageErrors() {
        return Stream.of(
                Arguments.of(List.of("--since", "yesterday"), "--since 'yesterday' is not an instant"),
                Arguments.of(List.of("--since", "2025-01-31 12:00"), "--since '2025-01-31 12:00' is not an instant"),
                Arguments.of(List.of("--since", "2025-01-31T12:00:00Z", "--follow"), "--since and --follow cannot be combined"),
                Arguments.of(List.of("--follow", "--since", "2025-01-31T12:00:00Z", "--json"), "--since and --follow cannot be combined"),
                Arguments.of(List.of("--no-such-flag"), "--no-such-flag"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("usageErrors")
    void badArgumentsExitTwoWithUsage(List<String> args, String named) {
        String[] all = Stream.concat(Stream.of("history"), args.stream()).toArray(String[]::new);
        CliRun run = shared.rig().run(all);
        assertEquals(2, run.exitCode(), run::toString);
        assertTrue(run.err().lines().findFirst().orElse("").contains(named), run::toString);
        assertTrue(run.err().contains("Usage: blackpipe history"), run::toString);
        assertEquals("", run.out(), run::toString);
    }

    @Test
    void failuresExitOneAsTheOtherControlCommandsDo() throws IOException {
        try (HeldPort refusing = HeldPort.any()) { // bound, not listening: refused, and given to no process that would answer
            int closed = refusing.port();
            for (List<String> options : List.of(List.<String>of(), List.of("--follow"))) {
                String[] args = Stream.concat(Stream.of("history", "--admin", "127.0.0.1:" + closed), options.stream()).toArray(String[]::new);
                CliRun unreachable = CliRun.of(args);
                assertEquals(1, unreachable.exitCode(), unreachable::toString);
                assertTrue(unreachable.err().startsWith("blackpipe: cannot reach the blackpipe admin API at http://127.0.0.1:" + closed),
                        unreachable::toString);

                String[] wrong = Stream.concat(Stream.of("history", "--admin", shared.rig().url(), "--admin-token", "not-it", "--json"),
                        options.stream()).toArray(String[]::new);
                CliRun unauthorized = CliRun.of(wrong);
                assertEquals(1, unauthorized.exitCode(), unauthorized::toString);
                assertTrue(unauthorized.err().contains("answered 401") && unauthorized.err().contains("--admin-token"), unauthorized::toString);
                assertEquals("", unauthorized.out(), "--json prints nothing but the lines: " + unauthorized);
            }
        }
    }
}
