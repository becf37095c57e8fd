package io.blackpipe.pipe;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.channel.PendingWriteQueue;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.nio.channels.ClosedChannelException;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

/**
 * The link from a member to one client, next to the client's socket: while the member has a latency, each write
 * (a reply, an error the proxy made, a hello answered in the member's place, TLS records) and the close (FIN or
 * RST) reach the client that much later, in the order sent, as over a slow network. Writes wait in a
 * {@link PendingWriteQueue}, which counts them in the channel's writability, so backpressure still holds the
 * member's side. Once a close waits its turn, what the client sends is dropped: the member's end is gone, and
 * nothing sent into it runs. Without a latency and with nothing waiting, everything passes at once.
 */
final class SlowLink extends ChannelDuplexHandler {
    private final MemberListener listener;
    private PendingWriteQueue writes;
    /** What waits, in order: a write (its message is the next of {@link #writes}) or a close, and when it goes. */
    private final ArrayDeque<Waiting> waiting = new ArrayDeque<>();
    private long lastDueNanos = Long.MIN_VALUE;
    private ScheduledFuture<?> nextSend;
    private boolean closeWaiting;

    /** {@code close}: null for a write. */
    private record Waiting(long dueNanos, ChannelPromise close) {
    }

    SlowLink(MemberListener listener) {
        this.listener = listener;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        writes = new PendingWriteQueue(ctx);
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        long delayMillis = listener.nextDelayMillis();
        if (delayMillis == 0 && waiting.isEmpty()) {
            ctx.write(msg, promise);
            return;
        }
        writes.add(msg, promise);
        wait(ctx, delayMillis, null);
    }

    @Override
    public void flush(ChannelHandlerContext ctx) {
        if (waiting.isEmpty()) {
            ctx.flush();
        } // else each send flushes what it wrote
    }

    @Override
    public void close(ChannelHandlerContext ctx, ChannelPromise promise) {
        if (listener.closed()) { // the proxy is closing: nothing more reaches the client
            dropWhatWaits(ctx);
            ctx.close(promise);
            return;
        }
        long delayMillis = listener.nextDelayMillis();
        if (delayMillis == 0 && waiting.isEmpty()) {
            ctx.close(promise);
            return;
        }
        closeWaiting = true;
        wait(ctx, delayMillis, promise);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (closeWaiting) {
            ReferenceCountUtil.release(msg); // sent to a member's end that is already closed
            return;
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        dropWhatWaits(ctx); // the client left: what was on its way to it is lost
        ctx.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        dropWhatWaits(ctx);
    }

    private void wait(ChannelHandlerContext ctx, long delayMillis, ChannelPromise close) {
        // never before the one sent before it: a jitter reorders no bytes, as TCP does not
        long due = Math.max(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(delayMillis), lastDueNanos);
        lastDueNanos = due;
        waiting.add(new Waiting(due, close));
        if (nextSend == null) {
            scheduleNextSend(ctx);
        }
    }

    private void scheduleNextSend(ChannelHandlerContext ctx) {
        long in = waiting.peek().dueNanos() - System.nanoTime();
        nextSend = ctx.executor().schedule(() -> sendWhatIsDue(ctx), Math.max(0, in), TimeUnit.NANOSECONDS);
    }

    private void sendWhatIsDue(ChannelHandlerContext ctx) {
        nextSend = null;
        long now = System.nanoTime();
        while (!waiting.isEmpty() && waiting.peek().dueNanos() - now <= 0) {
            Waiting next = waiting.poll();
            if (next.close() == null) {
                writes.removeAndWrite();
            } else {
                ctx.flush();
                ctx.close(next.close());
            }
        }
        ctx.flush();
        if (!waiting.isEmpty()) {
            scheduleNextSend(ctx);
        }
    }

    private void dropWhatWaits(ChannelHandlerContext ctx) {
        if (nextSend != null) {
            nextSend.cancel(false);
            nextSend = null;
        }
        if (writes != null) {
            writes.removeAndFailAll(new ClosedChannelException());
        }
        for (Waiting left : waiting) {
            if (left.close() != null) {
                ctx.close(left.close()); // closed already: completes its promise
            }
        }
        waiting.clear();
    }
}
