package io.blackpipe.pipe;

import io.blackpipe.fault.ReplyFate;
import io.blackpipe.observe.Attempt;
import io.blackpipe.wire.CommandFacts;
import io.netty.buffer.ByteBuf;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;

/** A command a rule picked, and what the fault may do with it on this connection. */
final class InterceptedCommand extends ExchangeInterception {
    private final Attempt attempt;
    private final long fingerprint;
    private final String fault;

    InterceptedCommand(Exchange exchange, ByteBuf frame, Attempt attempt, long fingerprint, String fault) {
        super(exchange, frame);
        this.attempt = attempt;
        this.fingerprint = fingerprint;
        this.fault = fault;
    }

    @Override
    public CommandFacts facts() {
        return attempt.facts();
    }

    @Override
    public void forward() {
        exchange.forward(frame, attempt, fingerprint, fault, null);
    }

    @Override
    public void forward(ReplyFate fate) {
        exchange.forward(frame, attempt, fingerprint, fault, fate);
    }

    @Override
    public void answer(BsonDocument reply) {
        frame.release();
        exchange.answer(attempt, fingerprint, fault, reply);
    }

    @Override
    public void close() {
        frame.release();
        exchange.abandon(attempt, fingerprint, fault, true);
        exchange.connection().closeClient(false);
    }

    @Override
    public void reset() {
        frame.release();
        exchange.abandon(attempt, fingerprint, fault, true);
        exchange.connection().closeClient(true);
    }

    @Override
    public void hang() {
        frame.release();
        exchange.hang(attempt, fingerprint, fault);
    }

    @Override
    public void blockThenForward(long millis) {
        long endsAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        exchange.requests().hold(millis, () -> {
            if (exchange.interruptedAtShutdown(attempt, fingerprint)) { // the member exited: its failpoint's sleep too
                frame.release();
            } else if (exchange.connection().isOpen()) {
                WaitingRequests.goOn(frame, this::forward);
            } else { // the client gave up: counted now, as it saw it; the member still gets the command
                exchange.abandon(attempt, fingerprint, fault, false);
                long left = TimeUnit.NANOSECONDS.toMillis(Math.max(0, endsAt - System.nanoTime()));
                exchange.connection().sendAfterClientLeft(frame, attempt.facts(), left);
            }
        });
    }

    @Override
    public void after(long millis, Runnable then) {
        exchange.requests().hold(millis, () -> {
            if (exchange.interruptedAtShutdown(attempt, fingerprint)) { // the member exited: its failpoint's sleep too
                frame.release();
            } else if (exchange.connection().isOpen()) {
                WaitingRequests.goOn(frame, then);
            } else { // the client gave up while the command was held
                frame.release();
                exchange.abandon(attempt, fingerprint, fault, false);
            }
        });
    }
}
