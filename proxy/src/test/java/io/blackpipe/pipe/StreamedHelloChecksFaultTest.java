package io.blackpipe.pipe;

import static io.blackpipe.pipe.ScriptedProxy.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoSocketReadTimeoutException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.event.ServerHeartbeatFailedEvent;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.UpstreamLane;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * A driver's streaming monitor sends one awaitable hello and the member streams its replies, one each
 * maxAwaitTimeMS: mongod makes each by running the hello again, so its failCommand failpoint fails those checks too
 * (the SDAM spec's "Command error on Monitor check" and "Network error on Monitor check"). A rule on hello does the
 * same to the member's streamed replies: the driver's awaited heartbeat fails, as against mongod, and once the rule
 * is gone the monitor comes back. Against a scripted mongod that streams as mongod does.
 */
class StreamedHelloChecksFaultTest {
    private static final String APP = "streamcheck";

    @Test
    void anErrorOnHelloFailsAStreamedCheckAsTheServersFailpointDoes() throws Exception {
        ServerHeartbeatFailedEvent failed = awaitedCheckFailsUnder("errorCode: 2");
        MongoCommandException error = (MongoCommandException) failed.getThrowable();
        assertEquals(2, error.getErrorCode(), error.getMessage());
    }

    @Test
    void aClosedConnectionOnHelloFailsAStreamedCheckAsANetworkError() throws Exception {
        ServerHeartbeatFailedEvent failed = awaitedCheckFailsUnder("closeConnection: true");
        assertTrue(failed.getThrowable() instanceof MongoSocketException, failed.getThrowable().toString());
    }

    /**
     * A block longer than the monitor waits for a streamed reply (connectTimeoutMS + heartbeatFrequencyMS, 800 ms here):
     * the check times out, the SDAM spec's "Network timeout on Monitor check".
     */
    @Test
    void aBlockLongerThanTheMonitorWaitsTimesAStreamedCheckOut() throws Exception {
        ServerHeartbeatFailedEvent failed = awaitedCheckFailsUnder("blockConnection: true, blockTimeMS: 3000", "&connectTimeoutMS=300");
        assertTrue(failed.getThrowable() instanceof MongoSocketReadTimeoutException, failed.getThrowable().toString());
    }

    /**
     * A blackhole that begins while a streamed check is blocked holds it until the blackhole ends, as it holds every
     * reply: then the check fails with the rule's error, which nothing lost meanwhile.
     */
    @Test
    void aBlackholeBegunDuringABlockedStreamedCheckHoldsItUntilItEnds() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted)) {
            ScriptedProxy.Heartbeats heartbeats = new ScriptedProxy.Heartbeats();
            try (MongoClient client = ScriptedProxy.client(proxy.connectionString() + "&appName=" + APP
                    + "&heartbeatFrequencyMS=500", heartbeats)) {
                client.getDatabase("test").getCollection("c").insertOne(new Document("_id", 0));
                awaitTrue("the stream to go on past its first reply", () -> heartbeats.awaited().size() >= 2);
                proxy.rules().put(proxy.ruleParser().parse("block", BsonDocument.parse("{configureFailPoint: 'failCommand',"
                        + " mode: {times: 1}, data: {failCommands: ['hello', 'isMaster'], appName: '" + APP + "',"
                        + " commandMatches: {topologyVersion: {$exists: true}}," // the stream's checks, not the round-trip hellos
                        + " blockConnection: true, blockTimeMS: 1000, errorCode: 2}}")));
                awaitTrue("a streamed check to be blocked", () -> proxy.rules().fired("block") == 1);
                proxy.blackhole("all", 0);
                int awaited = heartbeats.awaited().size();
                Thread.sleep(1_500); // the block ends meanwhile
                assertEquals(awaited, heartbeats.awaited().size(), "nothing crossed the blackhole");
                assertEquals(List.of(), heartbeats.failures, "and nothing failed: the monitor waits");
                proxy.restore("all");
                awaitTrue(() -> "the held check to fail once the blackhole ended; failures: " + heartbeats.failures,
                        () -> heartbeats.failures.stream().anyMatch(ServerHeartbeatFailedEvent::isAwaited));
                assertEquals(2, ((MongoCommandException) heartbeats.failures.get(0).getThrowable()).getErrorCode());
            }
        }
    }

    /**
     * The lane's upstream: a mongod streams its replies itself; jongodb does not, and the proxy streams in its place
     * (answering each maxAwaitTimeMS), and each reply it makes after the first is a check a rule meets as well.
     */
    @Test
    void anErrorOnHelloFailsAStreamedCheckOfTheLanesUpstream() throws Exception {
        ScriptedProxy.Heartbeats heartbeats = new ScriptedProxy.Heartbeats();
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()));
             MongoClient client = ScriptedProxy.client(proxy.connectionString() + "&appName=" + APP + "&heartbeatFrequencyMS=500",
                     heartbeats)) {
            client.getDatabase("admin").runCommand(new Document("ping", 1));
            awaitTrue("the stream to go on past its first reply", () -> heartbeats.awaited().size() >= 2);
            proxy.rules().put(proxy.ruleParser().parse("monitor", BsonDocument.parse("{configureFailPoint: 'failCommand',"
                    + " mode: 'alwaysOn', data: {failCommands: ['hello', 'isMaster'], appName: '" + APP + "', errorCode: 2}}")));
            awaitTrue(() -> "an awaited heartbeat to fail; failures: " + heartbeats.failures,
                    () -> heartbeats.failures.stream().anyMatch(ServerHeartbeatFailedEvent::isAwaited));
            ServerHeartbeatFailedEvent failed = heartbeats.failures.stream().filter(ServerHeartbeatFailedEvent::isAwaited)
                    .findFirst().orElseThrow();
            assertEquals(2, ((MongoCommandException) failed.getThrowable()).getErrorCode());
            proxy.rules().remove("monitor");
            int succeeded = heartbeats.events.size();
            awaitTrue("the monitor to come back once the rule is gone", () -> heartbeats.events.size() > succeeded);
            client.getDatabase("admin").runCommand(new Document("ping", 1));
        }
    }

    private static ServerHeartbeatFailedEvent awaitedCheckFailsUnder(String fault) throws Exception {
        return awaitedCheckFailsUnder(fault, "");
    }

    /** Runs a streaming client until its stream goes on past its first reply, puts the rule, and returns the awaited heartbeat it failed. */
    private static ServerHeartbeatFailedEvent awaitedCheckFailsUnder(String fault, String options) throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted)) {
            ScriptedProxy.Heartbeats heartbeats = new ScriptedProxy.Heartbeats();
            try (MongoClient client = ScriptedProxy.client(proxy.connectionString() + "&appName=" + APP
                    + "&heartbeatFrequencyMS=500" + options, heartbeats)) {
                MongoCollection<Document> c = client.getDatabase("test").getCollection("c");
                c.insertOne(new Document("_id", 0));
                awaitTrue("the driver streams hello", () -> scripted.framesReceived(f -> f.exhaustAllowed()).size() >= 1);
                awaitTrue("the stream to go on past its first reply", () -> heartbeats.awaited().size() >= 2);
                int streamedHellos = scripted.framesReceived(f -> f.exhaustAllowed()).size();

                proxy.rules().put(proxy.ruleParser().parse("monitor", BsonDocument.parse("{configureFailPoint: 'failCommand',"
                        + " mode: 'alwaysOn', data: {failCommands: ['hello', 'isMaster'], appName: '" + APP + "', " + fault + "}}")));
                awaitTrue(() -> "an awaited heartbeat to fail; failures: " + heartbeats.failures,
                        () -> heartbeats.failures.stream().anyMatch(ServerHeartbeatFailedEvent::isAwaited));
                ServerHeartbeatFailedEvent failed = heartbeats.failures.stream().filter(ServerHeartbeatFailedEvent::isAwaited)
                        .findFirst().orElseThrow();
                assertTrue(proxy.rules().fired("monitor") >= 1);
                assertEquals(streamedHellos, scripted.framesReceived(f -> f.exhaustAllowed()).size(),
                        "the check failed in the member's stream: the monitor had sent no new hello for it");

                proxy.rules().remove("monitor");
                int succeeded = heartbeats.events.size();
                awaitTrue("the monitor to come back once the rule is gone", () -> heartbeats.events.size() > succeeded);
                c.insertOne(new Document("_id", 1));
                assertEquals(List.of(0, 1), c.find().map(d -> d.getInteger("_id")).into(new java.util.ArrayList<>()));
                return failed;
            }
        }
    }
}
