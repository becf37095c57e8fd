package io.blackpipe.upstream;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.blackpipe.testing.ScriptedMongodWire;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.CompletableFuture;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.junit.jupiter.api.Test;

/** The admin commands a lane's start runs once (replSetInitiate, addShard), against a server that is slow to answer them. */
class HelloProbeTest {
    /**
     * addShard through a router just started, or replSetInitiate on a loaded CI machine, can take seconds; neither can
     * be sent again after a timeout, so runOk waits. Before, it gave up after 5 s and the whole lane failed.
     */
    @Test
    void anAdminCommandAnsweredAfterSixSecondsSucceeds() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture<Void> slowServer = CompletableFuture.runAsync(() -> {
                try (Socket socket = server.accept()) {
                    InputStream in = socket.getInputStream();
                    byte[] request = ScriptedMongodWire.readMessage(in, 48_000_000);
                    Thread.sleep(6_000);
                    socket.getOutputStream().write(ScriptedMongodWire.buildOpMsg(1, ScriptedMongodWire.requestId(request), 0,
                            new BsonDocument("ok", new BsonDouble(1)), null));
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            BsonDocument reply = HelloProbe.runOk("127.0.0.1", server.getLocalPort(), new BsonDocument("addShard", new BsonInt32(1)));
            assertEquals(1.0, reply.getNumber("ok").doubleValue());
            slowServer.join();
        }
    }
}
