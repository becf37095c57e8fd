package io.blackpipe.pipe;

import io.blackpipe.wire.BsonIo;
import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.Header;
import io.blackpipe.wire.Messages;
import io.blackpipe.wire.OpCode;
import io.blackpipe.wire.OpMsg;
import io.blackpipe.wire.ReplyFacts;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * What one connection's writes to a simulated primary change, for a failover's rollback ({@link UnreplicatedWrites}):
 * a write acknowledged with majority moves the commit point; one below majority is remembered with what it created and
 * what it changed. For an update, a delete or a findAndModify, a find goes to the member just before it on the same
 * connection ({@link SimulatedWrite#preImages}): a member answers one connection's requests in turn, so the find reads
 * the documents as the write then finds them; its reply is this recorder's, never the client's. Nothing here runs for a
 * real deployment. Used from the connection's event loop only.
 */
final class RollbackRecorder {
    private final Exchange exchange;
    private final ClientConnection connection;
    private final PipeContext context;
    /** The pre-image finds sent, by request id, and who takes their documents. */
    private final Map<Integer, Consumer<List<BsonDocument>>> preImageReads = new HashMap<>(4);

    RollbackRecorder(Exchange exchange) {
        this.exchange = exchange;
        this.connection = exchange.connection();
        this.context = exchange.context();
    }

    /**
     * {@code forwarded} goes to the member next: a write of the simulated primary is noted on {@code command} (null: a
     * request that asks for no reply, noted as acknowledged now, as it lands unanswered), its pre-image find sent first
     * with an id {@code awaited} gives (see {@link AwaitedReplies#ownRequestId}).
     */
    void forwarding(ByteBuf forwarded, CommandFacts facts, InFlight command, AwaitedReplies awaited) {
        SimulatedWrite write = SimulatedWrite.of(forwarded, facts, exchange.memberState(), context.simulation());
        if (write == null || command == null && write.majority()) {
            return;
        }
        int epoch = context.unreplicated().epoch();
        if (command != null) {
            command.write = write;
            command.writeEpoch = epoch;
        }
        if (write.preImages() != null) {
            int requestId = awaited.ownRequestId(facts.requestId());
            preImageReads.put(requestId, command != null ? found -> command.preImages = found
                    : found -> context.unreplicated().acknowledged(write.changes(found, List.of()), epoch));
            connection.sendUpstream(Messages.opMsg(connection.alloc(), requestId, 0, 0, write.preImages()));
        } else if (command == null) {
            context.unreplicated().acknowledged(write.changes(List.of(), write.ids()), epoch);
        }
    }

    /** True when {@code reply} answers a pre-image find: its documents are taken, and it is released. */
    boolean took(ByteBuf reply) {
        if (preImageReads.isEmpty()) {
            return false;
        }
        Consumer<List<BsonDocument>> taker = preImageReads.remove(Header.responseTo(reply));
        if (taker == null) {
            return false;
        }
        try {
            List<BsonDocument> found = documents(reply);
            if (found.size() >= SimulatedWrite.MAX_PRE_IMAGES) {
                context.log().warn("a write below majority to a simulated primary may change more than " + SimulatedWrite.MAX_PRE_IMAGES
                        + " documents: a rollback puts back the first " + SimulatedWrite.MAX_PRE_IMAGES + " of them only");
            }
            taker.accept(found);
        } finally {
            reply.release();
        }
        return true;
    }

    /** The member's {@code reply} to {@code command} goes to the client: what its write created and changed is known now. */
    void replied(InFlight command, ByteBuf reply) {
        if (command.write != null && !command.write.majority()) {
            command.changes = command.write.changes(command.preImages, command.write.createdPer(reply));
        }
    }

    /** The client got {@code reply} to {@code command}: a write it acknowledges is remembered, or moves the commit point. */
    void acknowledged(InFlight command, ReplyFacts reply) {
        if (command.write == null || reply.isError() || reply.writeConcernError()) {
            return;
        }
        if (command.write.majority()) {
            context.unreplicated().majorityAcknowledged(command.writeEpoch);
        } else if (command.changes != null) {
            context.unreplicated().acknowledged(command.changes, command.writeEpoch);
        }
    }

    /** A find's first batch; none when it failed (a user allowed to write and not to read: the rollback leaves those). */
    private static List<BsonDocument> documents(ByteBuf reply) {
        if (Header.opCode(reply) != OpCode.OP_MSG) {
            return List.of();
        }
        OpMsg msg = OpMsg.parse(reply);
        BsonDocument answer = BsonIo.decode(reply, msg.bodyOffset(), msg.sectionsEnd());
        List<BsonDocument> found = new ArrayList<>();
        for (BsonValue document : answer.getDocument("cursor", new BsonDocument()).getArray("firstBatch", new BsonArray())) {
            if (document.isDocument() && document.asDocument().containsKey("_id")) {
                found.add(document.asDocument());
            }
        }
        return found;
    }
}
