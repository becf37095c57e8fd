package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoClientSettings;
import com.mongodb.MongoSocketException;
import com.mongodb.ReadPreference;
import com.mongodb.ServerAddress;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.connection.ServerDescription;
import com.mongodb.connection.ServerMonitoringMode;
import com.mongodb.event.ConnectionClosedEvent;
import com.mongodb.event.ConnectionCreatedEvent;
import com.mongodb.event.ConnectionPoolClearedEvent;
import com.mongodb.event.ConnectionPoolListener;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.CommandLog;
import io.blackpipe.testing.UpstreamLane;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * `blackpipe connections list --json` and `blackpipe connections reset --member primary` against a running
 * proxy of a three-member set (simulated over the lane's node), with real drivers: the list is the JSON a
 * script parses, a row per member with the fields the README promises, and its counts are the driver's own
 * connections (its pools, as its pool events report them, and one monitor per member) as clients come and
 * go; the reset cuts the primary's connections only, failing the driver's in-flight find with a network error
 * (history and counters name connectionsReset), while the secondaries keep every connection they had.
 */
class ConnectionsCliTest {
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    /** A driver's connections, from its pool events: open per member, and the members whose pool it cleared. */
    private static final class Pools implements ConnectionPoolListener {
        final Map<String, AtomicInteger> open = new ConcurrentHashMap<>();
        final List<String> cleared = new CopyOnWriteArrayList<>();

        @Override
        public void connectionCreated(ConnectionCreatedEvent event) {
            open.computeIfAbsent(address(event.getConnectionId().getServerId().getAddress()), a -> new AtomicInteger()).incrementAndGet();
        }

        @Override
        public void connectionClosed(ConnectionClosedEvent event) {
            open.get(address(event.getConnectionId().getServerId().getAddress())).decrementAndGet();
        }

        @Override
        public void connectionPoolCleared(ConnectionPoolClearedEvent event) {
            cleared.add(address(event.getServerId().getAddress()));
        }

        /** What each member should count of this driver's connections: its pooled ones and its one (polling) monitor. */
        Map<String, Integer> expected(Set<String> members) {
            return members.stream().collect(Collectors.toMap(m -> m, m -> 1 + open.getOrDefault(m, new AtomicInteger()).get()));
        }
    }

    private static String address(ServerAddress address) {
        return address.getHost() + ":" + address.getPort();
    }

    /** A driver on the rig with one monitoring connection per member (polled: no second, streaming one), its pool events in {@code pools}. */
    private static MongoClient driver(AdminRig rig, Pools pools, CommandLog log) {
        MongoClientSettings.Builder settings = (log == null ? new CommandLog() : log)
                .driverOn(CommandLog.withOptions(rig.proxy().connectionString(), "retryReads=false&retryWrites=false&socketTimeoutMS=60000"))
                .applyToServerSettings(b -> b.serverMonitoringMode(ServerMonitoringMode.POLL))
                .applyToConnectionPoolSettings(b -> b.addConnectionPoolListener(pools));
        return MongoClients.create(settings.build());
    }

    /** As {@link #driver}'s settings, with an appName. */
    private static MongoClientSettings namedDriver(AdminRig rig, Pools pools, String appName) {
        return new CommandLog().driverOn(CommandLog.withOptions(rig.proxy().connectionString(), "appName=" + appName))
                .applyToServerSettings(b -> b.serverMonitoringMode(ServerMonitoringMode.POLL))
                .applyToConnectionPoolSettings(b -> b.addConnectionPoolListener(pools)).build();
    }

    private static AdminRig threeMembers() {
        return AdminRig.start(ProxyConfig.embedded(UpstreamLane.singleNodeUri()).withSimulatedMembers(3));
    }

    /** `connections list --json`, parsed: its member rows by advertised address. */
    private static Map<String, BsonDocument> listed(AdminRig rig) {
        CliRun list = rig.run("connections", "list", "--json");
        assertEquals(0, list.exitCode(), list::toString);
        Map<String, BsonDocument> rows = new HashMap<>();
        for (BsonValue row : BsonDocument.parse(list.out()).getArray("members")) {
            rows.put(row.asDocument().getString("advertised").getValue(), row.asDocument());
        }
        return rows;
    }

    private static Map<String, Integer> openListed(AdminRig rig) {
        return listed(rig).entrySet().stream().collect(Collectors.toMap(Map.Entry::getKey,
                e -> e.getValue().getNumber("openConnections").intValue()));
    }

    private static void awaitListed(AdminRig rig, java.util.function.Supplier<Map<String, Integer>> expected, String what)
            throws InterruptedException {
        Await.until(Duration.ofSeconds(60), () -> what + ": expected " + expected.get() + ", listed " + openListed(rig),
                () -> expected.get().equals(openListed(rig)));
    }

    private static Map<String, Integer> sum(Map<String, Integer> a, Map<String, Integer> b) {
        Map<String, Integer> sum = new HashMap<>(a);
        b.forEach((member, n) -> sum.merge(member, n, Integer::sum));
        return sum;
    }

    private static void awaitSecondaries(MongoClient client) throws InterruptedException {
        Await.until(Duration.ofSeconds(30), () -> "the driver to see both secondaries: " + client.getClusterDescription(),
                () -> client.getClusterDescription().getServerDescriptions().stream().filter(ServerDescription::isSecondary).count() == 2);
    }

    /** blackpipe_connections_total per member (upstream address), read from the proxy's /metrics. */
    private static Map<String, Double> connectionsTotal(AdminRig rig) throws IOException, InterruptedException {
        String metrics = HTTP.send(HttpRequest.newBuilder(URI.create(rig.url() + "/metrics")).timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        Map<String, Double> totals = new HashMap<>();
        metrics.lines().filter(l -> l.startsWith("blackpipe_connections_total{")).forEach(l -> {
            String member = l.replaceAll(".*member=\"([^\"]*)\".*", "$1");
            totals.put(member, Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)));
        });
        return totals;
    }

    @Test
    void theJsonListIsARowPerMemberWithItsOpenConnectionsAsTheDriversOpenAndCloseThem() throws Exception {
        String db = UpstreamLane.freshDatabaseName("connectionsList");
        try (AdminRig rig = threeMembers()) {
            Map<String, BsonDocument> before = listed(rig);
            assertEquals(rig.proxy().members().stream().map(m -> m.advertised().toString()).collect(Collectors.toSet()), before.keySet());
            for (BsonDocument row : before.values()) {
                assertEquals(Set.of("upstream", "advertised", "role", "state", "openConnections", "latencyMS", "jitterMS", "latencyDirection",
                                "bandwidthBytesPerSecond", "bandwidthDirection", "idleTimeoutMS", "idleTimeoutThen"), row.keySet(),
                        row::toJson);
                assertTrue(row.isString("upstream") && row.isString("role") && row.isNumber("openConnections"), row::toJson);
                assertEquals("up", row.getString("state").getValue(), row::toJson);
                assertEquals(0, row.getNumber("openConnections").intValue(), () -> "no client yet: " + row.toJson());
            }
            Set<String> members = before.keySet();

            Pools first = new Pools();
            try (MongoClient client = driver(rig, first, null)) {
                MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
                c.insertOne(new Document("_id", 1));
                awaitSecondaries(client);
                assertEquals(new Document("_id", 1), c.withReadPreference(ReadPreference.secondary()).find().first());
                awaitListed(rig, () -> first.expected(members), "the first driver's monitor and pooled connections, member by member");

                Map<String, BsonDocument> rows = listed(rig);
                for (ServerDescription server : client.getClusterDescription().getServerDescriptions()) {
                    BsonDocument row = rows.get(address(server.getAddress()));
                    assertEquals(server.isPrimary() ? "primary" : "secondary", row.getString("role").getValue(),
                            () -> "the role the driver sees: " + row.toJson() + " / " + server);
                }

                Pools second = new Pools();
                try (MongoClient another = driver(rig, second, null)) {
                    another.getDatabase(db).getCollection("c").insertOne(new Document("_id", 2));
                    awaitListed(rig, () -> sum(first.expected(members), second.expected(members)), "both drivers' connections");
                }
                awaitListed(rig, () -> first.expected(members), "the first driver's connections alone, once the second closed");
            }
            awaitListed(rig, () -> members.stream().collect(Collectors.toMap(m -> m, m -> 0)), "none, once every driver closed");
        }
    }

    /**
     * After the members' counts, `connections list` lists each open connection: its id (the one history entries give),
     * member, client address, appName and when it opened; they are the driver's own connections, member by member.
     */
    @Test
    void eachOpenConnectionIsListedWithTheIdItsHistoryEntriesGive() throws Exception {
        String db = UpstreamLane.freshDatabaseName("connectionsEach");
        try (AdminRig rig = threeMembers()) {
            Set<String> members = listed(rig).keySet();
            Map<String, String> advertisedByUpstream = rig.proxy().members().stream()
                    .collect(Collectors.toMap(m -> m.upstream().toString(), m -> m.advertised().toString()));
            Pools pools = new Pools();
            Instant before = Instant.now();
            try (MongoClient client = MongoClients.create(namedDriver(rig, pools, "listing-app"))) {
                client.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1));
                awaitListed(rig, () -> pools.expected(members), "the driver's monitor and pooled connections");

                CliRun json = rig.run("connections", "list", "--json");
                assertEquals(0, json.exitCode(), json::toString);
                List<BsonDocument> connections = BsonDocument.parse(json.out()).getArray("connections").stream().map(BsonValue::asDocument).toList();
                Map<String, Long> perMember = connections.stream().collect(Collectors.groupingBy(
                        c -> advertisedByUpstream.get(c.getString("member").getValue()), Collectors.counting()));
                assertEquals(pools.expected(members).entrySet().stream().filter(e -> e.getValue() > 0)
                        .collect(Collectors.toMap(Map.Entry::getKey, e -> (long) e.getValue())), perMember, json::toString);
                for (BsonDocument connection : connections) {
                    assertEquals(Set.of("id", "member", "client", "app", "openedAt"), connection.keySet(), connection::toJson);
                    assertEquals("listing-app", connection.getString("app").getValue(), () -> "every one's handshake named it: " + connection.toJson());
                    assertTrue(connection.getString("client").getValue().matches("127\\.0\\.0\\.1:\\d+"), connection::toJson);
                    Instant opened = Instant.parse(connection.getString("openedAt").getValue());
                    assertTrue(!opened.isBefore(before.minusSeconds(1)) && !opened.isAfter(Instant.now()), connection::toJson);
                }
                assertEquals(connections.size(), connections.stream().map(c -> c.getNumber("id").longValue()).distinct().count(), json::toString);

                BsonDocument insert = rig.run("history", "--json").lines().stream().map(BsonDocument::parse)
                        .filter(l -> l.getString("command").getValue().equals("insert") && l.getString("ns").getValue().equals(db + ".c"))
                        .findFirst().orElseThrow();
                long insertedOn = insert.getNumber("connection").longValue();
                assertTrue(connections.stream().anyMatch(c -> c.getNumber("id").longValue() == insertedOn
                                && c.getString("member").getValue().equals(insert.getString("member").getValue())),
                        () -> "the insert's connection " + insertedOn + " is listed: " + json.out());

                CliRun text = rig.run("connections", "list");
                assertEquals(0, text.exitCode(), text::toString);
                List<String> lines = text.lines();
                int header = lines.indexOf(lines.stream().filter(l -> l.startsWith("ID ")).findFirst()
                        .orElseThrow(() -> new AssertionError("no connections table: " + text)));
                assertEquals(List.of("ID", "MEMBER", "CLIENT", "APP", "OPENED"), List.of(lines.get(header).trim().split("\\s+")), text::toString);
                assertEquals("", lines.get(header - 1), "a blank line after the members table: " + text);
                assertEquals(connections.size(), lines.size() - header - 1, text::toString);
                assertTrue(lines.stream().skip(header + 1).anyMatch(l -> l.startsWith(insertedOn + " ") && l.contains(" listing-app ")), text::toString);
            }
            Await.until(Duration.ofSeconds(30), "no connection listed once the driver closed", () -> BsonDocument.parse(
                    rig.run("connections", "list", "--json").out()).getArray("connections").isEmpty());
        }
    }

    @Test
    void resettingThePrimarysConnectionsFailsTheDriversInFlightFindAndLeavesTheSecondariesAlone() throws Exception {
        String db = UpstreamLane.freshDatabaseName("connectionsReset");
        try (AdminRig rig = threeMembers()) {
            Set<String> members = listed(rig).keySet();
            Pools pools = new Pools();
            CommandLog log = new CommandLog();
            try (MongoClient client = driver(rig, pools, log)) {
                MongoCollection<Document> c = client.getDatabase(db).getCollection("c");
                c.insertOne(new Document("_id", 1));
                awaitSecondaries(client);
                MongoCollection<Document> onSecondary = c.withReadPreference(ReadPreference.secondary());
                assertEquals(new Document("_id", 1), onSecondary.find().first());
                awaitListed(rig, () -> pools.expected(members), "the driver's connections");

                String ruleId = rig.run("fault", "add", "--command", "find", "--hang", "--namespace", db + ".held", "--times", "1").out().strip();
                CompletableFuture<Document> held = CompletableFuture.supplyAsync(() -> client.getDatabase(db).getCollection("held").find().first());
                CliRun hanging = rig.run("expect", "--faults", "hang:find=1", "--wait", "60s");
                assertEquals(0, hanging.exitCode(), hanging::toString);

                Map<String, BsonDocument> rows = listed(rig);
                String primary = rows.values().stream().filter(r -> r.getString("role").getValue().equals("primary"))
                        .map(r -> r.getString("advertised").getValue()).findFirst().orElseThrow();
                String primaryUpstream = rows.get(primary).getString("upstream").getValue();
                Map<String, Integer> openBefore = openListed(rig);
                Map<String, Double> totalsBefore = connectionsTotal(rig);
                assertEquals(2, openBefore.get(primary), () -> "the monitor and the held find's connection: " + openBefore);

                CliRun reset = rig.run("connections", "reset", "--member", "primary");
                assertEquals(0, reset.exitCode(), reset::toString);
                assertEquals("reset 2 connections of primary", reset.out().strip());

                ExecutionException cut = assertThrows(ExecutionException.class, () -> held.get(60, TimeUnit.SECONDS));
                assertInstanceOf(MongoSocketException.class, cut.getCause(), "a network error, as the driver meets a reset");
                assertEquals(1, rig.proxy().rules().fired(ruleId));

                // the driver reconnects to the primary and serves on; its secondaries' connections were never touched
                assertEquals(new Document("_id", 1), c.find().first());
                assertTrue(pools.cleared.stream().allMatch(primary::equals) && !pools.cleared.isEmpty(),
                        () -> "the driver cleared its pool of the primary only: " + pools.cleared);
                awaitListed(rig, () -> pools.expected(members), "the driver's connections after it reconnected");
                Map<String, Integer> openAfter = openListed(rig);
                Map<String, Double> totalsAfter = connectionsTotal(rig);
                for (String member : members) {
                    if (!member.equals(primary)) {
                        assertEquals(openBefore.get(member), openAfter.get(member), () -> member + " kept its connections");
                    }
                }
                for (var member : rig.proxy().members()) {
                    String upstream = member.upstream().toString();
                    if (upstream.equals(primaryUpstream)) {
                        assertTrue(totalsAfter.get(upstream) > totalsBefore.get(upstream), () -> "the driver reconnected to the primary: "
                                + totalsBefore + " -> " + totalsAfter);
                    } else {
                        assertEquals(totalsBefore.get(upstream), totalsAfter.get(upstream), () -> upstream + " had no new connection: "
                                + totalsBefore + " -> " + totalsAfter);
                    }
                }

                assertEquals(new Document("_id", 1), onSecondary.find().first(), "the secondaries serve on");

                CliRun counted = rig.run("expect", "--faults", "connectionsReset:find=1", "--faults", "hang:find=1",
                        "--outcomes", "find:network_error=1", "--wait", "30s");
                assertEquals(0, counted.exitCode(), counted::toString);
                CliRun history = rig.run("history", "--json");
                assertEquals(0, history.exitCode(), history::toString);
                List<BsonDocument> heldFinds = history.lines().stream().map(BsonDocument::parse)
                        .filter(l -> l.getString("ns").getValue().equals(db + ".held")).toList();
                assertEquals(1, heldFinds.size(), history::toString);
                BsonDocument line = heldFinds.get(0);
                assertEquals("connectionsReset", line.getString("fault").getValue(), line::toJson);
                assertEquals("network_error", line.getString("outcome").getValue(), line::toJson);
                assertEquals("info", line.getString("type").getValue(), line::toJson);
                assertEquals(primaryUpstream, line.getString("member").getValue(), line::toJson);
            }
        }
    }
}
