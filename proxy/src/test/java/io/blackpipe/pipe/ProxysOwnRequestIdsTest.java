package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.blackpipe.testing.ScriptedMongodWire;
import io.blackpipe.testing.UpstreamLane;
import java.io.IOException;
import java.util.List;
import java.util.UUID;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The proxy sends a member requests of its own on a client's connection: a find ahead of a simulated primary's update
 * (what a rollback would put back), and on jongodb an abort ahead of a session's newer transaction. Replies go by their
 * responseTo, and those requests' ids came from a counter the proxy's replies shared, from 1 up as a driver's: a
 * transactions user's driver sent request 36 when the proxy's abort had 36 too, and got the abort's answer (jongodb's
 * "aborttransaction requires an active transaction", which failed the app's transaction), its insert's reply dropped.
 * Here a client on a simulated set over the lane's node sends its requests with ids that walk over the proxy's (see
 * {@link #requestIds}), and every command must get its own reply.
 */
class ProxysOwnRequestIdsTest {
    @RegisterExtension
    final SimulatedSetOverTheLane set = new SimulatedSetOverTheLane();

    private static BsonDocument roundTrip(RawClient client, int requestId, BsonDocument command) throws IOException {
        byte[] reply = client.roundTrip(ScriptedMongodWire.buildOpMsg(requestId, 0, 0, command, null));
        assertEquals(requestId, ScriptedMongodWire.responseTo(reply), "the reply answers the request it names");
        BsonDocument body = ScriptedMongodWire.decodeDocument(reply, 21, ScriptedMongodWire.intLE(reply, 21));
        assertEquals(1.0, body.getNumber("ok").doubleValue(), () -> "request " + requestId + " " + command.toJson() + " got " + body.toJson());
        assertFalse(body.containsKey("cursor"), () -> "request " + requestId + " got the proxy's own find's reply: " + body.toJson());
        return body;
    }

    @Test
    void everyUpdateGetsItsOwnReplyWhateverIdItCarries() throws Exception {
        String db = UpstreamLane.freshDatabaseName("ownids");
        set.direct().getDatabase(db).getCollection("c").insertOne(new Document("_id", 1).append("n", 0));
        int updates = 0;
        try (RawClient client = RawClient.connect(set.proxy().members().get(0).advertised())) {
            for (int requestId : requestIds()) {
                BsonDocument update = new BsonDocument("update", new BsonString("c"))
                        .append("updates", new BsonArray(List.of(new BsonDocument("q", new BsonDocument("_id", new BsonInt32(1)))
                                .append("u", BsonDocument.parse("{$inc: {n: 1}}")))))
                        .append("writeConcern", new BsonDocument("w", new BsonInt32(1))).append("$db", new BsonString(db));
                assertEquals(1, roundTrip(client, requestId, update).getInt32("n").getValue());
                updates++;
            }
        }
        assertEquals(updates, set.direct().getDatabase(db).getCollection("c").find().first().getInteger("n"));
    }

    @Test
    void everyTransactionStatementGetsItsOwnReplyWhenTheProxyAbortsTheSessionsOlderOne() throws Exception {
        String db = UpstreamLane.freshDatabaseName("ownidstxn");
        // the collection exists before any transaction (one cannot create it before 4.4; jongodb has no create command)
        set.direct().getDatabase(db).getCollection("c").insertOne(new Document("_id", "seed"));
        int sessions = 0;
        try (RawClient client = RawClient.connect(set.proxy().members().get(0).advertised())) {
            int[] ids = requestIds(); // for the statement the proxy's abort goes ahead of; the others' out of their way
            for (int i = 0; i < ids.length; i++) {
                BsonDocument lsid = new BsonDocument("id", new BsonBinary(UUID.randomUUID()));
                // the first left open: the next one supersedes it; an insert's own reply says n: 1 (the abort's has no n)
                assertEquals(1, roundTrip(client, 1_000_000 + 2 * i, statement(db, lsid, 1, 1000 + i)).getInt32("n").getValue());
                assertEquals(1, roundTrip(client, ids[i], statement(db, lsid, 2, 2000 + i)).getInt32("n", new BsonInt32(-1)).getValue());
                roundTrip(client, 1_000_001 + 2 * i, new BsonDocument("commitTransaction", new BsonInt32(1)).append("lsid", lsid)
                        .append("txnNumber", new BsonInt64(2)).append("autocommit", BsonBoolean.FALSE).append("$db", new BsonString("admin")));
                sessions++;
            }
        }
        var c = set.direct().getDatabase(db).getCollection("c");
        assertEquals(sessions, c.countDocuments(new Document("_id", new Document("$gte", 2000))), "each session's second transaction");
        assertEquals(0, c.countDocuments(new Document("_id", new Document("$lt", 2000))), "no first one, aborted");
    }

    /** An insert of {_id: id} as the first statement of the session's transaction txnNumber. */
    private static BsonDocument statement(String db, BsonDocument lsid, long txnNumber, int id) {
        return new BsonDocument("insert", new BsonString("c")).append("documents", new BsonArray(List.of(
                        new BsonDocument("_id", new BsonInt32(id))))).append("lsid", lsid).append("txnNumber", new BsonInt64(txnNumber))
                .append("startTransaction", BsonBoolean.TRUE).append("autocommit", BsonBoolean.FALSE).append("$db", new BsonString(db));
    }

    /**
     * 1, 3, ... 299, then -1, -2, ... -150: the odd ids catch up with a counter from 1 that counts a request of the
     * proxy's for each of them (a counter that had reached c before meets the client's id at its (c+1)th), the negative
     * ones walk with ids counted down from -1.
     */
    private static int[] requestIds() {
        int[] ids = new int[300];
        for (int i = 0; i < 150; i++) {
            ids[i] = 2 * i + 1;
            ids[150 + i] = -(i + 1);
        }
        return ids;
    }
}
