package io.blackpipe.pipe;

import io.blackpipe.wire.ReplyFacts;
import io.netty.buffer.ByteBuf;

/**
 * A reply the client gets late: whole after a delay (delayReplyMS), or in pieces, the first at once
 * and one more every interval (trickleReply). Until its last byte is out the replies read after it
 * wait behind it (an exhaust stream's next replies too: each answers the one before) and the
 * member's connection is not read, so nothing piles up. If the client leaves first, what is left
 * of it is released and the command ends as a network error; a blackhole that begins meanwhile
 * holds the rest until it ends. Runs on the connection's event loop only.
 */
final class HeldReply {
    private final Exchange exchange;
    private final ByteBuf frame;
    private final InFlight inFlight;
    private final ReplyFacts facts;
    private final int bytesPerPiece;
    private final long intervalMillis;

    private HeldReply(Exchange exchange, ByteBuf frame, InFlight inFlight, ReplyFacts facts, int bytesPerPiece, long intervalMillis) {
        this.exchange = exchange;
        this.frame = frame;
        this.inFlight = inFlight;
        this.facts = facts;
        this.bytesPerPiece = bytesPerPiece;
        this.intervalMillis = intervalMillis;
        exchange.replies().hold(true); // later replies must not overtake this one
        exchange.connection().pauseUpstreamReads(true); // nor pile up behind it
    }

    /** Sends the reply whole, {@code millis} from now. */
    static void after(Exchange exchange, ByteBuf frame, InFlight inFlight, ReplyFacts facts, long millis) {
        HeldReply reply = new HeldReply(exchange, frame, inFlight, facts, Integer.MAX_VALUE, 0);
        exchange.connection().schedule(millis, reply::sendNext);
    }

    /** Sends {@code bytesPerPiece} bytes of the reply now, and as many every {@code intervalMillis} until it is out. */
    static void inPieces(Exchange exchange, ByteBuf frame, InFlight inFlight, ReplyFacts facts, int bytesPerPiece, long intervalMillis) {
        new HeldReply(exchange, frame, inFlight, facts, bytesPerPiece, intervalMillis).sendNext();
    }

    private void sendNext() {
        ClientConnection connection = exchange.connection();
        if (!connection.isOpen()) {
            frame.release();
            exchange.completeAsNetworkError(inFlight);
            return; // the replies behind it are released with the connection
        }
        if (connection.blackholed()) { // a blackhole began meanwhile: the rest waits for its end too
            exchange.replies().sendAfterTheBlackhole(this::sendNext);
            return;
        }
        if (frame.readableBytes() > bytesPerPiece) {
            connection.sendToClient(frame.readRetainedSlice(bytesPerPiece));
            connection.flushClient();
            connection.schedule(intervalMillis, this::sendNext);
            return;
        }
        CountedReply.send(exchange, inFlight, facts, frame); // its last byte: counted as it arrives (a slow link's later)
        exchange.replies().hold(false);
        connection.flushClient();
        connection.pauseUpstreamReads(false);
    }
}
