package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoWriteConcernException;
import com.mongodb.ReadPreference;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.connection.ServerDescription;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.CommandLog;
import io.blackpipe.testing.UpstreamLane;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.function.Executable;

/**
 * The flags of `fault add` that say when a rule fires and on what (--skip, --app, --namespace, --attempt,
 * --all-commands, --member, --id replacing a rule) and a rule given whole as JSON, whose effect was only
 * checked as the rule document they build: each added with the CLI to a running proxy, then met by the real
 * driver, the commands it should fault failing with the rule's error and the others landing on the server.
 */
class FaultAddMatchingCliTest {
    @RegisterExtension
    static final SharedAdminRig shared = new SharedAdminRig();

    private final CommandLog log = new CommandLog();
    private final String db = UpstreamLane.freshDatabaseName("faultMatching");

    @AfterEach
    void clearRules() {
        shared.rig().proxy().rules().clear();
    }

    /** `fault add FLAGS` against {@code rig}: exit 0, and the id it prints. */
    private static String add(AdminRig rig, String... flags) {
        List<String> args = new ArrayList<>(List.of("fault", "add"));
        args.addAll(List.of(flags));
        CliRun added = rig.run(args.toArray(String[]::new));
        assertEquals(0, added.exitCode(), added::toString);
        return added.out().strip();
    }

    private static String add(String... flags) {
        return add(shared.rig(), flags);
    }

    private MongoClient driver(String options) {
        return driver(shared.rig(), options, b -> b);
    }

    private MongoClient driver(String options, String appName) {
        return driver(shared.rig(), options, b -> b.applicationName(appName));
    }

    private MongoClient driver(AdminRig rig, String options,
                               Function<com.mongodb.MongoClientSettings.Builder, com.mongodb.MongoClientSettings.Builder> more) {
        return MongoClients.create(more.apply(log.driverOn(CommandLog.withOptions(rig.proxy().connectionString(), options))).build());
    }

    private static void assertFailsWith(int code, Executable operation) {
        MongoCommandException e = assertThrows(MongoCommandException.class, operation);
        assertEquals(code, e.getErrorCode(), e::toString);
    }

    /** The documents of {@code database.collection}, read straight from the upstream. */
    private static List<Document> onTheServer(String database, String collection) {
        try (MongoClient direct = UpstreamLane.directClient()) {
            return direct.getDatabase(database).getCollection(collection).find().sort(new Document("_id", 1)).into(new ArrayList<>());
        }
    }

    private static long fired(String id) {
        return shared.rig().proxy().rules().fired(id);
    }

    private static final String NO_RETRIES = "retryWrites=false&retryReads=false&socketTimeoutMS=30000";

    @Test
    void skipLetsTheFirstCommandsPassThenFiresOnEveryOne() {
        String id = add("--command", "insert", "--error-code", "2", "--skip", "2");
        try (MongoClient client = driver(NO_RETRIES)) {
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            c.insertOne(new Document("_id", 0));
            c.insertOne(new Document("_id", 1));
            assertFailsWith(2, () -> c.insertOne(new Document("_id", 2)));
            assertFailsWith(2, () -> c.insertOne(new Document("_id", 3)));
        }
        assertEquals(List.of(new Document("_id", 0), new Document("_id", 1)), onTheServer(db, "c"));
        assertEquals(2, fired(id));
    }

    @Test
    void appFaultsOnlyTheClientsOfThatNameAndAnEmptyOneOnlyThoseThatSendNone() {
        String named = add("--command", "insert", "--error-code", "2", "--app", "reporting");
        try (MongoClient reporting = driver(NO_RETRIES, "reporting");
             MongoClient checkout = driver(NO_RETRIES, "checkout");
             MongoClient anonymous = driver(NO_RETRIES)) {
            assertFailsWith(2, () -> reporting.getDatabase(db).getCollection("c").insertOne(new Document("_id", "reporting")));
            checkout.getDatabase(db).getCollection("c").insertOne(new Document("_id", "checkout"));
            anonymous.getDatabase(db).getCollection("c").insertOne(new Document("_id", "anonymous"));
            assertEquals(1, fired(named));

            assertEquals(0, shared.rig().run("fault", "clear").exitCode());
            String none = add("--command", "insert", "--error-code", "2", "--app", "");
            assertFailsWith(2, () -> anonymous.getDatabase(db).getCollection("c").insertOne(new Document("_id", "anonymous2")));
            reporting.getDatabase(db).getCollection("c").insertOne(new Document("_id", "reporting2"));
            assertEquals(1, fired(none));
        }
        assertEquals(List.of(new Document("_id", "anonymous"), new Document("_id", "checkout"), new Document("_id", "reporting2")),
                onTheServer(db, "c"));
    }

    @Test
    void namespaceFaultsOneCollectionOrAWholeDatabaseAndNothingElse() {
        String other = UpstreamLane.freshDatabaseName("faultMatchingOther");
        String collectionOnly = add("--command", "insert", "--error-code", "2", "--namespace", db + ".a");
        try (MongoClient client = driver(NO_RETRIES)) {
            assertFailsWith(2, () -> client.getDatabase(db).getCollection("a").insertOne(new Document("_id", 1)));
            client.getDatabase(db).getCollection("b").insertOne(new Document("_id", 1));
            client.getDatabase(other).getCollection("a").insertOne(new Document("_id", 1));
            assertEquals(1, fired(collectionOnly));

            assertEquals(0, shared.rig().run("fault", "clear").exitCode());
            String database = add("--command", "insert", "--error-code", "2", "--namespace", db);
            assertFailsWith(2, () -> client.getDatabase(db).getCollection("a").insertOne(new Document("_id", 2)));
            assertFailsWith(2, () -> client.getDatabase(db).getCollection("b").insertOne(new Document("_id", 2)));
            client.getDatabase(other).getCollection("a").insertOne(new Document("_id", 2));
            assertEquals(2, fired(database));
        }
        assertEquals(List.of(), onTheServer(db, "a"));
        assertEquals(List.of(new Document("_id", 1)), onTheServer(db, "b"));
        assertEquals(List.of(new Document("_id", 1), new Document("_id", 2)), onTheServer(other, "a"));
    }

    @Test
    void matchFaultsOnlyTheCommandsHoldingItsFieldsAndListShowsIt() {
        String id = add("--command", "insert", "--error-code", "2", "--match", "{\"documents.sku\": \"B2\"}");
        try (MongoClient client = driver(NO_RETRIES)) {
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            c.insertOne(new Document("_id", 1).append("sku", "A1"));
            assertFailsWith(2, () -> c.insertOne(new Document("_id", 2).append("sku", "B2")));
            c.insertOne(new Document("_id", 3).append("sku", "C3"));
        }
        assertEquals(List.of(new Document("_id", 1).append("sku", "A1"), new Document("_id", 3).append("sku", "C3")), onTheServer(db, "c"));
        assertEquals(1, fired(id));
        CliRun list = shared.rig().run("fault", "list");
        assertEquals(0, list.exitCode(), list::toString);
        assertTrue(list.out().contains("match={\"documents.sku\": \"B2\"}"), list::toString);
    }

    @Test
    void aMistakenMatchIsAUsageErrorNamingTheFlagAndNoRuleIsAdded() {
        for (String[] bad : new String[][] {{"{sku:", "--match: not a JSON document"},
                {"{\"documents.qty\": {\"$gt\": {\"a\": 1}}}", "--match: documents.qty.$gt: $gt orders numbers, strings"},
                {"{\"documents.sku\": {\"$not\": \"A\"}}", "--match: documents.sku.$not: takes field operators or a regular expression"},
                {"{\"$where\": \"true\"}", "--match: '$where': of a query's top-level operators only $and, $or and $nor"},
                {"{}", "--match: must be a non-empty document"}}) {
            CliRun run = shared.rig().run("fault", "add", "--command", "insert", "--close", "--match", bad[0]);
            assertEquals(2, run.exitCode(), run::toString);
            assertTrue(run.err().contains(bad[1]), run::toString);
        }
        assertEquals(List.of(), shared.rig().ruleIds(), "nothing was added");
    }

    @Test
    void attemptFirstFaultsEveryFirstAttemptAndLetsItsRetryThrough() {
        String id = add("--command", "insert", "--reset", "--attempt", "first"); // alwaysOn, yet every insert lands
        try (MongoClient client = driver("retryWrites=true&socketTimeoutMS=30000")) {
            client.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1));
            client.getDatabase(db).getCollection("c").insertOne(new Document("_id", 2));
        }
        assertEquals(4, log.startedCount("insert"), "each insert was reset once and retried once");
        assertEquals(List.of(new Document("_id", 1), new Document("_id", 2)), onTheServer(db, "c"));
        assertEquals(2, fired(id));
    }

    @Test
    void attemptRetryFaultsOnlyARetry() {
        String reset = add("--command", "insert", "--reset", "--times", "1");
        String retry = add("--command", "insert", "--error-code", "2", "--attempt", "retry");
        try (MongoClient client = driver("retryWrites=true&socketTimeoutMS=30000")) {
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            assertFailsWith(2, () -> c.insertOne(new Document("_id", 1))); // reset, then its retry fails with the rule's error
            assertEquals(2, log.startedCount("insert"));
            c.insertOne(new Document("_id", 2)); // a first attempt: the retry rule lets it through
            assertEquals(3, log.startedCount("insert"));
        }
        assertEquals(List.of(new Document("_id", 2)), onTheServer(db, "c"));
        assertEquals(1, fired(reset));
        assertEquals(1, fired(retry));
    }

    @Test
    void allCommandsOnANamespaceFaultsEveryKindOfCommandThereAndNothingElsewhere() {
        String other = UpstreamLane.freshDatabaseName("faultMatchingAll");
        String id = add("--all-commands", "--namespace", db, "--error-code", "2");
        try (MongoClient client = driver(NO_RETRIES)) {
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            assertFailsWith(2, () -> c.insertOne(new Document("_id", 1)));
            assertFailsWith(2, () -> c.find().first());
            assertFailsWith(2, c::countDocuments);
            assertFailsWith(2, () -> c.deleteMany(new Document()));
            assertFailsWith(2, () -> client.getDatabase(db).runCommand(new Document("count", "c")));
            assertEquals(5, fired(id));

            MongoCollection<Document> elsewhere = client.getDatabase(other).getCollection("c");
            elsewhere.insertOne(new Document("_id", 1));
            assertEquals(1, elsewhere.countDocuments());
            client.getDatabase("admin").runCommand(new Document("ping", 1));
        }
        assertEquals(5, fired(id), "no command of another database, and no hello, was faulted");
        assertEquals(List.of(), onTheServer(db, "c"));
        assertEquals(List.of(new Document("_id", 1)), onTheServer(other, "c"));
    }

    @Test
    void anIdGivenAgainReplacesTheRuleInPlaceAndKeepsItsCount() {
        assertEquals("r", add("--id", "r", "--command", "insert", "--error-code", "2"));
        try (MongoClient client = driver(NO_RETRIES)) {
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            assertFailsWith(2, () -> c.insertOne(new Document("_id", 1)));
            assertEquals("r", add("--id", "r", "--command", "insert", "--error-code", "96", "--times", "1"));
            assertEquals(List.of("r"), shared.rig().ruleIds(), "one rule, replaced");
            assertFailsWith(96, () -> c.insertOne(new Document("_id", 2)));
            c.insertOne(new Document("_id", 3)); // the replacement's times: 1 is spent
        }
        assertEquals(List.of(new Document("_id", 3)), onTheServer(db, "c"));
        assertEquals(2, fired("r"), "as the server's failpoint, a re-sent id keeps its count");
    }

    @Test
    void aRuleGivenAsJsonTakesFieldsNoFlagHasAWriteConcernErrorOnAWriteThatHappened() {
        String id = add("{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['insert'],"
                + " writeConcernError: {code: 64, codeName: 'WriteConcernFailed', errmsg: 'waiting for replication timed out'}}}");
        try (MongoClient client = driver(NO_RETRIES)) {
            MongoWriteConcernException e = assertThrows(MongoWriteConcernException.class,
                    () -> client.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1)));
            assertEquals(64, e.getWriteConcernError().getCode(), e::toString);
        }
        assertEquals(List.of(new Document("_id", 1)), onTheServer(db, "c"), "the server ran the write");
        assertEquals(1, fired(id));
    }

    @Test
    void memberFaultsOnlyTheMembersItNames() throws Exception {
        try (AdminRig rig = AdminRig.start(ProxyConfig.embedded(UpstreamLane.singleNodeUri()).withSimulatedMembers(3));
             MongoClient client = driver(rig, NO_RETRIES, b -> b)) {
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            c.insertOne(new Document("_id", 1));
            Await.until(Duration.ofSeconds(30), () -> "the driver to see both secondaries: " + client.getClusterDescription(),
                    () -> client.getClusterDescription().getServerDescriptions().stream().filter(ServerDescription::isSecondary).count() == 2);

            String secondary = add(rig, "--command", "find", "--error-code", "2", "--member", "secondary");
            assertEquals(new Document("_id", 1), c.find().first(), "a read on the primary is not faulted");
            assertFailsWith(2, () -> c.withReadPreference(ReadPreference.secondary()).find().first());
            assertEquals(1, rig.proxy().rules().fired(secondary));

            assertEquals(0, rig.run("fault", "clear").exitCode());
            String one = rig.proxy().members().get(1).advertised().toString();
            String another = rig.proxy().members().get(2).advertised().toString();
            String byAddress = add(rig, "--command", "find", "--error-code", "2", "--member", one);
            try (MongoClient toOne = MongoClients.create("mongodb://" + one + "/?directConnection=true&" + NO_RETRIES);
                 MongoClient toAnother = MongoClients.create("mongodb://" + another + "/?directConnection=true&" + NO_RETRIES)) {
                assertFailsWith(2, () -> toOne.getDatabase(db).getCollection("c").find().first());
                assertEquals(new Document("_id", 1), toAnother.getDatabase(db).getCollection("c").find().first());
            }
            assertEquals(new Document("_id", 1), c.find().first());
            assertEquals(1, rig.proxy().rules().fired(byAddress));
        }
    }
}
