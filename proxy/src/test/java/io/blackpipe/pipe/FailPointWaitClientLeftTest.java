package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.mongodb.MongoSocketReadTimeoutException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;
import io.blackpipe.testing.ScriptedMongod;
import io.netty.channel.EventLoop;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * A waitForFailPoint the proxy answers itself ends with its client: the driver gives up on it (its
 * socket timeout) and closes the connection, and the server kills the operation of a client that left.
 * The proxy's wait looks at the count every few ms on the connection's event loop; it kept doing so
 * after the close, for its whole maxTimeMS (without one, for as long as the proxy ran).
 */
class FailPointWaitClientLeftTest {

    @Test
    void aWaitWhoseClientLeftIsNoLongerLookedAt() throws Exception {
        try (ScriptedMongod scripted = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(scripted)) {
            String uri = proxy.connectionString();
            try (MongoClient client = ScriptedProxy.client(uri + (uri.contains("?") ? "&" : "?") + "socketTimeoutMS=1000", null)) {
                MongoDatabase admin = client.getDatabase("admin");
                admin.runCommand(new Document("ping", 1)); // the pool's connection, which the wait goes on
                MemberListener listener = proxy.listener(ScriptedProxy.member(proxy).upstream());
                Map<ClientConnection, EventLoop> connections = new HashMap<>();
                for (EventLoop loop : List.copyOf(listener.connections().eventLoops())) {
                    loop.submit(() -> listener.connections().on(loop)).syncUninterruptibly().getNow()
                            .forEach(connection -> connections.put(connection, loop));
                }

                assertThrows(MongoSocketReadTimeoutException.class, () -> admin.runCommand(new Document("waitForFailPoint",
                        "failCommand").append("timesEntered", 1).append("maxTimeMS", 60_000)));
                ScriptedProxy.awaitTrue("the driver closes the connection it timed out on",
                        () -> connections.keySet().stream().anyMatch(c -> !c.isOpen()));
                Thread.sleep(100); // some 20 looks, had the wait gone on

                for (Map.Entry<ClientConnection, EventLoop> entry : connections.entrySet()) {
                    if (!entry.getKey().isOpen()) {
                        int pending = entry.getValue().submit(entry.getKey()::scheduledTasks).syncUninterruptibly().getNow();
                        assertEquals(0, pending, "tasks still scheduled for a connection whose client left");
                    }
                }
                assertEquals(1.0, admin.runCommand(new Document("ping", 1)).get("ok", Number.class).doubleValue());
            }
        }
    }
}
