package io.blackpipe.pipe;

import io.blackpipe.fault.ErrorCodes;
import io.blackpipe.topology.Member;
import io.blackpipe.topology.SetDescriptions;
import io.blackpipe.topology.SimulatedReplicaSet;
import io.blackpipe.wire.BsonIo;
import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.Messages;
import io.blackpipe.wire.OpMsg;
import io.blackpipe.wire.ReplyFacts;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.function.Predicate;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonString;

/**
 * The member's replies to application commands that the proxy changes on their way, so that
 * they agree with what the proxy made the member say of itself; every other reply passes as it came.
 */
final class ReplyRewrites {
    private ReplyRewrites() {
    }

    /** {@code frame} as this member would have sent it (the same frame, or a rewritten one that replaces it). */
    static ByteBuf asThisMemberWouldSay(ByteBuf frame, ReplyFacts reply, CommandFacts request, PipeContext context,
                                        Member member, ByteBufAllocator alloc) {
        SimulatedReplicaSet simulation = context.simulation();
        if (simulation != null && reply.isError() && reply.code() == ErrorCodes.COMMAND_NOT_FOUND) {
            // a real member always answers rs.status() and rs.conf(): where the node lacks them (jongodb), the member does
            BsonDocument oneNode = SetDescriptions.ofOneNode(request, simulation.setName(), simulation.term());
            if (oneNode != null) {
                return withBody(frame, alloc, body -> {
                    body.clear();
                    body.putAll(oneNode);
                    return simulation.rewriteReply(request, body, member.upstream());
                });
            }
        }
        if (reply.isError() && reply.code() == ErrorCodes.WRITE_CONFLICT && request.name().equals("commitTransaction")
                && context.memberStates().quirks(member.upstream()).commitRacesWrites()) {
            // jongodb finds a transaction's write conflict at its commit, and says it without the label mongod gives a
            // commit's WriteConflict (error_labels.cpp): withTransaction gave up where, on mongod, it runs it again
            return withBody(frame, alloc, ReplyRewrites::labelledTransient);
        }
        if (reply.isError() && context.memberStates().versionsRewritten(member.upstream())) {
            // The member's own error once the proxy has shifted its counter (see MemberStates): its
            // topologyVersion gains the shift too, or drivers would take a real stepdown's
            // NotWritablePrimary for an older one than they hold, and ignore it.
            return withBody(frame, alloc, body -> context.memberStates().shiftReply(member.upstream(), body));
        }
        if (reply.isError() || (simulation == null && !context.rewriter().rewritesAddresses())
                || !SetDescriptions.describesTheSet(request)) {
            return frame; // what ordinary commands pay: one look at the command's name
        }
        if (simulation != null) {
            // the one real node speaks of itself and its set; the driver asked this simulated member
            return withBody(frame, alloc, body -> simulation.rewriteReply(request, body, member.upstream()));
        }
        if (context.rewriter().rewritesAddresses()) {
            // a real member names the members as they are: the proxy's addresses, as in its hello
            return withBody(frame, alloc, body -> context.rewriter().rewriteSetDescription(request, body));
        }
        return frame;
    }

    /** Adds TransientTransactionError to the error's labels; false when it has it already (the reply passes as it came). */
    private static boolean labelledTransient(BsonDocument error) {
        BsonString transientError = new BsonString("TransientTransactionError");
        BsonArray labels = error.isArray("errorLabels") ? error.getArray("errorLabels") : new BsonArray();
        if (labels.contains(transientError)) {
            return false;
        }
        labels.add(transientError);
        error.put("errorLabels", labels);
        return true;
    }

    /** The reply with its body rewritten, or the same frame when {@code rewrite} changed nothing. */
    private static ByteBuf withBody(ByteBuf frame, ByteBufAllocator alloc, Predicate<BsonDocument> rewrite) {
        OpMsg msg = OpMsg.parse(frame);
        BsonDocument body = BsonIo.decode(frame, msg.bodyOffset(), msg.sectionsEnd());
        if (!rewrite.test(body)) {
            return frame;
        }
        ByteBuf rewritten = Messages.opMsgWithBody(alloc, frame, msg, body);
        frame.release();
        return rewritten;
    }
}
