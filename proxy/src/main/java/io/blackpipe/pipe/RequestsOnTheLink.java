package io.blackpipe.pipe;

import io.blackpipe.fault.Bandwidth;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

/**
 * What a client sent that its link ({@link ClientLink}, under a member's {@link Bandwidth} or latency towards the
 * member) has not carried to the member's end yet: under a bandwidth each read is cut into pieces a hundredth of a
 * second's worth each, and each piece goes up the pipeline once the link has carried it, and its latency later, so a
 * large request (an insert of large documents) reaches the member spread over time, as over a narrow network; no
 * piece arrives before the one before it. Once the link holds a window's worth, the proxy stops reading the
 * client's socket, so the client's own writes wait, as a sender's do when the receiver's window is full. Under a
 * latency the window grows as TCP's does in slow start (by what the link carries once it filled, so it doubles
 * each delay), from {@link #INITIAL_WINDOW_BYTES} up to {@link #MAX_WINDOW_BYTES}: a large insert then takes a few
 * delays, as over a real long link, not one delay per initial window. The client's
 * end (FIN) comes behind what it sent ({@link #thenEnd}); a reset, or the proxy's close, loses what the link held
 * ({@link #drop}). Used from the connection's event loop only.
 */
final class RequestsOnTheLink {
    /** How much a new connection's link holds before the proxy stops reading the client: about a TCP receive window. */
    static final int INITIAL_WINDOW_BYTES = 64 * 1024;
    /** As far as a latency grows the window: about what Linux's receive buffer tuning allows by default (tcp_rmem). */
    static final int MAX_WINDOW_BYTES = 4 * 1024 * 1024;

    /** {@code delayed}: a latency held it, so its passing, with the window full, grows the window. */
    private record Piece(ByteBuf bytes, long dueNanos, boolean delayed) {
    }

    private final ArrayDeque<Piece> pieces = new ArrayDeque<>();
    private int bytesHeld;
    private int windowBytes = INITIAL_WINDOW_BYTES;
    /** Whether the window filled since the link last held nothing: the client waited on it, so what passes widens it. */
    private boolean windowLimited;
    /** When the link has carried what it holds: the next read's first piece starts then. */
    private long freeNanos = Long.MIN_VALUE;
    /** When the last piece arrives: a later one, its latency drawn shorter, never arrives before it. */
    private long lastDueNanos = Long.MIN_VALUE;
    private ScheduledFuture<?> nextPiece;
    /** The client's end, which comes once the last piece has passed; null: not ended. */
    private Runnable end;
    /** Told when the link fills or has room again: the connection reads the client or stops. */
    private final Runnable fullnessChanged;

    RequestsOnTheLink(Runnable fullnessChanged) {
        this.fullnessChanged = fullnessChanged;
    }

    /** Whether nothing waits: a read may pass at once, when no bandwidth is in force either. */
    boolean isEmpty() {
        return pieces.isEmpty();
    }

    /** Whether the link holds a window's worth: the proxy reads no more of the client until it has carried some. */
    boolean full() {
        return bytesHeld >= windowBytes;
    }

    /**
     * The link carries {@code bytes} after what it holds, at {@code bandwidth}'s rate, or right behind it when no
     * bandwidth narrows requests now ({@code bandwidth} null: none, it ended, or one narrows replies only), and they
     * arrive {@code delayNanos} after they are carried: what was read before goes first, as TCP keeps order.
     */
    void carry(ChannelHandlerContext ctx, ByteBuf bytes, Bandwidth bandwidth, long delayNanos) {
        boolean wasFull = full();
        long start = Math.max(System.nanoTime(), freeNanos);
        int total = bytes.readableBytes();
        boolean delayed = delayNanos > 0;
        if (bandwidth == null || total == 0) {
            pieces.add(new Piece(bytes, arrival(start + delayNanos), delayed));
        } else {
            int pieceBytes = bandwidth.pieceBytes(total);
            for (int carried = 0; carried < total; ) {
                int length = Math.min(pieceBytes, total - carried);
                ByteBuf piece = bytes.retainedSlice(bytes.readerIndex() + carried, length);
                carried += length;
                pieces.add(new Piece(piece, arrival(start + bandwidth.nanosFor(carried) + delayNanos), delayed));
            }
            start += bandwidth.nanosFor(total);
            bytes.release(); // its pieces hold it now
        }
        freeNanos = start;
        bytesHeld += total;
        if (nextPiece == null) {
            scheduleNext(ctx);
        }
        if (!wasFull && full()) {
            windowLimited = true;
            fullnessChanged.run();
        }
    }

    private long arrival(long dueNanos) {
        lastDueNanos = Math.max(dueNanos, lastDueNanos);
        return lastDueNanos;
    }

    private void scheduleNext(ChannelHandlerContext ctx) {
        long in = pieces.peek().dueNanos() - System.nanoTime();
        nextPiece = ctx.executor().schedule(() -> passWhatIsDue(ctx), Math.max(0, in), TimeUnit.NANOSECONDS);
    }

    /** The client ended its side (FIN): {@code end} runs once the link has carried the last piece, at once if none waits. */
    void thenEnd(Runnable end) {
        if (pieces.isEmpty()) {
            end.run();
        } else {
            this.end = end;
        }
    }

    /** Whether the client's end (FIN) came and waits behind what the link still carries. */
    boolean clientEnded() {
        return end != null;
    }

    /** Passes up the pipeline each piece the link has carried by now; after the last, the client's end, if it came. */
    private void passWhatIsDue(ChannelHandlerContext ctx) {
        nextPiece = null;
        if (!ctx.channel().isActive()) { // its close is on its way here: that drops what is left
            return;
        }
        boolean wasFull = full();
        long now = System.nanoTime();
        boolean passed = false;
        while (!pieces.isEmpty() && pieces.peek().dueNanos() - now <= 0) {
            Piece next = pieces.poll();
            int length = next.bytes().readableBytes();
            bytesHeld -= length;
            if (windowLimited && next.delayed()) { // the window, not the rate, held the client back: slow start widens it
                windowBytes = (int) Math.min(MAX_WINDOW_BYTES, (long) windowBytes + length);
            }
            passed = true;
            ctx.fireChannelRead(next.bytes()); // may close the connection, which drops what is left here
        }
        if (passed) {
            ctx.fireChannelReadComplete();
        }
        if (pieces.isEmpty()) {
            windowLimited = false;
        }
        if (!pieces.isEmpty() && nextPiece == null) {
            scheduleNext(ctx);
        }
        if (wasFull && !full()) {
            fullnessChanged.run();
        }
        if (pieces.isEmpty() && end != null) {
            Runnable ended = end;
            end = null;
            ended.run();
        }
    }

    /** The connection ended (the proxy closed it, or the client reset it): what the link still held never reaches the member's end. */
    void drop() {
        end = null;
        if (nextPiece != null) {
            nextPiece.cancel(false);
            nextPiece = null;
        }
        while (!pieces.isEmpty()) {
            pieces.poll().bytes().release();
        }
        bytesHeld = 0;
        windowLimited = false;
    }
}
