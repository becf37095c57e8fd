package io.blackpipe.pipe;

import io.blackpipe.topology.MemberState;
import io.blackpipe.topology.SimulatedReplicaSet;
import io.blackpipe.wire.BsonIo;
import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.Header;
import io.blackpipe.wire.OpCode;
import io.blackpipe.wire.OpMsg;
import io.blackpipe.wire.WriteConcern;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * A write a simulated primary acknowledges, as it bears on a rollback ({@link UnreplicatedWrites}). A real primary
 * acknowledges a write below majority (w: 0, or 1 of three members) before a majority has it, so a failover before they
 * do rolls it back; one acknowledged with majority has every write before it in the oplog on a majority too, so it
 * ends the rollback's reach ({@link #MAJORITY}). For an insert below majority, {@code ids} holds each document's _id in
 * the request's order (null for one without: the member makes it, and it cannot be told); for an update, a delete or a
 * findAndModify, {@code preImages} is the find that reads, just before it on the same connection, what it may change.
 */
record SimulatedWrite(String database, String collection, List<BsonValue> ids, boolean ordered, BsonDocument preImages) {
    /** A write acknowledged with majority (the default since MongoDB 5.0): all before it is replicated. */
    static final SimulatedWrite MAJORITY = new SimulatedWrite("", "", List.of(), true, null);
    /** The documents a write's pre-image read returns at most (a larger write's rollback restores those only, and says so). */
    static final int MAX_PRE_IMAGES = 10_000;
    /** The commands a majority acknowledgement moves the commit point with (a transaction's, at its commit). */
    private static final Set<String> WRITES = Set.of("insert", "update", "delete", "findAndModify", "findandmodify",
            "commitTransaction", "bulkWrite");

    /**
     * What {@code frame} is to a rollback when the simulated primary ({@code state}) takes it: {@link #MAJORITY}, a write
     * below majority, or null (no write; a write in a transaction, whose commit says; a transaction committed or a
     * bulkWrite below majority, which a rollback leaves). Decodes the request only for a write below majority.
     */
    static SimulatedWrite of(ByteBuf frame, CommandFacts facts, MemberState state, SimulatedReplicaSet simulation) {
        if (!WRITES.contains(facts.name()) || state.role() != MemberState.Role.PRIMARY || Header.opCode(frame) != OpCode.OP_MSG
                || facts.inTransaction() && !facts.name().equals("commitTransaction")) {
            return null;
        }
        OpMsg msg = OpMsg.parse(frame);
        double w = WriteConcern.numericW(frame, msg);
        if (Double.isNaN(w) || w >= simulation.members().size() / 2 + 1) {
            return MAJORITY;
        }
        if (facts.inTransaction() || facts.name().equals("commitTransaction") || facts.name().equals("bulkWrite")) {
            return null;
        }
        BsonDocument command = msg.commandIfReadable(frame);
        if (command == null) {
            return null; // the member refuses it whole: nothing to roll back
        }
        BsonValue ordered = command.get("ordered");
        boolean isOrdered = ordered == null || !ordered.isBoolean() || ordered.asBoolean().getValue();
        if (facts.name().equals("insert")) {
            List<BsonValue> ids = new ArrayList<>();
            for (BsonValue document : array(command, "documents")) {
                ids.add(document.isDocument() ? document.asDocument().get("_id") : null);
            }
            return new SimulatedWrite(facts.database(), facts.collection(), ids, isOrdered, null);
        }
        return new SimulatedWrite(facts.database(), facts.collection(), List.of(), isOrdered, preImageFind(facts, command));
    }

    /**
     * The find that reads what an update, a delete or a findAndModify may change: one statement's filter (limited to the
     * one document it changes, in its sort), or, for several, any statement's.
     */
    private static BsonDocument preImageFind(CommandFacts facts, BsonDocument command) {
        BsonDocument find = new BsonDocument("find", new BsonString(facts.collection()));
        if (facts.name().equalsIgnoreCase("findAndModify")) {
            find.append("filter", document(command, "query"));
            if (command.isDocument("sort")) {
                find.append("sort", command.getDocument("sort"));
            }
            find.append("limit", new BsonInt32(1));
        } else {
            List<BsonDocument> statements = new ArrayList<>();
            array(command, facts.name().equals("update") ? "updates" : "deletes")
                    .forEach(s -> statements.add(s.isDocument() ? s.asDocument() : new BsonDocument()));
            if (statements.size() == 1) {
                BsonDocument statement = statements.get(0);
                find.append("filter", document(statement, "q"));
                boolean one = facts.name().equals("update") ? !truthy(statement.get("multi")) : isOne(statement.get("limit"));
                if (one) {
                    find.append("limit", new BsonInt32(1));
                }
            } else {
                BsonArray any = new BsonArray();
                statements.forEach(s -> any.add(document(s, "q")));
                find.append("filter", new BsonDocument("$or", any));
            }
        }
        return find.append("batchSize", new BsonInt32(MAX_PRE_IMAGES)).append("singleBatch", BsonBoolean.TRUE)
                .append("$db", new BsonString(facts.database()));
    }

    /*
     * A write's fields read by their type: one of another type is the member's to refuse or take (multi: 1 is read as
     * a member that takes it reads it), and the write goes to it as it came, as without the proxy, rather than its
     * connection closing here.
     */
    private static BsonDocument document(BsonDocument parent, String key) {
        BsonValue value = parent.get(key);
        return value != null && value.isDocument() ? value.asDocument() : new BsonDocument();
    }

    private static BsonArray array(BsonDocument parent, String key) {
        BsonValue value = parent.get(key);
        return value != null && value.isArray() ? value.asArray() : new BsonArray();
    }

    private static boolean truthy(BsonValue value) {
        return value != null && (value.isBoolean() ? value.asBoolean().getValue() : value.isNumber() && value.asNumber().doubleValue() != 0);
    }

    private static boolean isOne(BsonValue value) {
        return value != null && value.isNumber() && value.asNumber().doubleValue() == 1;
    }

    boolean majority() {
        return this == MAJORITY;
    }

    /**
     * The documents the member's {@code reply} (as the client gets it) says this write created, which a rollback removes:
     * an insert's (an ordered one stops at its first write error, an unordered one skips each), or an upsert's.
     */
    List<BsonValue> createdPer(ByteBuf reply) {
        if (majority() || Header.opCode(reply) != OpCode.OP_MSG) {
            return List.of();
        }
        OpMsg msg = OpMsg.parse(reply);
        BsonDocument answer = BsonIo.decode(reply, msg.bodyOffset(), msg.sectionsEnd());
        if (answer.getNumber("ok", new BsonInt32(0)).doubleValue() != 1) {
            return List.of();
        }
        List<BsonValue> created = new ArrayList<>();
        if (preImages != null) { // an update's upserts, a findAndModify's
            answer.getArray("upserted", new BsonArray()).forEach(u -> {
                if (u.isDocument() && u.asDocument().containsKey("_id")) {
                    created.add(u.asDocument().get("_id"));
                }
            });
            BsonDocument lastError = answer.getDocument("lastErrorObject", new BsonDocument());
            if (lastError.containsKey("upserted")) {
                created.add(lastError.get("upserted"));
            }
            return created;
        }
        if (answer.getNumber("n", new BsonInt32(0)).intValue() < 1) {
            return List.of();
        }
        Set<Integer> failed = new HashSet<>();
        for (BsonValue error : answer.getArray("writeErrors", new BsonArray())) {
            if (error.isDocument() && error.asDocument().isNumber("index")) {
                failed.add(error.asDocument().getNumber("index").intValue());
            }
        }
        int stop = ordered && !failed.isEmpty() ? failed.stream().min(Integer::compare).orElseThrow() : ids.size();
        for (int i = 0; i < Math.min(stop, ids.size()); i++) {
            if (!failed.contains(i)) {
                created.add(ids.get(i));
            }
        }
        return created;
    }

    /** What this write changed: the documents it may have changed, as they were ({@code preImages}), then those it created. */
    List<UnreplicatedWrites.Change> changes(List<BsonDocument> preImages, List<BsonValue> created) {
        List<UnreplicatedWrites.Change> changes = new ArrayList<>(preImages.size() + created.size());
        preImages.forEach(before -> changes.add(new UnreplicatedWrites.Change(database, collection, before.get("_id"), before)));
        created.forEach(id -> changes.add(new UnreplicatedWrites.Change(database, collection, id, null)));
        return changes;
    }
}
