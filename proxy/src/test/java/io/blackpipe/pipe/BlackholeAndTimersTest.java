package io.blackpipe.pipe;

import static io.blackpipe.wire.WireFixtures.opMsg;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.wire.Header;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.net.SocketTimeoutException;
import java.util.List;
import org.bson.BsonDocument;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A delayed reply, a trickling reply's next piece or a blocked command whose time comes during a
 * blackhole waits for its end too: nothing passes it.
 */
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

    @Test
    void aTrickleStopsInABlackholeThatBeganMeanwhileAndGoesOnWhenItEnds() throws Exception {
        proxy.rules().put(proxy.ruleParser().parse("trickle", BsonDocument.parse("{configureFailPoint: 'failCommand',"
                + " mode: 'alwaysOn', data: {failCommands: ['ping'], trickleReplyBytes: 16, trickleReplyIntervalMS: 300}}")));
        try (RawClient client = RawClient.connect(ScriptedProxy.member(proxy).advertised())) {
            client.send(opMsg(3, 0, 0).body("{ping: 1, $db: 'admin'}").build());
            ByteArrayOutputStream received = new ByteArrayOutputStream();
            client.socket.setSoTimeout(5000);
            received.write(client.socket.getInputStream().readNBytes(16)); // the first piece, at once
            // the blackhole begins meanwhile: the member's reply is in the proxy, its pieces going out (the next in 300 ms)
            proxy.blackhole("all", 0);
            readFor(client, 300, received); // anything sent before it began
            int beforeTheBlackhole = received.size();
            int length = Header.messageLength(Unpooled.wrappedBuffer(received.toByteArray()));
            assertTrue(beforeTheBlackhole < length, "some of the reply is left: " + beforeTheBlackhole + " of " + length + " bytes");
            readFor(client, 1000, received);
            assertEquals(beforeTheBlackhole, received.size(), "a piece crossed the blackhole");
            proxy.restore("all");
            client.socket.setSoTimeout(5000);
            received.write(client.socket.getInputStream().readNBytes(length - received.size()));
            assertEquals(3, Header.responseTo(Unpooled.wrappedBuffer(received.toByteArray())), "the rest passes when it ends");
        }
    }

    /** Reads what arrives until nothing more does for {@code millis}. */
    private static void readFor(RawClient client, int millis, ByteArrayOutputStream into) throws Exception {
        client.socket.setSoTimeout(millis);
        byte[] buffer = new byte[256];
        try {
            int n;
            while ((n = client.socket.getInputStream().read(buffer)) > 0) {
                into.write(buffer, 0, n);
            }
        } catch (SocketTimeoutException expected) {
            // nothing more within the time
        }
    }
}
