package io.blackpipe.pipe;

import io.blackpipe.fault.ReplyFate;
import io.blackpipe.observe.Outcome;
import io.blackpipe.wire.BsonIo;
import io.blackpipe.wire.Messages;
import io.blackpipe.wire.OpMsg;
import io.blackpipe.wire.ReplyFacts;
import io.netty.buffer.ByteBuf;
import org.bson.BsonDocument;

/** The reply to an intercepted command, and what its fault's reply fate may do with it. */
final class UpstreamReply implements ReplyFate.Reply {
    private final Exchange exchange;
    private final ByteBuf frame;
    private final InFlight inFlight;
    private final ReplyFacts facts;
    private BsonDocument body;

    UpstreamReply(Exchange exchange, ByteBuf frame, InFlight inFlight, ReplyFacts facts) {
        this.exchange = exchange;
        this.frame = frame;
        this.inFlight = inFlight;
        this.facts = facts;
    }

    @Override
    public BsonDocument body() {
        if (body == null) {
            OpMsg msg = OpMsg.parse(frame);
            body = BsonIo.decode(frame, msg.bodyOffset(), msg.sectionsEnd());
        }
        return body;
    }

    @Override
    public void pass() {
        CountedReply.send(exchange, inFlight, facts, frame);
    }

    @Override
    public void passAfter(long millis) {
        HeldReply.after(exchange, frame, inFlight, facts, millis);
    }

    @Override
    public void passInPieces(int bytesPerPiece, long intervalMillis) {
        HeldReply.inPieces(exchange, frame, inFlight, facts, bytesPerPiece, intervalMillis);
    }

    @Override
    public void replace(BsonDocument replacement) {
        ByteBuf rewritten = Messages.opMsgWithBody(exchange.connection().alloc(), frame, OpMsg.parse(frame), replacement);
        frame.release();
        CountedReply.send(exchange, inFlight, ReplyFacts.of(rewritten), rewritten); // counted as the client gets it
    }

    @Override
    public void dropAndReset() {
        frame.release();
        exchange.completeAsNetworkError(inFlight);
        exchange.connection().closeClient(true);
    }

    @Override
    public void truncateAndClose(int bytes) {
        // one byte short at least: a whole reply would be a success, and the rule promises a cut
        ByteBuf cut = frame.retainedSlice(frame.readerIndex(), Math.min(bytes, frame.readableBytes() - 1));
        frame.release();
        exchange.completeAsNetworkError(inFlight);
        exchange.connection().sendToClient(cut);
        exchange.connection().closeClient(false); // FIN once the cut is flushed: the client reads end of stream
    }
}
