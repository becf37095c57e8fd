package io.blackpipe.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.event.CommandFailedEvent;
import com.mongodb.event.CommandSucceededEvent;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.CommandLog;
import io.blackpipe.testing.UpstreamLane;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.Document;

/**
 * One proxy in front of the test lane's upstream, the real Java driver through it, and what both
 * sides counted: the driver's command events and the proxy's meters. One rig per test, so every
 * counter starts at zero.
 */
final class DriverRig implements AutoCloseable {
    final ProxyServer proxy;
    final MongoClient direct;
    final String db;
    private final List<MongoClient> clients = new ArrayList<>();
    private final CommandLog log = new CommandLog();
    private int ruleCount;

    DriverRig(String dbPrefix) {
        this(dbPrefix, 0);
    }

    /** @param seed the proxy's seed of random fault decisions ({activationProbability}) */
    DriverRig(String dbPrefix, long seed) {
        this(UpstreamLane.uri(), UpstreamLane.directClient(), UpstreamLane.freshDatabaseName(dbPrefix), seed);
    }

    /** In front of another upstream than the lane's (a scripted member): {@code direct} reads it past the proxy. */
    DriverRig(String upstreamUri, MongoClient direct, String db, long seed) {
        proxy = ProxyServer.start(ProxyConfig.embedded(upstreamUri).withFaultOptions(seed, false));
        this.direct = direct;
        this.db = db;
    }

    /**
     * A driver client through the proxy. {@code options} are URI options; socketTimeoutMS is 5000
     * unless they set it, so that a bug cannot hang the run.
     */
    MongoClient client(String options) {
        String uri = proxy.connectionString();
        StringBuilder all = new StringBuilder(options);
        if (!options.contains("socketTimeoutMS")) {
            all.append(all.length() == 0 ? "" : "&").append("socketTimeoutMS=5000");
        }
        all.append("&connectTimeoutMS=5000");
        MongoClient client = MongoClients.create(log.driverOn(CommandLog.withOptions(uri, all.toString())).build());
        clients.add(client);
        return client;
    }

    MongoCollection<Document> collection(MongoClient client) {
        return client.getDatabase(db).getCollection("c");
    }

    /** What the server holds, read past the proxy. */
    MongoCollection<Document> serverSide(String collection) {
        return direct.getDatabase(db).getCollection(collection);
    }

    long serverCount() {
        return serverSide("c").countDocuments();
    }

    void rule(String json) {
        putRule("r" + ruleCount++, json);
    }

    /** Adds (or, for a known id, replaces) the rule with this id, as PUT /api/v1/rules/{id} does. */
    void putRule(String id, String json) {
        proxy.rules().put(proxy.ruleParser().parse(id, BsonDocument.parse(json)));
    }

    /** A failCommand rule on {@code commands} with the given mode and extra data fields. */
    void rule(String mode, String command, String data) {
        rule("{configureFailPoint: 'failCommand', mode: " + mode + ", data: {failCommands: ['" + command + "'], " + data + "}}");
    }

    long driverStarted(String command) {
        return log.startedCount(command);
    }

    List<CommandSucceededEvent> driverSucceeded() {
        return List.copyOf(log.succeeded);
    }

    List<CommandFailedEvent> driverFailed(String command) {
        return log.failed.stream().filter(e -> e.getCommandName().equals(command)).toList();
    }

    long attempts(String command) {
        return Meters.attempts(proxy.registry(), command);
    }

    long retries(String command) {
        return Meters.retries(proxy.registry(), command);
    }

    long outcomes(String command, String outcome) {
        return Meters.outcomes(proxy.registry(), command, outcome);
    }

    long faults(String fault, String command) {
        return Meters.faults(proxy.registry(), fault, command);
    }

    long allFaults() {
        return (long) Meters.sum(proxy.registry(), "blackpipe.faults.injected");
    }

    /**
     * The driver and the proxy agree on how often {@code command} was sent, and on how many of
     * those were retries (every attempt after the first of one operation).
     */
    void assertAttempts(String command, long attempts, long retries) {
        assertEquals(attempts, driverStarted(command), "CommandStartedEvents of " + command);
        assertEquals(attempts, attempts(command), "blackpipe.command.attempts of " + command);
        assertEquals(retries, retries(command), "blackpipe.command.retries of " + command);
    }

    void awaitOutcome(String command, String outcome, long count) throws InterruptedException {
        Await.until(Duration.ofSeconds(10), () -> "outcome " + outcome + " of " + command + " to reach " + count
                + " (is " + outcomes(command, outcome) + ")", () -> outcomes(command, outcome) >= count);
        assertEquals(count, outcomes(command, outcome), "outcome " + outcome + " of " + command);
    }

    @Override
    public void close() {
        clients.forEach(MongoClient::close);
        direct.close();
        proxy.close();
    }
}
