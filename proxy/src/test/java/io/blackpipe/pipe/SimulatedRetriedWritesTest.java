package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.testing.WireSocket;
import java.io.IOException;
import java.util.UUID;
import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Over simulated members a retried write meets the set's memory of it wherever it goes, as a
 * replica set's members share the table of sessions: after a failover the new primary answers a
 * write that ran on the old one from that first run (mongod itself on a mongod lane; blackpipe in
 * the place of jongodb, which would run it again).
 */
class SimulatedRetriedWritesTest {
    @RegisterExtension
    final SimulatedSetOverTheLane set = new SimulatedSetOverTheLane();

    private int primaryPort() throws IOException {
        int anyMember = set.proxy().members().get(0).advertised().port();
        try (WireSocket wire = new WireSocket(anyMember, 300, 15_000)) {
            BsonDocument hello = wire.readOk(wire.sendMsg(0, new BsonDocument("hello", new BsonInt32(1)).append("$db", new BsonString("admin"))));
            String primary = hello.getString("primary").getValue();
            return Integer.parseInt(primary.substring(primary.lastIndexOf(':') + 1));
        }
    }

    private static BsonDocument sent(int port, int firstRequestId, BsonDocument command) throws IOException {
        try (WireSocket wire = new WireSocket(port, firstRequestId, 15_000)) {
            return wire.readOk(wire.sendMsg(0, command));
        }
    }

    @Test
    void theNewPrimaryAnswersAWriteThatRanOnTheOldOneFromItsFirstRun() throws IOException {
        String db = UpstreamLane.freshDatabaseName("retriedfailover");
        BsonDocument increment = BsonDocument.parse("{update: 'counters', updates: [{q: {_id: 'day'}, u: {$inc: {n: 1}},"
                        + " upsert: true}], txnNumber: {$numberLong: '1'}}")
                .append("lsid", new BsonDocument("id", new BsonBinary(UUID.randomUUID()))).append("$db", new BsonString(db));
        int oldPrimary = primaryPort();
        BsonDocument first = sent(oldPrimary, 100, increment.clone());
        set.proxy().failover(0);
        int newPrimary = primaryPort();
        assertNotEquals(oldPrimary, newPrimary);
        BsonDocument again = sent(newPrimary, 200, increment.clone());
        for (String field : new String[] {"n", "nModified", "upserted"}) {
            assertEquals(first.get(field), again.get(field), field + ": " + first.toJson() + " / " + again.toJson());
        }
        BsonDocument stored = set.direct().getDatabase(db).getCollection("counters", BsonDocument.class).find().first();
        assertEquals(BsonDocument.parse("{_id: 'day', n: 1}"), stored, "run once, on " + UpstreamLane.name());
    }
}
