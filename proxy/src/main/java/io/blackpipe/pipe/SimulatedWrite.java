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
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonValue;

/**
 * A write a simulated primary acknowledges, as it bears on a rollback ({@link UnreplicatedInserts}). A real primary
 * acknowledges a write below majority (w: 0, or 1 of three members) before a majority has it, so a failover before they
 * do rolls it back; one acknowledged with majority has every write before it in the oplog on a majority too, so it
 * ends the rollback's reach ({@link #MAJORITY}). For an insert below majority, {@code ids} holds each document's _id
 * in the request's order, null for one without (the member makes it, and it cannot be told).
 */
record SimulatedWrite(String database, String collection, List<BsonValue> ids, boolean ordered) {
    /** A write acknowledged with majority (the default since MongoDB 5.0): all before it is replicated. */
    static final SimulatedWrite MAJORITY = new SimulatedWrite("", "", List.of(), true);
    /** The commands a majority acknowledgement moves the commit point with (a transaction's, at its commit). */
    private static final Set<String> WRITES = Set.of("insert", "update", "delete", "findAndModify", "findandmodify",
            "commitTransaction", "bulkWrite");

    /**
     * What {@code frame} is to a rollback when the simulated primary ({@code state}) takes it: {@link #MAJORITY}, an
     * insert below majority, or null (no write; a write in a transaction before its commit; an update or delete below
     * majority, which a rollback leaves). Decodes the request only for an insert below majority.
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
        if (!facts.name().equals("insert") || facts.inTransaction()) {
            return null;
        }
        BsonDocument command = msg.command(frame);
        List<BsonValue> ids = new ArrayList<>();
        for (BsonValue document : command.getArray("documents", new BsonArray())) {
            ids.add(document.isDocument() ? document.asDocument().get("_id") : null);
        }
        BsonValue ordered = command.get("ordered");
        return new SimulatedWrite(facts.database(), facts.collection(), ids, ordered == null || !ordered.isBoolean()
                || ordered.asBoolean().getValue());
    }

    boolean majority() {
        return this == MAJORITY;
    }

    /**
     * This insert narrowed to the documents the member's {@code reply} (as the client gets it) says it inserted: an ordered
     * insert stops at its first write error, an unordered one skips each; null when it inserted none. A majority write
     * is itself.
     */
    SimulatedWrite insertedPer(ByteBuf reply) {
        if (majority()) {
            return this;
        }
        if (Header.opCode(reply) != OpCode.OP_MSG) {
            return null;
        }
        OpMsg msg = OpMsg.parse(reply);
        BsonDocument answer = BsonIo.decode(reply, msg.bodyOffset(), msg.sectionsEnd());
        if (answer.getNumber("ok", new BsonInt32(0)).doubleValue() != 1 || answer.getNumber("n", new BsonInt32(0)).intValue() < 1) {
            return null;
        }
        Set<Integer> failed = new HashSet<>();
        for (BsonValue error : answer.getArray("writeErrors", new BsonArray())) {
            if (error.isDocument() && error.asDocument().isNumber("index")) {
                failed.add(error.asDocument().getNumber("index").intValue());
            }
        }
        int stop = ordered && !failed.isEmpty() ? failed.stream().min(Integer::compare).orElseThrow() : ids.size();
        List<BsonValue> inserted = new ArrayList<>();
        for (int i = 0; i < Math.min(stop, ids.size()); i++) {
            if (!failed.contains(i)) {
                inserted.add(ids.get(i));
            }
        }
        return inserted.isEmpty() ? null : new SimulatedWrite(database, collection, inserted, ordered);
    }
}
