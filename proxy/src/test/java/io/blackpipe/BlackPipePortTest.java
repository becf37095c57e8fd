package io.blackpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.blackpipe.testing.BindRetry;
import io.blackpipe.testing.HeldPorts;
import io.blackpipe.testing.UpstreamLane;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * BlackPipe.builder().port(n), as the CLI's --port: a test allowed a few known ports only (a firewall, a port range
 * handed out by its CI) can still run a proxy in its own JVM; before, the in-process proxy always took free ports.
 */
class BlackPipePortTest {
    /**
     * The port and the six after it (a lane's set, up to seven members, takes one per member from the first) are held
     * from the moment they are found and let go just before the start, which binds them by number: a port given to
     * another process in that moment fails the start, and the whole case is run again.
     */
    @Test
    void theFirstMemberListensOnTheGivenPortAndAPortTakenFailsTheStartNamingIt() throws Exception {
        BindRetry.upTo(3, BlackPipePortTest::theGivenPortIsListenedOnAndATakenOneFailsTheStart);
        // as the CLI refuses --port 65535 --simulate-members 3, before a listener binds (it failed at the second one)
        assertEquals("port: 65535 leaves no room for simulateMembers 3: their listeners take ports 65535-65537, past 65535",
                assertThrows(IllegalArgumentException.class,
                        () -> BlackPipe.builder().upstream(UpstreamLane.uri()).port(65535).simulateMembers(3).start()).getMessage());
        assertEquals("port: 65536 is out of range (0 picks free ports)",
                assertThrows(IllegalArgumentException.class, () -> BlackPipe.builder().port(65536)).getMessage());
        assertEquals("port: -1 is out of range (0 picks free ports)",
                assertThrows(IllegalArgumentException.class, () -> BlackPipe.builder().port(-1)).getMessage());
    }

    private static void theGivenPortIsListenedOnAndATakenOneFailsTheStart() throws Exception {
        int port;
        try (HeldPorts ports = HeldPorts.consecutive(7)) {
            port = ports.first();
        }
        try (BlackPipe blackPipe = BlackPipe.builder().upstream(UpstreamLane.uri()).port(port).start()) {
            assertEquals(port, blackPipe.server().members().get(0).advertised().port());
            assertTrue(blackPipe.connectionString().contains("127.0.0.1:" + port), blackPipe.connectionString());
            try (MongoClient client = MongoClients.create(blackPipe.connectionString())) {
                assertEquals(1.0, client.getDatabase("admin").runCommand(new Document("ping", 1)).get("ok", Number.class).doubleValue());
            }
            assertEquals(1, blackPipe.attempts("ping"), "through the proxy on that port");

            RuntimeException taken = assertThrows(RuntimeException.class,
                    () -> BlackPipe.builder().upstream(UpstreamLane.uri()).port(port).start().close());
            assertTrue(String.valueOf(taken.getMessage()).contains(Integer.toString(port)), () -> "names the port: " + taken);
        }
    }
}
