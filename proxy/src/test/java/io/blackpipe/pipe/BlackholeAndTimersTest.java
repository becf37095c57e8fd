package io.blackpipe.pipe;

import static io.blackpipe.wire.WireFixtures.opMsg;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import io.blackpipe.testing.ScriptedMongod;
import java.net.SocketTimeoutException;
import java.util.List;
import org.bson.BsonDocument;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A delayed reply or a blocked command whose time comes during a blackhole waits for its end too: nothing passes it. */
class BlackholeAndTimersTest {
    private ScriptedMongod upstream;
    private ProxyServer proxy;

    @BeforeEach
    void start() throws Exception {
        upstream = ScriptedMongod.start();
        proxy = ScriptedProxy.start(upstream);
    }

    @AfterEach
    void stop() {
        proxy.close();
        upstream.close();
    }

    @Test
    void aDelayedReplyDoesNotCrossABlackholeThatBeganMeanwhile() throws Exception {
        proxy.rules().put(proxy.ruleParser().parse("delay", BsonDocument.parse(
                "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['ping'], delayReplyMS: 400}}")));
        try (RawClient client = RawClient.connect(ScriptedProxy.member(proxy).advertised())) {
            client.send(opMsg(1, 0, 0).body("{ping: 1, $db: 'admin'}").build());
            // its reply is now held by the delay
            ScriptedProxy.awaitTrue("the ping answered by the member",
                    () -> !upstream.framesSent(f -> f.connectionId() >= 2 && f.responseTo() == 1).isEmpty());
            proxy.blackhole("all", 0);
            client.socket.setSoTimeout(1000);
            try {
                client.readFrame();
                fail("a reply crossed the blackhole");
            } catch (SocketTimeoutException expected) {
                // nothing passes while it lasts
            }
            proxy.restore("all");
            client.socket.setSoTimeout(5000);
            assertEquals(1, io.blackpipe.wire.Header.responseTo(io.netty.buffer.Unpooled.wrappedBuffer(client.readFrame())),
                    "the reply passes when the blackhole ends");
        }
    }

    @Test
    void aBlockedCommandIsNotForwardedIntoABlackholeThatBeganMeanwhile() throws Exception {
        proxy.rules().put(proxy.ruleParser().parse("block", BsonDocument.parse(
                "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['ping'], blockConnection: true, blockTimeMS: 400}}")));
        try (RawClient client = RawClient.connect(ScriptedProxy.member(proxy).advertised())) {
            client.send(opMsg(7, 0, 0).body("{ping: 1, $db: 'admin'}").build());
            ScriptedProxy.awaitTrue("the client's upstream connection", () -> upstream.connectionsAccepted() >= 2);
            Thread.sleep(100); // the ping is read and blocked
            proxy.blackhole("all", 0);
            Thread.sleep(800);
            assertEquals(List.of(), upstream.framesReceived(f -> f.requestId() == 7), "the command crossed the blackhole");
            proxy.restore("all");
            ScriptedProxy.awaitTrue("the command goes on when the blackhole ends",
                    () -> !upstream.framesReceived(f -> f.requestId() == 7).isEmpty());
        }
    }
}
