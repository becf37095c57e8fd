package io.blackpipe.pipe;

import io.blackpipe.topology.HelloExchange;
import io.blackpipe.wire.BsonIo;
import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.Header;
import io.blackpipe.wire.OpMsg;
import io.netty.buffer.ByteBuf;
import org.bson.BsonDocument;

/**
 * The hellos of one connection that the proxy answers in the member's place: an awaitable one the
 * member holds when its topologyVersion moves on; one the member answered before a server would
 * have (see {@link #onReply}); and those that come while the member still
 * holds an awaitable hello the proxy already answered early (see {@link
 * HelloExchange#memberHoldsAnsweredHello}): forwarded, they would wait behind that one until its
 * maxAwaitTimeMS ended, and the client would hear the member's state that much later than from a
 * server. An awaitable hello that waits here gets its answer when its own maxAwaitTimeMS ends at
 * the latest, as from a server. Used from the connection's event loop only.
 */
final class HelloStandIn {
    /** The rules on hello, asked about each check of a stream made here (see {@link HelloPath#onReply}). */
    interface StreamedChecks {
        /** Whether a rule took the check (of a reply not made yet: null): then {@code goOn} runs if it lets it through. */
        boolean faulted(Runnable goOn, ByteBuf membersReply);
    }

    private final ClientConnection connection;
    private final HelloExchange hellos;
    private final PipeContext context;
    private final StreamedChecks checks;
    /** Whether the wait of a hello held here ended during a blackhole, and which: it is answered when the blackhole ends. */
    private boolean waitEndedInBlackhole;
    private int endedWaitId;

    HelloStandIn(ClientConnection connection, HelloExchange hellos, PipeContext context, StreamedChecks checks) {
        this.connection = connection;
        this.hellos = hellos;
        this.context = context;
        this.checks = checks;
    }

    /**
     * True when the hello in {@code frame} (released then) was answered here or waits here; false:
     * forward it as usual. A streamed (exhaustAllowed) or legacy OP_QUERY hello, and one the member
     * would refuse as malformed, always go on.
     */
    boolean tookOver(ByteBuf frame, CommandFacts facts, OpMsg msg) {
        if (msg == null || facts.exhaustAllowed() || facts.moreToCome() || !hellos.memberHoldsAnsweredHello()) {
            return false;
        }
        BsonDocument request = BsonIo.decode(frame, msg.bodyOffset(), msg.sectionsEnd());
        if (!wellFormed(request)) {
            return false;
        }
        frame.release();
        ByteBuf reply = hellos.standIn(connection.alloc(), request, facts, context.nextRequestId());
        if (reply != null) {
            send(reply);
        } else {
            connection.schedule(request.getNumber("maxAwaitTimeMS").longValue(), () -> answerAfterItsWait(facts.requestId()));
        }
        return true;
    }

    /** As the server checks an awaitable hello: topologyVersion and maxAwaitTimeMS together, a document and a number >= 0. */
    private static boolean wellFormed(BsonDocument request) {
        if (!request.containsKey("topologyVersion") && !request.containsKey("maxAwaitTimeMS")) {
            return true;
        }
        return request.isDocument("topologyVersion") && request.isNumber("maxAwaitTimeMS")
                && request.getNumber("maxAwaitTimeMS").longValue() >= 0;
    }

    /**
     * A reply of the member's to a hello goes to the client as {@link HelloExchange#onReply} rewrites
     * it, or not at all: a late reply the proxy already gave, or one held here as the member would
     * have held it ({@link HelloExchange#takeHeld}), which goes when the rest of its hello's wait
     * ends, unless an election or a state change answers that hello first.
     */
    void onReply(ByteBuf frame) {
        ByteBuf reply = hellos.onReply(connection.alloc(), frame);
        if (reply != null) {
            connection.sendToClient(reply);
        }
        answerHeldInTime(); // held, or a stream that goes on from here: its next reply
    }

    /** Schedules the answer {@link HelloExchange#takeHeld} holds, if any, for when it is due. */
    private void answerHeldInTime() {
        HelloExchange.Held held = hellos.takeHeld();
        if (held != null) {
            connection.schedule(held.millis(), () -> answerAfterItsWait(held.requestId()));
        }
    }

    /**
     * The wait of a hello held here ended. Nothing crosses a blackhole: a hello held through one is
     * answered when it ends, as the member's own reply, held there, would be.
     */
    private void answerAfterItsWait(int requestId) {
        if (!connection.isOpen()) {
            return;
        }
        if (connection.blackholed()) {
            waitEndedInBlackhole = true;
            endedWaitId = requestId;
            return;
        }
        // the next reply of a stream made here is a check, as a streaming server's is: a rule may take it first
        if (hellos.makesAStreamedCheck(requestId) && checks.faulted(() -> sendWaitedHere(requestId), null)) {
            return;
        }
        sendWaitedHere(requestId);
    }

    private void sendWaitedHere(int requestId) {
        ByteBuf reply = hellos.answerWaitedHere(connection.alloc(), context.nextRequestId(), requestId);
        if (reply != null) {
            send(reply);
            answerHeldInTime(); // a stream made here: its next reply
        }
    }

    /** The member's blackhole ended: a hello whose wait ended in it is answered now. */
    void blackholeEnded() {
        if (waitEndedInBlackhole) {
            waitEndedInBlackhole = false;
            answerAfterItsWait(endedWaitId);
        }
    }

    /**
     * The member's topologyVersion moved on: an awaitable hello the member holds is answered now (see
     * {@link HelloExchange#answerAwaitingNow}); nothing passes a blackholed member. Returns the
     * responseTo of the answer, or -1 when none was sent.
     */
    int answerAwaitingNow() {
        if (!connection.isOpen() || connection.blackholed()) {
            return -1;
        }
        ByteBuf reply = hellos.answerAwaitingNow(connection.alloc(), context.nextRequestId());
        if (reply == null) {
            return -1;
        }
        int answered = Header.responseTo(reply);
        send(reply);
        answerHeldInTime(); // a stream made here: its next reply
        return answered;
    }

    /**
     * The member quiesces: the awaitable hello that waits on this connection is answered now with
     * {@code error} (see {@link HelloExchange#answerAwaitingWithError}); nothing passes a blackholed
     * member. Returns the responseTo of the answer, or -1 when none was sent.
     *
     * @param beforeSending run when an answer is made, before the client can read it (its fault counted)
     */
    int answerAwaitingWith(BsonDocument error, Runnable beforeSending) {
        if (!connection.isOpen() || connection.blackholed()) {
            return -1;
        }
        ByteBuf reply = hellos.answerAwaitingWithError(connection.alloc(), context.nextRequestId(), error);
        if (reply == null) {
            return -1;
        }
        beforeSending.run();
        int answered = Header.responseTo(reply);
        send(reply);
        return answered;
    }

    private void send(ByteBuf reply) {
        connection.sendToClient(reply);
        connection.flushClient();
    }
}
