package io.blackpipe.pipe;

import io.blackpipe.fault.ReplyFate;
import io.blackpipe.wire.CommandFacts;
import io.netty.buffer.ByteBuf;
import org.bson.BsonDocument;

/**
 * The next reply in a hello stream (the member's, or the next the proxy makes for a member that does not stream), a
 * check that a rule picked: mongod makes each such reply by running the hello again, and its failCommand failpoint
 * fails those too. So the check ends the stream with an error, closes or resets the connection, or goes unanswered
 * (the client's own timeout ends it), as mongod's failpoint would have it; held first by a block, or let through, it
 * goes to the client as every hello reply does.
 */
final class InterceptedStreamedHello extends ExchangeInterception {
    private final CommandFacts facts;
    private final Runnable goOn;
    private final ByteBuf membersReply;

    /**
     * @param facts        the hello the client streams
     * @param goOn         lets the check's reply go on to the client
     * @param membersReply the member's streamed reply, or null for one the proxy makes (not made yet)
     */
    InterceptedStreamedHello(Exchange exchange, CommandFacts facts, Runnable goOn, ByteBuf membersReply) {
        super(exchange, null); // no request: only a getMore's frame is read here (onChangeStream), never a hello's
        this.facts = facts;
        this.goOn = goOn;
        this.membersReply = membersReply;
    }

    @Override
    public CommandFacts facts() {
        return facts;
    }

    @Override
    public void forward() {
        goOn.run();
    }

    @Override
    public void forward(ReplyFate fate) {
        // RuleParser refuses reply fates on hello: its reply is the proxy's to rewrite
        throw new IllegalStateException("a hello cannot be forwarded with a reply fate");
    }

    @Override
    public void answer(BsonDocument reply) {
        exchange.hellos().endStreamWith(reply);
        dropTheMembers();
        exchange.connection().flushClient();
    }

    @Override
    public void close() {
        release();
        exchange.connection().closeClient(false);
    }

    @Override
    public void reset() {
        release();
        exchange.connection().closeClient(true);
    }

    @Override
    public void hang() {
        exchange.hellos().endStreamUnanswered();
        dropTheMembers();
    }

    /** The stream ended here: the member's reply goes the way of its stream, which drops it and marks the next for dropping. */
    private void dropTheMembers() {
        if (membersReply != null) {
            goOn.run();
        }
    }

    private void release() {
        if (membersReply != null) {
            membersReply.release();
        }
    }

    /**
     * The check waits, and the member's replies read after it wait behind it, as behind a blocked hello on mongod; a
     * blackhole that began meanwhile holds it until it ends, as it holds every reply.
     */
    @Override
    public void after(long millis, Runnable then) {
        ClientConnection connection = exchange.connection();
        exchange.replies().hold(true);
        connection.pauseUpstreamReads(true);
        connection.schedule(millis, new Runnable() {
            @Override
            public void run() {
                if (connection.isOpen() && connection.blackholed()) {
                    exchange.replies().sendAfterTheBlackhole(this);
                    return;
                }
                try {
                    if (connection.isOpen()) {
                        then.run();
                        connection.flushClient();
                    } else {
                        release();
                    }
                } catch (RuntimeException e) { // a malformed reply: read here, off the pipeline, it closes the connection
                    if (membersReply != null && membersReply.refCnt() > 0) {
                        membersReply.release();
                    }
                    throw e;
                } finally {
                    exchange.replies().hold(false);
                    connection.pauseUpstreamReads(false);
                }
            }
        });
    }

    @Override
    public void blockThenForward(long millis) {
        after(millis, this::forward);
    }
}
