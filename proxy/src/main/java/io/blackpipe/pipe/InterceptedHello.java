package io.blackpipe.pipe;

import io.blackpipe.fault.ReplyFate;
import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.Messages;
import io.blackpipe.wire.OpMsg;
import io.blackpipe.wire.OpQuery;
import io.netty.buffer.ByteBuf;
import java.util.List;
import org.bson.BsonDocument;

/**
 * A hello (or isMaster) a rule picked: closed, reset, answered with an error, held or swallowed as
 * mongod's failCommand does to it, or forwarded with its reply rewritten as every hello is. Nothing
 * here is counted as an application command; the rule's fault is.
 */
final class InterceptedHello extends ExchangeInterception {
    private final CommandFacts facts;
    private final OpMsg msg;
    private final OpQuery query;

    /** @param msg the OP_MSG view of {@code frame}, or null for an OP_QUERY handshake ({@code query}) */
    InterceptedHello(Exchange exchange, ByteBuf frame, CommandFacts facts, OpMsg msg, OpQuery query) {
        super(exchange, frame);
        this.facts = facts;
        this.msg = msg;
        this.query = query;
    }

    @Override
    public CommandFacts facts() {
        return facts;
    }

    @Override
    public void forward() {
        exchange.hellos().forward(frame, facts, msg, query);
    }

    @Override
    public void forward(ReplyFate fate) {
        // RuleParser refuses reply fates on hello: its reply is the proxy's to rewrite
        throw new IllegalStateException("a hello cannot be forwarded with a reply fate");
    }

    @Override
    public void answer(BsonDocument reply) {
        frame.release();
        ClientConnection connection = exchange.connection();
        int requestId = exchange.context().nextRequestId();
        exchange.answerInTurn(query == null
                ? Messages.opMsg(connection.alloc(), requestId, facts.requestId(), 0, reply)
                : Messages.opReply(connection.alloc(), requestId, facts.requestId(), 0, 0, 0, List.of(reply)));
    }

    @Override
    public void close() {
        frame.release();
        exchange.connection().closeClient(false);
    }

    @Override
    public void reset() {
        frame.release();
        exchange.connection().closeClient(true);
    }

    @Override
    public void hang() {
        frame.release(); // the monitor's socket timeout ends it, as against a member that stopped answering
        exchange.requests().holdOpenEnded(); // and nothing sent after it is taken
    }

    @Override
    public void after(long millis, Runnable then) {
        exchange.requests().hold(millis, () -> {
            if (exchange.connection().isOpen()) {
                WaitingRequests.goOn(frame, then);
            } else {
                frame.release();
            }
        });
    }

    @Override
    public void blockThenForward(long millis) {
        after(millis, this::forward);
    }
}
