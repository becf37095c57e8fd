package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.testing.WireSocket;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A write below majority on a simulated primary is read first, for its rollback: a field of another type than the
 * drivers send (multi: 1, as a hand-written command may send it) is read by its type, and the
 * write goes to the member as it came, which judges it. Before, reading it threw and the proxy closed the client's connection.
 */
class SimulatedWriteFieldTypesTest {
    @RegisterExtension
    final SimulatedSetOverTheLane set = new SimulatedSetOverTheLane();

    @Test
    void anUpdateWithMultiAsANumberReachesTheMemberAndItsConnectionGoesOn() throws Exception {
        String db = UpstreamLane.freshDatabaseName("multi_number");
        set.direct().getDatabase(db).getCollection("c").insertMany(List.of(new Document("_id", 1).append("s", "new"),
                new Document("_id", 2).append("s", "new")));
        BsonDocument answer;
        try (WireSocket wire = new WireSocket(set.proxy().members().get(0).advertised().port(), 100, 10_000)) {
            int update = wire.sendMsg(0, BsonDocument.parse("{update: 'c', updates: [{q: {s: 'new'}, u: {$set: {s: 'paid'}},"
                    + " multi: 1}], writeConcern: {w: 1}, $db: '" + db + "'}"));
            byte[] reply = wire.read();
            assertEquals(update, ScriptedMongodWire.responseTo(reply), "the member's answer, whatever it is");
            answer = ScriptedMongodWire.parseOpMsg(reply).body();
            int ping = wire.sendMsg(0, BsonDocument.parse("{ping: 1, $db: 'admin'}"));
            wire.readOk(ping);
        }
        // jongodb refuses a number (TypeMismatch); whatever the member answers, it decided, and the server holds that
        boolean applied = answer.getNumber("ok").doubleValue() == 1;
        String held = applied ? "paid" : "new";
        assertEquals(List.of(held, held), set.direct().getDatabase(db).getCollection("c").find()
                .map(d -> d.getString("s")).into(new ArrayList<>()), () -> "what the server holds after " + answer.toJson());
    }
}
