package io.blackpipe.pipe;

import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.Header;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * What the member's side of a connection does once its client left, as a mongod goes on with what a
 * client that went away sent it: a blocked command is sent when its block ends, and a retryable
 * write's first run still at a member that would run its retry again (see RetriedWrites), or a write or
 * commit that others wait on (see CommitsAlone), or a batch insert at a member that applies none of one that meets a
 * duplicate key (see DuplicateKeyBatches), is seen through: the member's connection stays open until it answered.
 * Used from the connection's event loop only.
 */
final class AfterTheClientLeft {
    private final ClientConnection connection;
    private final Exchange exchange;
    private final Channel upstream;
    /** A blocked command whose client left during the block, due at the member when the block ends. */
    private ByteBuf blocked;
    private CommandFacts blockedFacts;
    private boolean seeingThrough;
    private ScheduledFuture<?> seeThroughLimit;
    /** The blocked command asks again when what it waits for at the member ended (see RequestRewrites). */
    private final Runnable sendTheBlockedInItsTurn;

    AfterTheClientLeft(ClientConnection connection, Exchange exchange, Channel upstream) {
        this.connection = connection;
        this.exchange = exchange;
        this.upstream = upstream;
        this.sendTheBlockedInItsTurn = () -> connection.runOnItsEventLoop(this::sendTheBlocked); // the same loop
    }

    /**
     * Sends a blocked command whose client has left once its block ends, then closes the member's
     * connection: the member runs it as mongod runs a blocked command whose client went away.
     */
    void sendWhenTheBlockEnds(ByteBuf frame, CommandFacts facts, long delayMillis) {
        blocked = frame;
        blockedFacts = facts;
        upstream.eventLoop().schedule(this::sendTheBlocked, delayMillis, TimeUnit.MILLISECONDS);
    }

    /** Whether a blocked command waits for its block's end: the member's connection stays open for it. */
    boolean holdsABlockedCommand() {
        return blocked != null;
    }

    private void sendTheBlocked() {
        ByteBuf frame = blocked;
        if (frame == null) {
            return; // the member's connection closed meanwhile and released it, or it went
        }
        // the member's role when the block ends decides, as for any forwarded command
        SimulatedSecondary.Verdict verdict = upstream.isActive() && !connection.memberDown() && !connection.blackholed()
                ? exchange.asThisMemberTakesIt(frame, blockedFacts, sendTheBlockedInItsTurn) : null;
        if (verdict != null && verdict.waits()) {
            return; // its retry, or a commit, runs at the member: it asks again when that ended
        }
        blocked = null;
        if (verdict == null || verdict.frame() == null) {
            // nobody to send it to, a member that answers it itself, or its retry ran there: nothing more runs
            frame.release();
        } else {
            exchange.batches().forwarding(verdict.frame(), blockedFacts);
            upstream.writeAndFlush(verdict.frame(), upstream.voidPromise());
            exchange.runs().sent(blockedFacts, verdict);
        }
        closeUpstream();
    }

    /**
     * Closes the member's connection, unless something others wait on is still at the member (see RunsAtTheMember): a
     * retryable write's first run (see RetriedWrites), a write or a commit (see CommitsAlone), or a batch insert whose
     * duplicate key the proxy would answer as mongod (see DuplicateKeyBatches). Then it stays open without
     * its client until they answered, the member closed it, or {@link RetriedWrites#SEE_THROUGH_MILLIS} passed. A mongod
     * finishes a write whose client went away, and answers the write's retry from it; so does the proxy, in the place of
     * a member that would run the retry again, and a commit waiting for that write goes after it.
     */
    void closeUpstream() {
        RunsAtTheMember runs = exchange.runs();
        if (nothingAwaited() || !upstream.isActive()) {
            runs.endedUnanswered(); // none, or sent to a connection that had closed
            Channels.closeOnFlush(upstream);
            return;
        }
        if (!seeingThrough) {
            seeingThrough = true;
            upstream.config().setAutoRead(true); // nobody waits for its replies now, and no fault holds them
            upstream.flush();
            seeThroughLimit = upstream.eventLoop().schedule(() -> {
                connection.context().log().warn("member " + connection.member().upstream() + " has not answered a write "
                        + RetriedWrites.SEE_THROUGH_MILLIS / 1000 + " s after its client left: its connection closes, a retry"
                        + " of a retryable write may run it again, and the commits waiting for it go on");
                upstream.close();
            }, RetriedWrites.SEE_THROUGH_MILLIS, TimeUnit.MILLISECONDS);
        }
    }

    /** Whether the member's connection is kept for the runs at the member only: its replies go to no one. */
    boolean seesThrough() {
        return seeingThrough;
    }

    /**
     * A reply while {@link #seesThrough}: it ends its run (released here), unless it is a batch insert's duplicate key
     * that is made again as mongod's answer, which comes back here (see DuplicateKeyBatches); the last one closes the
     * member's connection.
     */
    void onReply(ByteBuf frame) {
        boolean held = false;
        try {
            held = exchange.batches().heldForARerun(frame);
            if (!held) {
                exchange.runs().onReply(Header.responseTo(frame), frame);
            }
        } finally {
            if (!held) {
                frame.release();
            }
        }
        if (nothingAwaited()) {
            Channels.closeOnFlush(upstream);
        }
    }

    /** Whether nothing that was sent is awaited at the member: no run others wait on, and no batch insert's answer. */
    private boolean nothingAwaited() {
        return exchange.runs().isEmpty() && !exchange.batches().awaited();
    }

    /** The member's connection closed: the runs it held end unanswered, and a blocked command goes nowhere. */
    void upstreamClosed() {
        exchange.runs().endedUnanswered();
        if (seeThroughLimit != null) {
            seeThroughLimit.cancel(false);
        }
        if (blocked != null) {
            blocked.release();
            blocked = null;
            connection.context().commits().gaveUp(sendTheBlockedInItsTurn); // if it waited for its turn
        }
    }
}
