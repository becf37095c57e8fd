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
    /** Whether the client streams hello (an awaitable hello with exhaustAllowed) and the member still answers it. */
    private boolean streaming;
    /** The responseTo of the member's next streamed reply: the request's id, then each reply's. */
    private int streamAwaited;
    /** The requestId the client's next streamed reply must answer: the member's last, or the proxy's early answer. */
    private int streamChain;
    /** The member's last hello reply on this connection as it sent it: what an early answer repeats. */
    private BsonDocument lastFromMember;
    /** The command the client streams: hello, or legacy isMaster, whose replies name the primary differently. */
    private String streamedName;

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
        if (msg != null && facts.exhaustAllowed()) {
            streaming = true;
            streamedName = facts.name();
            streamAwaited = facts.requestId();
            streamChain = facts.requestId();
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
            boolean rechained = streaming && Header.responseTo(frame) == streamAwaited && chainStream(frame, msg);
            BsonDocument body = BsonIo.decode(frame, msg.bodyOffset(), msg.sectionsEnd());
            if (simulation == null) {
                lastFromMember = body.clone();
            }
            if (rewriteReply(body) || rechained) {
                rewritten = Messages.opMsgWithBody(alloc, frame, msg, body);
            }
        } else if (opCode == OpCode.OP_REPLY) {
            OpReply reply = OpReply.parse(frame);
            if (reply.numberReturned() == 1) {
                BsonDocument body = BsonIo.decode(frame, reply.firstDocumentOffset(), reply.end());
                if (simulation == null) {
                    lastFromMember = body.clone(); // the handshake's: all there is until the stream's first reply
                }
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
     * Follows the member's streamed reply; true when its responseTo had to be changed to answer
     * the proxy's early answer that the client got in between.
     */
    private boolean chainStream(ByteBuf frame, OpMsg msg) {
        if (msg.moreToCome()) {
            streamAwaited = Header.requestId(frame);
        } else {
            streaming = false;
        }
        boolean rechained = Header.responseTo(frame) != streamChain;
        if (rechained) {
            frame.setIntLE(frame.readerIndex() + 8, streamChain); // the header's responseTo
        }
        streamChain = Header.requestId(frame);
        return rechained;
    }

    /**
     * The member's topologyVersion moved on (the proxy shifted it for a state-change error it
     * injected): a server answers its awaiting hellos at once when that happens, so a streaming
     * client gets its next hello now, with the new counter, rather than when the member's wait
     * ends (maxAwaitTimeMS). Returns that reply, or null when this connection streams no hello.
     * The member's own next streamed reply is then chained after it.
     */
    public ByteBuf answerStreamNow(ByteBufAllocator alloc, int requestId) {
        if (!streaming || lastFromMember == null || simulation != null) {
            return null;
        }
        BsonDocument body = lastFromMember.clone();
        body.remove("speculativeAuthenticate"); // the handshake's answers, not a heartbeat's
        body.remove("saslSupportedMechs");
        String writable = "hello".equals(streamedName) ? "isWritablePrimary" : "ismaster";
        String other = writable.equals("ismaster") ? "isWritablePrimary" : "ismaster";
        if (body.containsKey(other)) {
            body.put(writable, body.remove(other));
        }
        states.shiftReply(member, body);
        rewriter.rewriteReply(body);
        ByteBuf reply = Messages.opMsg(alloc, requestId, streamChain, OpMsg.MORE_TO_COME, body);
        streamChain = requestId;
        return reply;
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
