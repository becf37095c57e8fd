package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoNotPrimaryException;
import com.mongodb.MongoSocketException;
import com.mongodb.ReadPreference;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.connection.ServerDescription;
import com.mongodb.event.CommandFailedEvent;
import io.blackpipe.testing.CommandLog;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.UpstreamLane;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * --simulate-members over the lane's single node: the driver sees a 3-member replica set made of
 * proxy listeners, and a failover moves the primary role the way a real election would.
 */
class SimulatedFailoverTest {
    @RegisterExtension
    final SimulatedSetOverTheLane set = new SimulatedSetOverTheLane();

    /**
     * The failover tests write to the old primary before the driver has heard of the election, as
     * an app does between two heartbeats: the driver polls (a streaming one hears of the election
     * at once, see SimulatedElectionStreamTest) and no scheduled heartbeat may come in between (the
     * driver still checks at once when a reply tells it the primary changed).
     */
    private static final String NO_HEARTBEAT_DURING_THE_TEST = "serverMonitoringMode=poll&heartbeatFrequencyMS=120000";

    private MongoClient client(String options) {
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(set.proxy().connectionString() + "&socketTimeoutMS=20000&" + options))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(10, TimeUnit.SECONDS))
                .build());
    }

    private static String primaryOf(MongoClient client) {
        return client.getClusterDescription().getServerDescriptions().stream()
                .filter(ServerDescription::isPrimary).map(d -> d.getAddress().toString()).findFirst().orElse("none");
    }

    /**
     * Until the driver has heard from every member, a member's first hello can come after a
     * failover and tell it of the new primary before the test's next command does.
     */
    private static void awaitBothSecondaries(MongoClient client) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (secondaries(client) < 2 && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertEquals(2, secondaries(client), "the driver has heard from both secondaries within 10 s");
    }

    private static long secondaries(MongoClient client) {
        return client.getClusterDescription().getServerDescriptions().stream().filter(ServerDescription::isSecondary).count();
    }

    @Test
    void theDriverSeesThreeMembersOnePrimaryAndTheWriteLandsOnTheRealNode() throws InterruptedException {
        String db = UpstreamLane.freshDatabaseName("sim");
        try (MongoClient client = client("heartbeatFrequencyMS=500")) {
            client.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1));
            Set<String> proxyAddresses = set.proxy().members().stream().map(m -> m.advertised().toString()).collect(Collectors.toSet());
            awaitBothSecondaries(client);
            List<ServerDescription> servers = client.getClusterDescription().getServerDescriptions();
            assertEquals(proxyAddresses, servers.stream().map(d -> d.getAddress().toString()).collect(Collectors.toSet()));
            assertEquals(1, servers.stream().filter(ServerDescription::isPrimary).count());
            assertEquals(2, servers.stream().filter(ServerDescription::isSecondary).count());
            assertEquals(set.proxy().members().get(0).advertised().toString(), primaryOf(client));

            // A secondary read is served (by the one real node) on a secondary's listener.
            Document read = client.getDatabase(db).getCollection("c").withReadPreference(ReadPreference.secondary()).find().first();
            assertEquals(1, read.getInteger("_id"));
        }
        assertEquals(1, set.direct().getDatabase(db).getCollection("c").countDocuments());
    }

    @Test
    void afterAFailoverTheOldPrimaryRefusesWritesAndTheDriverRetriesOnTheNewOne() throws InterruptedException {
        String db = UpstreamLane.freshDatabaseName("simfail");
        try (MongoClient client = client("retryWrites=true&" + NO_HEARTBEAT_DURING_THE_TEST)) {
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            c.insertOne(new Document("_id", 1));
            awaitBothSecondaries(client);
            String before = primaryOf(client);
            set.proxy().failover();
            c.insertOne(new Document("_id", 2)); // old primary: NotWritablePrimary + RetryableWriteError -> retried
            assertEquals(set.proxy().members().get(1).advertised().toString(), primaryOf(client));
            assertTrue(!before.equals(primaryOf(client)));
        }
        assertEquals(3, Meters.attempts(set.proxy().registry(), "insert"));
        assertEquals(1, Meters.retries(set.proxy().registry(), "insert"));
        assertEquals(1, Meters.outcomes(set.proxy().registry(), "insert", "error"));
        assertEquals(2, set.direct().getDatabase(db).getCollection("c").countDocuments());
    }

    /**
     * A w:0 write gets no reply to carry NotWritablePrimary, so mongod closes the connection
     * instead (OP_MSG spec): the driver's next command on it fails as a network error and it
     * selects a server again, finding the new primary.
     */
    @Test
    void anUnacknowledgedWriteOnTheOldPrimaryClosesItsConnectionAndTheDriverFindsTheNewOne() throws InterruptedException {
        String db = UpstreamLane.freshDatabaseName("simw0");
        CommandLog log = new CommandLog();
        try (MongoClient client = MongoClients.create(log.driverOn(set.proxy().connectionString()
                + "&socketTimeoutMS=20000&retryWrites=true&maxPoolSize=1&" + NO_HEARTBEAT_DURING_THE_TEST).build())) {
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            c.insertOne(new Document("_id", 1));
            awaitBothSecondaries(client);
            set.proxy().failover();
            c.withWriteConcern(WriteConcern.UNACKNOWLEDGED).insertOne(new Document("_id", 2)); // refused: the connection closes
            c.insertOne(new Document("_id", 3)); // the one pooled connection is closed: a network error, retried on the new primary
            assertEquals(set.proxy().members().get(1).advertised().toString(), primaryOf(client));
            List<CommandFailedEvent> failed = log.failed.stream().filter(e -> e.getCommandName().equals("insert")).toList();
            assertEquals(1, failed.size(), failed::toString);
            assertInstanceOf(MongoSocketException.class, failed.get(0).getThrowable(), "not NotWritablePrimary: the connection was gone");
        }
        // the first insert, the refused w:0 one, the retry of the third; and the third itself when it
        // reached the proxy before the close did (it is then cut by the close, never forwarded)
        long attempts = Meters.attempts(set.proxy().registry(), "insert");
        assertTrue(attempts == 3 || attempts == 4, attempts + " insert attempts");
        assertEquals(attempts - 3, Meters.outcomes(set.proxy().registry(), "insert", "network_error"));
        assertEquals(1, Meters.outcomes(set.proxy().registry(), "insert", "error"), "the w:0 insert, refused");
        assertEquals(List.of(new Document("_id", 1), new Document("_id", 3)),
                set.direct().getDatabase(db).getCollection("c").find().into(new ArrayList<>()));
    }

    @Test
    void withoutRetryableWritesTheAppSeesNotWritablePrimary() throws InterruptedException {
        String db = UpstreamLane.freshDatabaseName("simnoretry");
        try (MongoClient client = client("retryWrites=false&" + NO_HEARTBEAT_DURING_THE_TEST)) {
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            c.insertOne(new Document("_id", 1));
            awaitBothSecondaries(client);
            long known = client.getClusterDescription().getServerDescriptions().stream().filter(ServerDescription::isPrimary)
                    .findFirst().orElseThrow().getTopologyVersion().getCounter();
            set.proxy().failover();
            MongoNotPrimaryException error = assertThrows(MongoNotPrimaryException.class, () -> c.insertOne(new Document("_id", 2)));
            assertEquals(10107, error.getErrorCode());
            // as a real secondary's: the member's topologyVersion, newer than the one the driver knew from before the election
            assertEquals(known + 1, error.getResponse().getDocument("topologyVersion").getNumber("counter").longValue(),
                    error.getResponse()::toJson);
            c.insertOne(new Document("_id", 3)); // the driver re-checked the set and writes to the new primary
        }
        assertEquals(2, set.direct().getDatabase(db).getCollection("c").countDocuments());
    }

    /**
     * A secondary answers the commands a server allows on any member without secondaryOk (those
     * whose answer does not depend on the role): it passes them to the real node, so it answers
     * as the primary's listener does (the same node), where it used to refuse them as writes.
     */
    @Test
    void aSimulatedSecondaryPassesOnTheCommandsEveryMemberServes() {
        String primary = set.proxy().members().get(0).advertised().toString();
        String secondary = set.proxy().members().get(1).advertised().toString();
        for (String command : new String[] {"whatsmyuri", "listCommands", "hostInfo", "getCmdLineOpts", "connectionStatus"}) {
            assertEquals(outcome(primary, command), outcome(secondary, command), command);
            assertTrue(!outcome(secondary, command).equals("10107"), command + " refused as a write");
        }
    }

    /** "ok", or the error code, of {@code command} sent to one member without secondaryOk. */
    private static String outcome(String member, String command) {
        try (MongoClient client = MongoClients.create("mongodb://" + member + "/?directConnection=true&readPreference=primary")) {
            client.getDatabase("admin").runCommand(new BsonDocument(command, new org.bson.BsonInt32(1)), BsonDocument.class);
            return "ok";
        } catch (MongoCommandException e) {
            return String.valueOf(e.getErrorCode());
        }
    }

    @Test
    void aRuleForTheSecondaryRoleFailsSecondaryReadsOnlyAndThePrimaryServesAsUsual() throws InterruptedException {
        String db = UpstreamLane.freshDatabaseName("simmember");
        set.proxy().rules().put(set.proxy().ruleParser().parse("secondaryReads", BsonDocument.parse("{configureFailPoint: 'failCommand',"
                + " mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 13, member: 'secondary'}}")));
        try (MongoClient client = client("retryReads=true&heartbeatFrequencyMS=500")) {
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            c.insertOne(new Document("_id", 1));
            awaitBothSecondaries(client);
            // the primary's listener: the rule names the secondary role, so the read is served
            assertEquals(1, c.withReadPreference(ReadPreference.primary()).find().first().getInteger("_id"));
            assertEquals(0, Meters.faults(set.proxy().registry(), "errorReply", "find"), "a find on the primary is not faulted");
            // a secondary's listener (the same real node behind it): the rule fires
            MongoCommandException e = assertThrows(MongoCommandException.class,
                    () -> c.withReadPreference(ReadPreference.secondary()).find().first());
            assertEquals(13, e.getErrorCode());
            assertEquals(1, Meters.faults(set.proxy().registry(), "errorReply", "find"));
            assertEquals(1, c.withReadPreference(ReadPreference.primary()).find().first().getInteger("_id"));
        }
        assertEquals(1, Meters.faults(set.proxy().registry(), "errorReply", "find"), "only the secondary read was faulted");
        assertEquals(1, set.direct().getDatabase(db).getCollection("c").countDocuments(), "the write went to the primary untouched");
    }
    /**
     * A write blocked on a simulated secondary whose client gives up during the block: when the
     * block ends the secondary refuses it as it would have refused it at once, so nothing lands on
     * the real node (on a primary it would land; FaultActionsDriverTest shows that).
     */
    @Test
    void aBlockedWriteOnASimulatedSecondaryWhoseClientLeftNeverReachesTheRealNode() throws InterruptedException {
        String db = UpstreamLane.freshDatabaseName("sim_block");
        set.proxy().rules().put(set.proxy().ruleParser().parse("blockInsert", BsonDocument.parse("{configureFailPoint: 'failCommand',"
                + " mode: {times: 1}, data: {failCommands: ['insert'], blockConnection: true, blockTimeMS: 1500}}")));
        String secondary = set.proxy().members().get(1).advertised().toString();
        try (MongoClient client = MongoClients.create("mongodb://" + secondary + "/?directConnection=true&socketTimeoutMS=400")) {
            assertThrows(com.mongodb.MongoSocketReadTimeoutException.class,
                    () -> client.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1)));
        }
        Thread.sleep(1500 + 500); // past the block
        assertEquals(0, set.direct().getDatabase(db).getCollection("c").countDocuments(), "a secondary takes no write");
    }

    /**
     * A rule that blocks a write and loses its reply (or cuts it, or adds a writeConcernError), while a failover makes the
     * blocked member a secondary: the member refuses the write itself, and the rule's fate met that refusal. The fault was
     * counted while the driver got the NotWritablePrimary reply whole, so "dropReply: update=1" passed with no reply lost.
     */
    @ParameterizedTest
    @ValueSource(strings = {"dropReply: true", "truncateReplyBytes: 10", "writeConcernError: {code: 64}"})
    void aReplyFateCountedDuringABlockThatAFailoverEndsIsTheFateTheDriverMeets(String fate) throws Exception {
        String db = UpstreamLane.freshDatabaseName("sim_fate");
        CommandLog log = new CommandLog();
        try (MongoClient client = MongoClients.create(log.driverOn(set.proxy().connectionString() + "&retryWrites=true&"
                + NO_HEARTBEAT_DURING_THE_TEST).applyToClusterSettings(b -> b.serverSelectionTimeout(10, TimeUnit.SECONDS)).build())) {
            MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
            c.insertOne(new Document("_id", 1));
            awaitBothSecondaries(client);
            set.proxy().rules().put(set.proxy().ruleParser().parse("blockedThenFated", BsonDocument.parse("{configureFailPoint: 'failCommand',"
                    + " mode: {times: 1}, data: {failCommands: ['insert'], blockConnection: true, blockTimeMS: 1500, " + fate + "}}")));
            log.failed.clear();
            CompletableFuture<Void> insert = CompletableFuture.runAsync(() -> c.insertOne(new Document("_id", 2)));
            Thread.sleep(300); // into the block
            set.proxy().failover();
            insert.get(20, TimeUnit.SECONDS); // retried on the new primary
        }
        String label = fate.startsWith("truncate") ? "truncateReply" : fate.substring(0, fate.indexOf(':'));
        assertEquals(1, Meters.faults(set.proxy().registry(), label, "insert"), label);
        assertEquals(1, log.failed.size(), () -> "one failed attempt, then the retry: " + log.failed);
        Throwable first = log.failed.get(0).getThrowable();
        if (label.equals("writeConcernError")) { // the refusal, with the writeConcernError counted, and its own labels
            MongoCommandException refused = assertInstanceOf(MongoCommandException.class, first);
            assertEquals(10107, refused.getErrorCode());
            assertEquals(64, refused.getResponse().getDocument("writeConcernError").getInt32("code").getValue(), refused::toString);
            assertTrue(refused.hasErrorLabel("RetryableWriteError"), refused::toString);
        } else { // the reply lost or cut, as counted
            assertInstanceOf(MongoSocketException.class, first);
        }
        assertEquals(2, set.direct().getDatabase(db).getCollection("c").countDocuments(), "the write landed once, on its retry");
    }
}
