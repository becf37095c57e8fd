package io.blackpipe.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoSocketReadTimeoutException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.event.ServerHeartbeatFailedEvent;
import com.mongodb.event.ServerMonitorListener;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.CommandLog;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Rules on hello and isMaster, as the SDAM spec's tests set them on a server: an app's handshakes
 * and heartbeats fail (closed, or answered with an error) while other apps go on, and nothing of
 * it counts as an application command.
 */
class HelloFaultsDriverTest extends DriverRigTest {
    /**
     * A client through the proxy whose monitor's failed heartbeats land in {@code failedHeartbeats}.
     * It polls, so every heartbeat is a hello it sends, as in the SDAM spec's tests of failing
     * heartbeats (a streaming monitor's checks: StreamedHelloChecksFaultTest).
     */
    private MongoClient monitoredClient(String options, List<ServerHeartbeatFailedEvent> failedHeartbeats) {
        return monitoredClient(options, failedHeartbeats, new CommandLog());
    }

    private MongoClient monitoredClient(String options, List<ServerHeartbeatFailedEvent> failedHeartbeats, CommandLog commands) {
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(rig.proxy.connectionString() + "&serverMonitoringMode=poll&" + options))
                .addCommandListener(commands)
                .applyToClusterSettings(b -> b.serverSelectionTimeout(15, TimeUnit.SECONDS))
                .applyToServerSettings(b -> b.addServerMonitorListener(new ServerMonitorListener() {
                    @Override
                    public void serverHeartbeatFailed(ServerHeartbeatFailedEvent event) {
                        failedHeartbeats.add(event);
                    }
                }))
                .build());
    }

    @Test
    void closingTheHellosOfOneAppKeepsItFromTheServerAndOthersGoOn() {
        rig.rule("{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['hello', 'isMaster'],"
                + " appName: 'victim', closeConnection: true}}");
        MongoClient victim = rig.client("appName=victim&serverSelectionTimeoutMS=1500");
        assertThrows(MongoTimeoutException.class, () -> rig.collection(victim).insertOne(new Document("_id", 1)),
                "no hello of the app gets an answer, so no member is ever selectable");
        rig.collection(rig.client("appName=bystander")).insertOne(new Document("_id", 2));
        assertTrue(rig.faults("closeConnection", "hello") + rig.faults("closeConnection", "isMaster") > 0);
        assertEquals(0, rig.attempts("hello"), "hellos are not application commands");
        assertEquals(List.of(2), rig.serverSide("c").find().map(d -> d.getInteger("_id")).into(new ArrayList<>()));
    }

    @Test
    void anErrorOnTheHeartbeatsReachesTheDriversMonitorAndTheAppRecoversOnceTheRuleIsSpent() throws Exception {
        List<ServerHeartbeatFailedEvent> failedHeartbeats = new CopyOnWriteArrayList<>();
        try (MongoClient sick = monitoredClient("appName=sick&heartbeatFrequencyMS=500", failedHeartbeats)) {
            rig.collection(sick).insertOne(new Document("_id", 1)); // the member is known and the pool open
            rig.rule("{configureFailPoint: 'failCommand', mode: {times: 2}, data: {failCommands: ['hello'],"
                    + " appName: 'sick', errorCode: 91}}");
            Await.until(Duration.ofSeconds(15), "both errors to be sent", () -> rig.faults("errorReply", "hello")
                    + rig.faults("errorReply", "isMaster") == 2);
            rig.collection(sick).insertOne(new Document("_id", 2)); // the member is found again once the rule is spent
        }
        assertTrue(failedHeartbeats.stream().anyMatch(e -> e.getThrowable() instanceof MongoCommandException error
                && error.getErrorCode() == 91), "the driver's monitor saw the error: " + failedHeartbeats);
        assertEquals(2, rig.serverCount());
        assertEquals(0, rig.attempts("hello"));
    }

    @Test
    void aBlockedHeartbeatTimesOutTheMonitorAndTheHeldHelloIsReleased() throws Exception {
        List<ServerHeartbeatFailedEvent> failedHeartbeats = new CopyOnWriteArrayList<>();
        try (MongoClient slow = monitoredClient("appName=slow&heartbeatFrequencyMS=500&connectTimeoutMS=400", failedHeartbeats)) {
            rig.collection(slow).insertOne(new Document("_id", 1));
            rig.rule("{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['hello', 'isMaster'],"
                    + " appName: 'slow', blockConnection: true, blockTimeMS: 1500}}");
            // the monitor's socket timeout is connectTimeoutMS: 400 ms into the block it gives up
            Await.until(Duration.ofSeconds(15), () -> "a heartbeat to time out: " + failedHeartbeats,
                    () -> failedHeartbeats.stream().anyMatch(e -> e.getThrowable() instanceof MongoSocketReadTimeoutException));
            rig.collection(slow).insertOne(new Document("_id", 2));
        }
        assertEquals(1, rig.faults("blockConnection", "hello") + rig.faults("blockConnection", "isMaster"));
        assertEquals(2, rig.serverCount());
        // the hello held when its client gave up is released: the PARANOID leak detector of the test run would report it
    }
    /**
     * A fault on a connection's handshake fails no application command: under retryWrites the driver retries the write
     * whose first connection failed its handshake (without, the write fails with the network error), and the write
     * reaches the proxy once, a first attempt, as the driver's own command monitoring sees it start once. The proxy
     * cannot tell that write from new work (a handshake carries no session); the fault is counted on hello.
     */
    @ParameterizedTest(name = "retryWrites={0}")
    @ValueSource(booleans = {true, false})
    void aWriteWhoseFirstConnectionFailedItsHandshakeIsCountedOnceOrNotAtAll(boolean retryWrites) throws Exception {
        List<ServerHeartbeatFailedEvent> failedHeartbeats = new CopyOnWriteArrayList<>();
        CommandLog driver = new CommandLog();
        try (MongoClient client = monitoredClient("appName=handshakes&retryWrites=" + retryWrites, failedHeartbeats, driver)) {
            Await.until(Duration.ofSeconds(15), "the monitor to know the member",
                    () -> client.getClusterDescription().getServerDescriptions().stream().anyMatch(d -> d.isOk()));
            // a polling monitor sends no more handshakes: the next one is the pool's first connection's
            rig.rule("{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['hello', 'isMaster'],"
                    + " appName: 'handshakes', closeConnection: true, commandMatches: {client: {$exists: true}}}}");
            if (retryWrites) {
                rig.collection(client).insertOne(new Document("_id", 1));
            } else {
                assertThrows(MongoSocketException.class, () -> rig.collection(client).insertOne(new Document("_id", 1)));
            }
        }
        assertEquals(1, rig.faults("closeConnection", "hello") + rig.faults("closeConnection", "isMaster"), "the handshake's");
        long sent = retryWrites ? 1 : 0;
        assertEquals(sent, driver.startedCount("insert"), "the driver's command monitoring");
        assertEquals(sent, rig.attempts("insert"), "the proxy's attempts");
        assertEquals(0, rig.retries("insert"), "a first attempt, if any");
        assertEquals(sent, rig.serverCount());
    }
}
