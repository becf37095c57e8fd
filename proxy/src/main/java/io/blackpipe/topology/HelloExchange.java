package io.blackpipe.topology;

import io.blackpipe.wire.BsonIo;
import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.Header;
import io.blackpipe.wire.Messages;
import io.blackpipe.wire.OpCode;
import io.blackpipe.wire.OpMsg;
import io.blackpipe.wire.OpQuery;
import io.blackpipe.wire.OpReply;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.Arrays;
import java.util.List;
import org.bson.BsonDocument;

/**
 * The hello conversation of one connection: remembers which requests were hellos so that exactly
 * their replies (and the moreToCome replies that stream after an awaitable hello) are rewritten.
 * Every other reply passes untouched. Used from the connection's event loop only.
 */
public final class HelloExchange {
    private final HelloRewriter rewriter;
    private final MemberStates states;
    private final MemberAddress member;
    private final SimulatedReplicaSet simulation;
    private int[] pending = new int[2];
    private int pendingCount;

    public HelloExchange(HelloRewriter rewriter, MemberStates states, MemberAddress member) {
        this(rewriter, states, member, null);
    }

    /** @param simulation the simulated set {@code member} belongs to, or null for a real member */
    public HelloExchange(HelloRewriter rewriter, MemberStates states, MemberAddress member, SimulatedReplicaSet simulation) {
        this.rewriter = rewriter;
        this.states = states;
        this.member = member;
        this.simulation = simulation;
    }

    /**
     * Notes a hello request and returns the frame to forward: the same one, or a copy without a
     * compressor list (the original is then released).
     */
    public ByteBuf onRequest(ByteBufAllocator alloc, ByteBuf frame, CommandFacts facts, OpMsg msg, OpQuery query) {
        if (!facts.isHello()) {
            return frame;
        }
        if (!facts.moreToCome()) {
            remember(facts.requestId());
        }
        boolean shifted = msg != null && states.shifted(member);
        if (!facts.compressionRequested() && !shifted) {
            return frame;
        }
        ByteBuf rewritten;
        if (msg != null) {
            BsonDocument body = BsonIo.decode(frame, msg.bodyOffset(), msg.sectionsEnd());
            HelloRewriter.stripCompression(body);
            boolean unshifted = states.unshiftRequest(member, body);
            if (!facts.compressionRequested() && !unshifted) {
                return frame;
            }
            rewritten = Messages.opMsgWithBody(alloc, frame, msg, body);
        } else {
            BsonDocument document = BsonIo.decode(frame, query.queryOffset(), query.queryEnd());
            HelloRewriter.stripCompression(document.isDocument("$query") ? document.getDocument("$query") : document);
            rewritten = Messages.opQueryWithQuery(alloc, frame, query, document);
        }
        frame.release();
        return rewritten;
    }

    /** True while some hello reply is still expected on this connection. */
    public boolean expectsReplies() {
        return pendingCount > 0;
    }

    /** Returns the frame to send to the client: the reply itself or its rewritten copy. */
    public ByteBuf onReply(ByteBufAllocator alloc, ByteBuf frame) {
        if (pendingCount == 0 || !forget(Header.responseTo(frame))) {
            return frame;
        }
        int opCode = Header.opCode(frame);
        ByteBuf rewritten = null;
        if (opCode == OpCode.OP_MSG) {
            OpMsg msg = OpMsg.parse(frame);
            if (msg.moreToCome()) {
                remember(Header.requestId(frame)); // the next streamed reply answers this one
            }
            BsonDocument body = BsonIo.decode(frame, msg.bodyOffset(), msg.sectionsEnd());
            if (rewriteReply(body)) {
                rewritten = Messages.opMsgWithBody(alloc, frame, msg, body);
            }
        } else if (opCode == OpCode.OP_REPLY) {
            OpReply reply = OpReply.parse(frame);
            if (reply.numberReturned() == 1) {
                BsonDocument body = BsonIo.decode(frame, reply.firstDocumentOffset(), reply.end());
                if (rewriteReply(body)) {
                    rewritten = Messages.opReplyWithDocuments(alloc, frame, reply, List.of(body));
                }
            }
        }
        if (rewritten == null) {
            return frame;
        }
        frame.release();
        return rewritten;
    }

    /**
     * Notes what the member said about itself and makes the reply name the proxy. A real member's
     * state is read before rewriting (the topologyVersion shift must not be counted in); a
     * simulated member's after (its role is the simulation's).
     */
    private boolean rewriteReply(BsonDocument body) {
        if (simulation != null) {
            simulation.rewrite(body, member);
            rewriter.rewriteReply(body);
            states.observe(member, body);
            return true;
        }
        states.observe(member, body);
        boolean shifted = states.shiftReply(member, body);
        return rewriter.rewriteReply(body) | shifted;
    }

    private void remember(int requestId) {
        if (pendingCount == pending.length) {
            pending = Arrays.copyOf(pending, pending.length * 2);
        }
        pending[pendingCount++] = requestId;
    }

    private boolean forget(int requestId) {
        for (int i = 0; i < pendingCount; i++) {
            if (pending[i] == requestId) {
                pending[i] = pending[--pendingCount];
                return true;
            }
        }
        return false;
    }
}
