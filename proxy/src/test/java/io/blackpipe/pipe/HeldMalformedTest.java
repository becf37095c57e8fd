package io.blackpipe.pipe;

import static io.blackpipe.wire.WireFixtures.opMsg;
import static io.blackpipe.wire.WireFixtures.readLe32;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.Await;
import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.ScriptedMongod;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.bson.BsonDocument;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A malformed message that arrives while the connection holds a command (blockConnection) is
 * read only when the hold ends, outside the channel pipeline: it must still close its connection
 * with a log line, as it would have without the hold, instead of leaving the client waiting forever.
 */
class HeldMalformedTest {
    private static final Duration WAIT = Duration.ofSeconds(5);
    private LogCapture log;
    private ScriptedMongod upstream;
    private ProxyServer proxy;

    @BeforeEach
    void start() throws Exception {
        log = LogCapture.start();
        upstream = ScriptedMongod.start();
        proxy = ScriptedProxy.start(upstream);
    }

    @AfterEach
    void stop() {
        proxy.close();
        upstream.close();
        log.close();
    }

    @Test
    void aMalformedMessageQueuedBehindABlockedCommandClosesItsConnection() throws Exception {
        proxy.rules().put(proxy.ruleParser().parse("block", BsonDocument.parse(
                "{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['ping'], blockConnection: true, blockTimeMS: 300}}")));
        pingThenMalformed(() -> { });
    }

    @Test
    void aMalformedMessageQueuedInABlackholeClosesItsConnectionWhenItEnds() throws Exception {
        proxy.blackhole("all", 0);
        pingThenMalformed(() -> {
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
            proxy.restore("all");
        });
    }

    private void pingThenMalformed(Runnable afterSending) throws Exception {
        byte[] ping = opMsg(1, 0, 0).body("{ping: 1, $db: 'admin'}").build();
        byte[] bad = opMsg(2, 0, 1 << 2).body("{ping: 1, $db: 'admin'}").build(); // an unknown required flag bit
        byte[] both = Arrays.copyOf(ping, ping.length + bad.length);
        System.arraycopy(bad, 0, both, ping.length, bad.length);
        int proxiedBefore = proxy.openConnections(ScriptedProxy.member(proxy).upstream());
        try (RawClient client = RawClient.connect(ScriptedProxy.member(proxy).advertised())) {
            client.send(ping);
            Thread.sleep(50); // the ping is held now
            client.send(bad);
            afterSending.run();
            byte[] received = client.awaitClosedByPeer(WAIT);
            // the held ping may or may not be answered before the close, as when both arrive in one read
            assertTrue(received.length == 0 || readLe32(received, 8) == 1 && readLe32(received, 0) == received.length,
                    "nothing but the ping's reply may arrive (" + received.length + " bytes)");
            String line = log.awaitContaining(WAIT, client.logName(), "unknown required flag bits 0x4");
            assertTrue(line.contains("malformed"), line);
        }
        Await.until(WAIT, "the proxy to forget the connection",
                () -> proxy.openConnections(ScriptedProxy.member(proxy).upstream()) == proxiedBefore);
        // by its command too: the proxy's discovery probe numbers its hellos from 1 as well
        assertEquals(List.of(), upstream.framesReceived(f -> f.requestId() == 2 && "ping".equals(f.commandName())),
                "the malformed message never reaches the member");
    }
}
