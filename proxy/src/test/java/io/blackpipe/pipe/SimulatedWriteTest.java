package io.blackpipe.pipe;

import static io.blackpipe.wire.WireFixtures.bson;
import static io.blackpipe.wire.WireFixtures.opMsg;
import static io.blackpipe.wire.WireFixtures.withBuf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.topology.MemberAddress;
import io.blackpipe.topology.MemberMap;
import io.blackpipe.topology.MemberState;
import io.blackpipe.topology.MemberStates;
import io.blackpipe.topology.SimulatedReplicaSet;
import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.OpMsg;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonValue;
import org.junit.jupiter.api.Test;

/** Which writes a rollback on a simulated set reaches, and which of an insert's documents it takes back. */
class SimulatedWriteTest {
    private static final MemberState PRIMARY = new MemberState(MemberState.Role.PRIMARY, 21, null, 0);
    private static final MemberState SECONDARY = new MemberState(MemberState.Role.SECONDARY, 21, null, 0);
    private final SimulatedReplicaSet threeMembers = simulatedSet(3);
    private final SimulatedReplicaSet fiveMembers = simulatedSet(5);

    private static SimulatedReplicaSet simulatedSet(int count) {
        List<MemberAddress> names = SimulatedReplicaSet.names(MemberAddress.parse("db.internal:27017"), count);
        MemberMap addresses = new MemberMap("proxy.local", 40000, Map.of(), (upstream, port) -> port);
        names.forEach(addresses::ensure);
        return new SimulatedReplicaSet("rs0", names, addresses, new MemberStates(), 1);
    }

    private SimulatedWrite of(String body, MemberState state, SimulatedReplicaSet set, byte[]... documents) {
        byte[] request = (documents.length == 0 ? opMsg(7, 0, 0).body(body) : opMsg(7, 0, 0).body(body).sequence("documents", documents)).build();
        return withBuf(request, frame -> SimulatedWrite.of(frame, CommandFacts.ofOpMsg(frame, OpMsg.parse(frame)), state, set));
    }

    private static List<BsonValue> ids(int... ids) {
        return Arrays.stream(ids).mapToObj(i -> (BsonValue) new BsonInt32(i)).toList();
    }

    private static List<BsonValue> createdPer(SimulatedWrite write, String reply) {
        return withBuf(opMsg(9, 7, 0).body(reply).build(), write::createdPer);
    }

    /** A document that frames right but does not read: the member refuses the write whole, so there is nothing to roll back. */
    @Test
    void aWriteWithAnUnreadableDocumentIsNoneToRollBack() {
        byte[] unreadable = bson("{_id: 2, x: 1}");
        unreadable[unreadable.length - 8] = 0x42; // x's type byte (then "x", its int32 and the end): no BSON type
        assertNull(of("{insert: 'orders', $db: 'shop', writeConcern: {w: 1}}", PRIMARY, threeMembers, bson("{_id: 1}"), unreadable));
    }

    @Test
    void aWriteBelowMajorityOfTheSetIsAnInsertToRollBackAndOneWithMajorityMovesTheCommitPoint() {
        SimulatedWrite w1 = of("{insert: 'orders', $db: 'shop', writeConcern: {w: 1}}", PRIMARY, threeMembers,
                bson("{_id: 1}"), bson("{name: 'no id'}"), bson("{_id: 3}"));
        assertEquals("shop", w1.database());
        assertEquals("orders", w1.collection());
        assertEquals(Arrays.asList(new BsonInt32(1), null, new BsonInt32(3)), w1.ids(), "null: an _id the member makes");
        assertTrue(w1.ordered());
        assertFalse(of("{insert: 'orders', $db: 'shop', writeConcern: {w: 0}, ordered: false, documents: [{_id: 1}]}",
                PRIMARY, threeMembers).ordered(), "an array in the body, unordered");

        assertSame(SimulatedWrite.MAJORITY, of("{insert: 'orders', $db: 'shop'}", PRIMARY, threeMembers, bson("{_id: 1}")),
                "no writeConcern: the default, majority");
        assertSame(SimulatedWrite.MAJORITY, of("{insert: 'orders', $db: 'shop', writeConcern: {w: 'majority'}}", PRIMARY,
                threeMembers, bson("{_id: 1}")));
        assertSame(SimulatedWrite.MAJORITY, of("{insert: 'orders', $db: 'shop', writeConcern: {w: 2}}", PRIMARY, threeMembers,
                bson("{_id: 1}")), "2 of 3 is a majority");
        assertEquals(ids(1), of("{insert: 'orders', $db: 'shop', writeConcern: {w: 2}}", PRIMARY, fiveMembers,
                bson("{_id: 1}")).ids(), "2 of 5 is not");
        assertSame(SimulatedWrite.MAJORITY, of("{update: 'orders', $db: 'shop', updates: [{q: {}, u: {$set: {a: 1}}}]}",
                PRIMARY, threeMembers));
        assertSame(SimulatedWrite.MAJORITY, of("{delete: 'orders', $db: 'shop', writeConcern: {w: 'majority'}, deletes: []}",
                PRIMARY, threeMembers));
        assertSame(SimulatedWrite.MAJORITY, of("{commitTransaction: 1, $db: 'admin', autocommit: false, txnNumber: 1,"
                + " lsid: {id: {$binary: {base64: 'AAAAAAAAAAAAAAAAAAAAAA==', subType: '04'}}}}", PRIMARY, threeMembers));
    }

    @Test
    void anUpdateADeleteAndAFindAndModifyBelowMajorityReadWhatTheyMayChangeFirst() {
        SimulatedWrite updateOne = of("{update: 'orders', $db: 'shop', writeConcern: {w: 1}, updates: [{q: {status: 'new'},"
                + " u: {$set: {status: 'paid'}}}]}", PRIMARY, threeMembers);
        assertEquals(BsonDocument.parse("{find: 'orders', filter: {status: 'new'}, limit: 1, batchSize: 10000, singleBatch: true,"
                + " $db: 'shop'}"), updateOne.preImages(), "the one document it changes");
        assertEquals(BsonDocument.parse("{find: 'orders', filter: {status: 'new'}, batchSize: 10000, singleBatch: true, $db: 'shop'}"),
                of("{update: 'orders', $db: 'shop', writeConcern: {w: 1}, updates: [{q: {status: 'new'}, u: {$set: {a: 1}},"
                        + " multi: true}]}", PRIMARY, threeMembers).preImages(), "every document it may change");
        assertEquals(BsonDocument.parse("{find: 'orders', filter: {$or: [{_id: 1}, {_id: 2}]}, batchSize: 10000, singleBatch: true,"
                + " $db: 'shop'}"), of("{delete: 'orders', $db: 'shop', writeConcern: {w: 0}, deletes: [{q: {_id: 1}, limit: 1},"
                + " {q: {_id: 2}, limit: 1}]}", PRIMARY, threeMembers).preImages(), "any statement's");
        assertEquals(BsonDocument.parse("{find: 'orders', filter: {status: 'new'}, sort: {at: 1}, limit: 1, batchSize: 10000,"
                + " singleBatch: true, $db: 'shop'}"), of("{findAndModify: 'orders', $db: 'shop', writeConcern: {w: 1}, query:"
                + " {status: 'new'}, sort: {at: 1}, update: {$set: {status: 'paid'}}}", PRIMARY, threeMembers).preImages(),
                "the first in its sort");
        assertNull(w1Insert().preImages(), "an insert changes nothing that was there");
    }

    /** Fields of another type than drivers send are read by their type and left to the member: none closes the connection here. */
    @Test
    void aWritesFieldsOfAnotherTypeAreLeftToTheMember() {
        assertEquals(BsonDocument.parse("{find: 'orders', filter: {status: 'new'}, batchSize: 10000, singleBatch: true, $db: 'shop'}"),
                of("{update: 'orders', $db: 'shop', writeConcern: {w: 1}, updates: [{q: {status: 'new'}, u: {$set: {a: 1}},"
                        + " multi: 1}]}", PRIMARY, threeMembers).preImages(), "multi: 1 is many, where a member takes it");
        assertEquals(BsonDocument.parse("{find: 'orders', filter: {}, batchSize: 10000, singleBatch: true, $db: 'shop'}"),
                of("{delete: 'orders', $db: 'shop', writeConcern: {w: 1}, deletes: [{q: 5, limit: 'one'}]}", PRIMARY, threeMembers)
                        .preImages(), "a filter that is no document, which the member refuses");
        assertEquals(BsonDocument.parse("{find: 'orders', filter: {}, limit: 1, batchSize: 10000, singleBatch: true, $db: 'shop'}"),
                of("{findAndModify: 'orders', $db: 'shop', writeConcern: {w: 1}, query: 'x', update: {}}", PRIMARY, threeMembers)
                        .preImages());
        assertEquals(List.of(), of("{insert: 'orders', $db: 'shop', writeConcern: {w: 1}, documents: 'x'}", PRIMARY, threeMembers).ids());
        assertNull(of("{update: 'orders', $db: 'shop', writeConcern: {w: 1}, updates: 7}", PRIMARY, threeMembers).preImages().get("limit"));
    }

    private SimulatedWrite w1Insert() {
        return of("{insert: 'orders', $db: 'shop', writeConcern: {w: 1}}", PRIMARY, threeMembers, bson("{_id: 1}"));
    }

    @Test
    void aRollbackLeavesWhatIsNoWriteOfAPrimaryAndATransactionsWrites() {
        assertNull(of("{find: 'orders', $db: 'shop'}", PRIMARY, threeMembers));
        assertNull(of("{insert: 'orders', $db: 'shop', writeConcern: {w: 1}}", SECONDARY, threeMembers, bson("{_id: 1}")),
                "a secondary refuses it");
        assertNull(of("{insert: 'orders', $db: 'shop', autocommit: false, txnNumber: 1, lsid: {id: {$binary: {base64:"
                + " 'AAAAAAAAAAAAAAAAAAAAAA==', subType: '04'}}}}", PRIMARY, threeMembers, bson("{_id: 1}")),
                "a transaction's write goes with its commit");
        assertNull(of("{commitTransaction: 1, $db: 'admin', autocommit: false, txnNumber: 1, writeConcern: {w: 1},"
                + " lsid: {id: {$binary: {base64: 'AAAAAAAAAAAAAAAAAAAAAA==', subType: '04'}}}}", PRIMARY, threeMembers),
                "a transaction committed below majority stays");
    }

    @Test
    void anOrderedInsertStopsAtItsFirstErrorAnUnorderedOneSkipsEachAndAnUpsertCreatesItsId() {
        SimulatedWrite ordered = new SimulatedWrite("shop", "orders", ids(0, 1, 2, 3), true, null);
        SimulatedWrite unordered = new SimulatedWrite("shop", "orders", ids(0, 1, 2, 3), false, null);
        String secondFails = "{ok: 1, n: 1, writeErrors: [{index: 1, code: 11000, errmsg: 'E11000'}]}";
        assertEquals(ids(0), createdPer(ordered, secondFails));
        String secondAndLastFail = "{ok: 1, n: 2, writeErrors: [{index: 1, code: 11000, errmsg: 'E11000'},"
                + " {index: 3, code: 11000, errmsg: 'E11000'}]}";
        assertEquals(ids(0, 2), createdPer(unordered, secondAndLastFail));
        assertEquals(ids(0, 1, 2, 3), createdPer(ordered, "{ok: 1, n: 4}"));
        assertEquals(List.of(), createdPer(ordered, "{ok: 1, n: 0, writeErrors: [{index: 0, code: 11000, errmsg: 'E11000'}]}"));
        assertEquals(List.of(), createdPer(ordered, "{ok: 0, code: 10107, errmsg: 'not primary'}"));

        SimulatedWrite update = new SimulatedWrite("shop", "orders", List.of(), true, BsonDocument.parse("{find: 'orders'}"));
        assertEquals(ids(7), createdPer(update, "{ok: 1, n: 1, nModified: 0, upserted: [{index: 0, _id: 7}]}"));
        assertEquals(List.of(), createdPer(update, "{ok: 1, n: 1, nModified: 1}"));
        assertEquals(ids(8), createdPer(update, "{ok: 1, value: null, lastErrorObject: {n: 1, updatedExisting: false, upserted: 8}}"));
        assertEquals(List.of(), createdPer(SimulatedWrite.MAJORITY, "{ok: 1, n: 1}"));
    }

    @Test
    void itsChangesAreWhatItMayHaveChangedAsItWasThenWhatItCreated() {
        SimulatedWrite update = new SimulatedWrite("shop", "orders", List.of(), true, BsonDocument.parse("{find: 'orders'}"));
        BsonDocument before = BsonDocument.parse("{_id: 3, status: 'new'}");
        assertEquals(List.of(new UnreplicatedWrites.Change("shop", "orders", new BsonInt32(3), before),
                        new UnreplicatedWrites.Change("shop", "orders", new BsonInt32(7), null)),
                update.changes(List.of(before), ids(7)));
    }
}
