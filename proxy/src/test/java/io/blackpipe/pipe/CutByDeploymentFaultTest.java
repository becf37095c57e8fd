package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoException;
import com.mongodb.MongoSocketException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.blackpipe.fault.Latency;
import io.blackpipe.observe.HistoryEntry;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.TcpTap;
import io.blackpipe.topology.Member;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A command its member's outage or a connections reset cuts is labelled with that fault, as a
 * command a rule breaks is labelled with the rule's: in the history (fault) and in
 * blackpipe_faults_injected_total. The real Java driver talks through the proxy to a scripted
 * mongod behind a tap that holds the member's replies, so the command is in flight, deterministically,
 * when the fault cuts it.
 */
class CutByDeploymentFaultTest {
    private static final Duration WAIT = Duration.ofSeconds(20);

    private ScriptedMongod server;
    private TcpTap tap;
    private ProxyServer proxy;
    private MongoClient client;
    private MongoCollection<Document> items;
    private Member member;

    @BeforeEach
    void start() throws Exception {
        server = ScriptedMongod.start();
        tap = new TcpTap("127.0.0.1", server.port());
        String tapAddress = "127.0.0.1:" + tap.port();
        // the member is known by the tap's address, so the proxy's upstream connections go through it
        server.setAdvertisedHosts(List.of(tapAddress));
        server.setAdvertisedMe(tapAddress);
        server.setAdvertisedPrimary(tapAddress);
        proxy = ProxyServer.start(ProxyConfig.embedded("mongodb://" + tapAddress + "/?replicaSet=" + ScriptedMongod.SET_NAME));
        member = proxy.members().get(0);
        // polling monitor, long heartbeat: no monitoring traffic waits in the tap beside the command
        client = MongoClients.create(proxy.connectionString() + "&retryReads=false&retryWrites=false"
                + "&serverMonitoringMode=poll&heartbeatFrequencyMS=60000&socketTimeoutMS=30000&appName=cut-test");
        items = client.getDatabase("shop").getCollection("items");
        items.insertOne(new Document("_id", 1)); // the pooled connection is up
    }

    @AfterEach
    void stop() throws Exception {
        tap.holdReplies(false);
        client.close();
        proxy.close();
        tap.close();
        server.close();
    }

    /** Starts a find whose reply the tap holds; returns once the proxy has forwarded it (it is in flight). */
    private CompletableFuture<Document> findInFlight() throws InterruptedException {
        tap.holdReplies(true);
        CompletableFuture<Document> find = CompletableFuture.supplyAsync(() -> items.find().first());
        Await.until(WAIT, "the find to reach the member", () -> server.commandsReceived("find").size() == 1);
        return find;
    }

    private static Throwable failure(CompletableFuture<Document> operation) throws Exception {
        try {
            Document unexpected = operation.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            throw new AssertionError("the operation succeeded: " + unexpected);
        } catch (ExecutionException e) {
            return e.getCause();
        }
    }

    private HistoryEntry lastFind() throws InterruptedException {
        Await.until(WAIT, "the find's history entry", () -> proxy.history().recent().stream().anyMatch(e -> e.command().equals("find")));
        return proxy.history().recent().stream().filter(e -> e.command().equals("find")).reduce((a, b) -> b).orElseThrow();
    }

    /** The Prometheus exposition's line for blackpipe_faults_injected_total{fault, command="find", this member}. */
    private String scrapedFaultLine(String fault) {
        String labels = "command=\"find\",fault=\"" + fault + "\",member=\"" + member.upstream() + "\"";
        return proxy.registry().scrape().lines().filter(l -> l.startsWith("blackpipe_faults_injected_total{" + labels + "}"))
                .findFirst().orElseThrow(() -> new AssertionError("no faults_injected line with " + labels + " in:\n"
                        + proxy.registry().scrape()));
    }

    @Test
    void aCommandInFlightWhenItsMemberGoesDownIsLabelledOutage() throws Exception {
        CompletableFuture<Document> find = findInFlight();
        proxy.outage(member.upstream().toString(), 0);

        assertInstanceOf(MongoSocketException.class, failure(find), "the driver sees the reset");
        HistoryEntry entry = lastFind();
        assertEquals("outage", entry.fault(), entry::toJson);
        assertEquals("network_error", entry.outcome());
        assertEquals("info", entry.type(), "it may have happened: the member had it");
        assertEquals("cut-test", entry.app());
        assertTrue(entry.toJson().contains("\"fault\": \"outage\""), entry::toJson);
        assertEquals(1, Meters.faults(proxy.registry(), "outage", "find"));
        assertEquals("blackpipe_faults_injected_total{command=\"find\",fault=\"outage\",member=\"" + member.upstream() + "\"} 1.0",
                scrapedFaultLine("outage"));
        assertEquals(1, Meters.outcomes(proxy.registry(), "find", "network_error"));
    }

    @Test
    void aCommandInFlightWhenItsConnectionsAreResetIsLabelledConnectionsReset() throws Exception {
        CompletableFuture<Document> find = findInFlight();
        int reset = proxy.select("all").stream().mapToInt(MemberListener::resetConnections).sum();
        assertTrue(reset >= 2, "the driver's monitor and pooled connection: " + reset);

        assertInstanceOf(MongoSocketException.class, failure(find));
        HistoryEntry entry = lastFind();
        assertEquals("connectionsReset", entry.fault(), entry::toJson);
        assertEquals("network_error", entry.outcome());
        assertEquals(1, Meters.faults(proxy.registry(), "connectionsReset", "find"));
        assertTrue(scrapedFaultLine("connectionsReset").endsWith(" 1.0"));
    }

    /**
     * On a slow link the reset reaches the client late, but the proxy's side of the connection ends at once, as the
     * member's side of a real one does: the member's connection closes with it, so the reply the member sends while
     * the reset is on its way is not counted as a find that went well.
     */
    @Test
    void aCommandInFlightWhenItsSlowConnectionIsResetIsCutThoughItsReplyComesBeforeTheResetArrives() throws Exception {
        proxy.latency(member.upstream().toString(), new Latency(1_500, 0), 0);
        CompletableFuture<Document> find = findInFlight();
        proxy.select("all").forEach(MemberListener::resetConnections);
        tap.holdReplies(false); // the member answers now, while the reset is still on its way to the client

        assertInstanceOf(MongoSocketException.class, failure(find));
        HistoryEntry entry = lastFind();
        assertEquals("connectionsReset", entry.fault(), entry::toJson);
        assertEquals("network_error", entry.outcome());
        assertEquals(0, Meters.outcomes(proxy.registry(), "find", "ok"));
    }

    /**
     * A rule's delay still holding the reply (or its trickle, the first piece sent) did not end the
     * command: the outage did, and names it. Both faults were injected, and both are counted.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {"delayReply | delayReplyMS: 60000", "trickleReply | trickleReplyBytes: 8, trickleReplyIntervalMS: 60000"})
    void aHeldReplyCutByAnOutageIsLabelledOutageAndBothFaultsCounted(String fault, String fate) throws Exception {
        proxy.rules().put(proxy.ruleParser().parse("slow", BsonDocument.parse("{configureFailPoint: 'failCommand',"
                + " mode: 'alwaysOn', data: {failCommands: ['find'], " + fate + "}}")));
        double repliedBefore = Meters.sum(proxy.registry(), "blackpipe.bytes", "direction", "upstream_to_client");
        CompletableFuture<Document> find = CompletableFuture.supplyAsync(() -> items.find().first());
        Await.until(WAIT, "the member's reply to reach the proxy and wait out the delay there",
                () -> server.commandsReceived("find").size() == 1
                        && Meters.sum(proxy.registry(), "blackpipe.bytes", "direction", "upstream_to_client") > repliedBefore);
        proxy.outage(member.upstream().toString(), 0);

        assertInstanceOf(MongoSocketException.class, failure(find));
        HistoryEntry entry = lastFind();
        assertEquals("outage", entry.fault(), entry::toJson);
        assertEquals(1, Meters.faults(proxy.registry(), fault, "find"));
        assertEquals(1, Meters.faults(proxy.registry(), "outage", "find"));
        assertEquals(1, Meters.outcomes(proxy.registry(), "find", "network_error"), "ended once");
    }

    /** A command that no deployment fault cut keeps what it had: here, no fault at all. */
    @Test
    void aCommandWhoseClientGaveUpOnItsOwnHasNoFaultLabel() throws Exception {
        try (MongoClient impatient = MongoClients.create(proxy.connectionString() + "&retryReads=false"
                + "&serverMonitoringMode=poll&heartbeatFrequencyMS=60000&socketTimeoutMS=500")) {
            MongoCollection<Document> c = impatient.getDatabase("shop").getCollection("items");
            c.find().first(); // its pooled connection is up
            tap.holdReplies(true);
            assertInstanceOf(MongoSocketException.class, assertThrows(MongoException.class, () -> c.find().first()),
                    "a socket timeout: the driver closes the connection");
        }
        Await.until(WAIT, "the find to end", () -> Meters.outcomes(proxy.registry(), "find", "network_error") == 1);
        assertNull(lastFind().fault(), lastFind()::toJson);
        assertEquals(0, (long) Meters.sum(proxy.registry(), "blackpipe.faults.injected"));
    }
}
