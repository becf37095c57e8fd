package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import com.mongodb.client.MongoClient;
import io.blackpipe.observe.HistoryEntry;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.testing.WireSocket;
import io.blackpipe.topology.Member;
import java.net.SocketException;
import java.util.List;
import java.util.UUID;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.UuidRepresentation;
import org.junit.jupiter.api.Test;

/**
 * A command that reaches the proxy after its member went down but before the outage has reset the
 * connection is an attempt like any other: the reset ends it, and the client's retry with the same
 * lsid and txnNumber after the outage is counted as the retry it is. The outage is the fault that
 * broke it, in the history and the fault counter.
 */
class OutageWindowTest {
    /** How often the window is tried: the command must reach the proxy between the two steps of an outage. */
    private static final int TRIES = 10;

    @Test
    void aWriteReadAsTheMemberGoesDownIsAnAttemptAndItsRetryARetry() throws Exception {
        String db = UpstreamLane.freshDatabaseName("outage_window");
        for (int tryNumber = 1; tryNumber <= TRIES; tryNumber++) {
            try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
                Member member = proxy.members().get(0);
                BsonDocument insert = new BsonDocument("insert", new BsonString("c"))
                        .append("documents", new BsonArray(List.of(new BsonDocument("_id", new BsonInt32(tryNumber)))))
                        .append("lsid", new BsonDocument("id", new BsonBinary(UUID.randomUUID(), UuidRepresentation.STANDARD)))
                        .append("txnNumber", new BsonInt64(1))
                        .append("$db", new BsonString(db));
                double read;
                try (WireSocket socket = new WireSocket(member.advertised().port(), 1, 10_000)) {
                    socket.sendMsg(0, new BsonDocument("ping", new BsonInt32(1)).append("$db", new BsonString("admin")));
                    socket.read(); // the connection and its upstream are up
                    double before = bytesFromClients(proxy);
                    Thread outage = new Thread(() -> proxy.outage(member.upstream().toString(), 0));
                    outage.start();
                    while (!proxy.listener(member.upstream()).down()) {
                        Thread.onSpinWait();
                    }
                    boolean sent = true;
                    try {
                        socket.sendMsg(0, insert); // the first attempt, as the member goes down
                        socket.expectClosed();
                    } catch (SocketException resetBeforeTheWrite) {
                        sent = false;
                    }
                    outage.join();
                    read = sent ? bytesFromClients(proxy) - before : 0;
                }
                if (read == 0) {
                    continue; // the reset came first (before the proxy read the attempt, or before it was even sent): again
                }
                assertEquals(1, Meters.attempts(proxy.registry(), "insert"), "the attempt the proxy read is counted");
                assertEquals(1, Meters.outcomes(proxy.registry(), "insert", "network_error"), "and ended by the reset");
                assertEquals(1, Meters.faults(proxy.registry(), "outage", "insert"), "the outage broke it, and is counted");
                HistoryEntry cut = proxy.history().recent().stream().filter(e -> e.command().equals("insert")).findFirst().orElseThrow();
                assertEquals("outage", cut.fault(), cut::toJson);
                proxy.restore(member.upstream().toString());
                try (WireSocket socket = new WireSocket(member.advertised().port(), 100, 10_000)) {
                    socket.sendMsg(0, insert); // the retry: the same lsid and txnNumber
                    socket.read();
                }
                assertEquals(2, Meters.attempts(proxy.registry(), "insert"));
                assertEquals(1, Meters.retries(proxy.registry(), "insert"), "the attempt after the outage is the retry");
                try (MongoClient direct = UpstreamLane.directClient()) {
                    assertEquals(1, direct.getDatabase(db).getCollection("c").countDocuments(),
                            "the first attempt never reached the member, the retry did");
                }
                return;
            }
        }
        fail("in " + TRIES + " tries the outage always reset the connection before the proxy read the command");
    }

    private static double bytesFromClients(ProxyServer proxy) {
        return Meters.sum(proxy.registry(), "blackpipe.bytes", "direction", "client_to_upstream");
    }
}
