package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonValue;
import org.junit.jupiter.api.Test;

/** How a batch insert is made again as mongod would have applied it, at a member that applies all of a batch or none. */
class BatchInsertRerunsTest {
    /** A member as jongodb is: a batch with a duplicate _id (stored, or twice in it) is refused whole, as the command's error. */
    private static final class AllOrNone {
        final Set<BsonValue> ids = new LinkedHashSet<>();
        final List<BsonDocument> parts = new ArrayList<>();
        BsonDocument refuseAllWith;
        int lastApplied;

        BsonDocument run(BsonDocument part) {
            parts.add(part);
            if (refuseAllWith != null) {
                return refuseAllWith;
            }
            Set<BsonValue> adding = new LinkedHashSet<>();
            for (BsonValue document : part.getArray("documents")) {
                BsonValue id = document.asDocument().get("_id");
                if (ids.contains(id) || !adding.add(id)) {
                    return BsonDocument.parse("{ok: 0, code: 11000, codeName: 'DuplicateKey', errmsg: 'E11000 duplicate key error"
                            + " collection: app.c index: _id_ dup key: { _id: " + id.asInt32().getValue() + " }'}");
                }
            }
            ids.addAll(adding);
            lastApplied = parts.size();
            return BsonDocument.parse("{n: " + adding.size() + ", ok: 1, operationTime: {$timestamp: {t: " + parts.size() + ", i: 1}}}");
        }
    }

    private static BsonDocument insert(boolean ordered, int... ids) {
        BsonArray documents = new BsonArray();
        IntStream.of(ids).forEach(id -> documents.add(new BsonDocument("_id", new BsonInt32(id))));
        return new BsonDocument("insert", new org.bson.BsonString("c")).append("documents", documents)
                .append("ordered", org.bson.BsonBoolean.valueOf(ordered))
                .append("writeConcern", BsonDocument.parse("{w: 'majority'}"))
                .append("lsid", BsonDocument.parse("{id: 1}")).append("txnNumber", new org.bson.BsonInt64(4));
    }

    private static List<Integer> indexes(BsonDocument answer) {
        return answer.getArray("writeErrors", new BsonArray()).stream().map(e -> e.asDocument().getInt32("index").getValue()).toList();
    }

    @Test
    void anOrderedBatchInsertsThoseBeforeTheDuplicateAndStops() {
        AllOrNone member = new AllOrNone();
        member.ids.add(new BsonInt32(5));
        BsonDocument answer = BatchInsertReruns.asMongodWould(insert(true, 0, 1, 2, 3, 4, 5, 6, 7), member::run);
        assertEquals(5, answer.getInt32("n").getValue(), answer::toJson);
        assertEquals(List.of(5), indexes(answer), answer::toJson);
        BsonDocument error = answer.getArray("writeErrors").get(0).asDocument();
        assertEquals(11000, error.getInt32("code").getValue());
        assertEquals(BsonDocument.parse("{_id: 1}"), error.getDocument("keyPattern"), error::toJson);
        assertEquals(BsonDocument.parse("{_id: 5}"), error.getDocument("keyValue"), error::toJson);
        assertEquals(1.0, answer.getNumber("ok").doubleValue());
        assertEquals(Set.of(0, 1, 2, 3, 4, 5), member.ids.stream().map(id -> id.asInt32().getValue()).collect(Collectors.toSet()),
                "6 and 7 never tried");
        assertEquals(member.lastApplied, answer.getTimestamp("operationTime").getTime(), "the last applied part's: the latest write's");
    }

    @Test
    void anUnorderedBatchInsertsEveryOtherDocumentWithAFewRoundTrips() {
        AllOrNone member = new AllOrNone();
        member.ids.add(new BsonInt32(40));
        int[] ids = IntStream.range(0, 100).toArray();
        ids[70] = 3; // a duplicate of one in the batch itself
        BsonDocument answer = BatchInsertReruns.asMongodWould(insert(false, ids), member::run);
        assertEquals(98, answer.getInt32("n").getValue(), answer::toJson);
        assertEquals(List.of(40, 70), indexes(answer), answer::toJson);
        assertEquals(101 - 2, member.ids.size(), "all but the two, beside the one there before: " + member.ids);
        assertTrue(member.parts.size() <= 2 * 2 * 7 + 1, member.parts.size() + " round trips for 2 duplicates in 100");
    }

    @Test
    void eachPartKeepsTheWriteConcernAndNotTheSession() {
        AllOrNone member = new AllOrNone();
        member.ids.add(new BsonInt32(1));
        BatchInsertReruns.asMongodWould(insert(true, 0, 1), member::run);
        for (BsonDocument part : member.parts) {
            assertEquals(BsonDocument.parse("{w: 'majority'}"), part.getDocument("writeConcern"), part::toJson);
            assertFalse(part.containsKey("lsid") || part.containsKey("txnNumber"), part::toJson);
            assertTrue(part.getBoolean("ordered").getValue(), part::toJson);
        }
    }

    /** An error that is no duplicate (the member stepped down meanwhile): the ordered batch stops at the part, an unordered one fails each of its documents. */
    @Test
    void anErrorOfTheMembersStateFailsThePartAsMongodFailsABatchItCannotGoOnWith() {
        BsonDocument notPrimary = BsonDocument.parse("{ok: 0, code: 10107, codeName: 'NotWritablePrimary', errmsg: 'not primary'}");
        AllOrNone member = new AllOrNone();
        member.refuseAllWith = notPrimary;
        BsonDocument ordered = BatchInsertReruns.asMongodWould(insert(true, 0, 1, 2), member::run);
        assertEquals(0, ordered.getInt32("n").getValue());
        assertEquals(List.of(0), indexes(ordered), ordered::toJson);
        assertEquals(10107, ordered.getArray("writeErrors").get(0).asDocument().getInt32("code").getValue());
        assertEquals("not primary", ordered.getArray("writeErrors").get(0).asDocument().getString("errmsg").getValue());
        BsonDocument unordered = BatchInsertReruns.asMongodWould(insert(false, 0, 1, 2), member::run);
        assertEquals(List.of(0, 1, 2), indexes(unordered), unordered::toJson);
    }

    /** A member that answers as mongod (ok: 1, n, writeErrors by index in the part) is taken at its word, its indexes moved to the batch's. */
    @Test
    void aPartAnsweredAsMongodAnswersIsTakenAsItIs() {
        List<BsonDocument> parts = new ArrayList<>();
        BsonDocument answer = BatchInsertReruns.asMongodWould(insert(false, 0, 1, 2, 3), part -> {
            parts.add(part);
            List<BsonValue> ids = part.getArray("documents").stream().map(d -> d.asDocument().get("_id")).toList();
            int duplicate = ids.indexOf(new BsonInt32(3));
            return duplicate < 0 ? BsonDocument.parse("{n: " + ids.size() + ", ok: 1}")
                    : BsonDocument.parse("{n: " + (ids.size() - 1) + ", writeErrors: [{index: " + duplicate + ", code: 11000, errmsg: 'dup'}],"
                    + " ok: 1, writeConcernError: {code: 64, errmsg: 'waiting for replication timed out'}}");
        });
        assertEquals(2, parts.size(), "its two halves");
        assertEquals(3, answer.getInt32("n").getValue());
        assertEquals(List.of(3), indexes(answer));
        assertEquals(64, answer.getDocument("writeConcernError").getInt32("code").getValue(), answer::toJson);
    }
}
