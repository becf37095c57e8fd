package io.blackpipe.topology;

import io.blackpipe.wire.BsonIo;
import io.blackpipe.wire.Header;
import io.blackpipe.wire.OpCode;
import io.blackpipe.wire.OpMsg;
import io.netty.buffer.ByteBuf;
import org.bson.BsonDocument;

/** A member's hello replies on one connection ({@link HelloExchange}): what they say of it noted, and each made to name the proxy. */
final class HelloReplies {
    private final HelloRewriter rewriter;
    private final MemberStates states;
    private final MemberAddress member;
    private final SimulatedReplicaSet simulation;
    private final LastHello lastHello;

    HelloReplies(HelloRewriter rewriter, MemberStates states, MemberAddress member, SimulatedReplicaSet simulation, LastHello lastHello) {
        this.rewriter = rewriter;
        this.states = states;
        this.member = member;
        this.simulation = simulation;
        this.lastHello = lastHello;
    }

    /** What the member says in a reply the client no longer waits for still counts as its latest word. */
    void observeLate(ByteBuf frame, boolean legacyReply) {
        if (Header.opCode(frame) == OpCode.OP_MSG) {
            OpMsg msg = OpMsg.parse(frame);
            BsonDocument late = BsonIo.decode(frame, msg.bodyOffset(), msg.sectionsEnd());
            if (!isError(late)) {
                lastHello.remember(late.clone());
                if (simulation != null) {
                    simulation.rewriteAndObserve(late, member); // the real node's role is not the member's
                } else {
                    states.observe(member, late, legacyReply);
                }
            }
        }
    }

    static boolean isError(BsonDocument reply) {
        return reply.isNumber("ok") && reply.getNumber("ok").doubleValue() == 0;
    }

    /**
     * Notes what the member said about itself and makes the reply name the proxy (an error reply says
     * nothing of it and names no member: it is left as it came, but for a shifted counter). A real member's
     * state is read before rewriting (the topologyVersion shift must not be counted in); a
     * simulated member's after (its role is the simulation's).
     */
    boolean rewriteReply(BsonDocument body, boolean legacyReply) {
        if (isError(body)) { // not the member's state (its role, wire version, counter) and nothing to rewrite but the counter
            return states.shiftReply(member, body);
        }
        if (simulation != null) {
            rewriter.rewriteReply(body);
            simulation.rewriteAndObserve(body, member);
            return true;
        }
        states.observe(member, body, legacyReply);
        boolean shifted = states.shiftReply(member, body);
        return rewriter.rewriteReply(body) | shifted;
    }
}
