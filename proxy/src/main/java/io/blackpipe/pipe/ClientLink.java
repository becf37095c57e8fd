package io.blackpipe.pipe;

import io.blackpipe.fault.Bandwidth;
import io.blackpipe.fault.IdleTimeout;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPromise;
import io.netty.channel.PendingWriteQueue;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.channel.socket.ChannelInputShutdownReadComplete;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.nio.channels.ClosedChannelException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The link from a member to one client, next to the client's socket: while the member has a latency, each write
 * (a reply, an error the proxy made, a hello answered in the member's place, TLS records) and the close (FIN or
 * RST) reach the client that much later, in the order sent, as over a slow network. Under a bandwidth towards the
 * clients, the link carries one write after another at its rate, in pieces a hundredth of a second's worth each, each
 * arriving once carried (and its latency later); under one towards the member, what the client sends crosses at its
 * rate to the member's end, and under a latency towards the member it arrives that much later, the client's FIN
 * behind it either way ({@link RequestsOnTheLink}). A reset throws away the writes not yet carried, as a sender's reset does: the replies in them are lost
 * ({@link Delivery}). Without a latency or a bandwidth and with nothing waiting, everything passes at once. While the
 * member has an idle timeout, the link has a middlebox that forgets it once nothing has crossed it either way for that
 * long: the proxy's side ends then, as after a close, the client is told nothing, and what it sends later is dropped
 * or answered with a reset ({@link IdleTimeout}).
 *
 * <p>The proxy is the member's end of that link, and at that end things happen at once: a write is done as soon as
 * it is on its way (its promise completes then, as a socket's does once the kernel has the bytes), and a close ends
 * the connection for the proxy at once (channelInactive goes up the pipeline then, as after a socket's close: its
 * commands end, its member connection closes, and what the client sends after is dropped, as it would reach a
 * closed socket), while the client sees the end only once the bytes sent before it have arrived. Waiting writes
 * sit in a {@link PendingWriteQueue}, which counts them in the channel's writability, so backpressure still holds
 * the member's side.
 */
final class ClientLink extends ChannelDuplexHandler {
    private final MemberListener listener;
    private ChannelHandlerContext ctx;
    /** Made with the first write that waits: most connections never meet a latency (the benchmark's idle connections). */
    private PendingWriteQueue writes;
    /** What waits, in order: a write (its message is the next of {@link #writes}) or a close, and when it goes. */
    private final ArrayDeque<WaitingOnTheLink> waiting = new ArrayDeque<>(2);
    private long lastDueNanos = Long.MIN_VALUE;
    /** When the link has carried what was given it (under a bandwidth): the next write's first piece starts then. */
    private long linkFreeNanos = Long.MIN_VALUE;
    private ScheduledFuture<?> nextSend;
    /** A close waits its turn: for the proxy the connection has ended (channelInactive went up already). */
    private boolean closedAtTheMembersEnd;
    /** When something last crossed the link, while an idle timeout is in force. */
    private long lastCrossedNanos;
    private ScheduledFuture<?> idleCheck;
    /** What the middlebox does with what the client sends, once it forgot this connection; null: not forgotten. */
    private IdleTimeout.Then forgotten;
    /** Made with the first request a bandwidth narrows: what the client sent that the link has not carried yet. */
    private RequestsOnTheLink requests;
    /** A read asked for (by a decoder, with auto-read off) while the link was full: it is made once there is room. */
    private boolean readWanted;

    ClientLink(MemberListener listener) {
        this.listener = listener;
    }

    /** Whether the link holds a window's worth of requests: the proxy reads no more of the client until it carried some. */
    boolean holdsRequests() {
        return requests != null && requests.full();
    }

    /** How many writes (or pieces of them) and closes wait on the link. */
    int waitingOnTheLink() {
        return waiting.size();
    }

    /** Whether the connection has ended for the proxy, though its end may still be on its way to the client. */
    boolean closedAtTheMembersEnd() {
        return closedAtTheMembersEnd;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        idleTimeoutBegan();
        ctx.fireChannelActive();
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (forgotten != null) { // the middlebox forgot this connection: what the member's side sends is lost
            ReferenceCountUtil.release(msg);
            promise.trySuccess();
            return;
        }
        crossed();
        long delayMillis = listener.nextDelayMillis();
        Bandwidth bandwidth = listener.bandwidthTowardsClients();
        if (delayMillis == 0 && bandwidth == null && waiting.isEmpty()) {
            ctx.write(msg, promise);
            return;
        }
        if (writes == null) {
            writes = new PendingWriteQueue(ctx);
        }
        long now = System.nanoTime();
        long delayNanos = TimeUnit.MILLISECONDS.toNanos(delayMillis);
        if (bandwidth != null && msg instanceof ByteBuf bytes && bytes.isReadable()) {
            carryInPieces(ctx, bytes, bandwidth, now, delayNanos);
        } else {
            writes.add(msg, ctx.newPromise()); // its failure (the client left first) is the close's news, not the writer's
            waitItsTurn(ctx, now + delayNanos, Math.max(now, linkFreeNanos), null);
        }
        promise.trySuccess(); // last: a listener may close at once (closeOnFlush), and that close goes behind this write
    }

    /**
     * The link carries {@code bytes} after what it was given before, at the bandwidth's rate: each piece goes once
     * carried, and arrives {@code delayNanos} (its latency) after that.
     */
    private void carryInPieces(ChannelHandlerContext ctx, ByteBuf bytes, Bandwidth bandwidth, long now, long delayNanos) {
        long start = Math.max(now, linkFreeNanos);
        int total = bytes.readableBytes();
        int pieceBytes = bandwidth.pieceBytes(total);
        for (int carried = 0; carried < total; ) {
            int length = Math.min(pieceBytes, total - carried);
            writes.add(bytes.retainedSlice(bytes.readerIndex() + carried, length), ctx.newPromise());
            carried += length;
            long carriedNanos = start + bandwidth.nanosFor(carried);
            waitItsTurn(ctx, carriedNanos + delayNanos, carriedNanos, null);
        }
        linkFreeNanos = start + bandwidth.nanosFor(total);
        bytes.release(); // its pieces hold it now
    }

    @Override
    public void flush(ChannelHandlerContext ctx) {
        ctx.flush(); // what passed at once goes now; what waits is flushed as it goes
    }

    @Override
    public void close(ChannelHandlerContext ctx, ChannelPromise promise) {
        if (requests != null) {
            requests.drop(); // the member's end closes: what the link had not carried to it never arrives
        }
        if (listener.closed()) { // the proxy is closing: nothing more reaches the client
            dropWhatWaits(ctx);
            ctx.close(promise);
            return;
        }
        if (forgotten != null) { // its end is not sent: the client learns of it when it sends, or never
            promise.trySuccess();
            return;
        }
        if (Integer.valueOf(0).equals(ctx.channel().config().getOption(ChannelOption.SO_LINGER))) {
            throwAwayWhatIsNotCarried(); // a reset: a sender's reset throws away what it had not sent yet
        }
        long delayMillis = listener.nextDelayMillis();
        if (delayMillis == 0 && waiting.isEmpty()) {
            ctx.close(promise);
            return;
        }
        long now = System.nanoTime();
        waitItsTurn(ctx, now + TimeUnit.MILLISECONDS.toNanos(delayMillis), now, promise);
        if (!closedAtTheMembersEnd) {
            closedAtTheMembersEnd = true;
            // later, as Netty tells of a close: the code that closed may not expect its own channelInactive inside close()
            ctx.executor().execute(ctx::fireChannelInactive);
        }
    }

    /**
     * The writes a narrow link has not carried yet are lost; their bytes, last in {@link #writes}, are released with the
     * connection, since the close goes before them. What is on its way already still arrives.
     */
    private void throwAwayWhatIsNotCarried() {
        long now = System.nanoTime();
        while (!waiting.isEmpty() && waiting.peekLast().close == null && !waiting.peekLast().carriedBy(now)) {
            waiting.pollLast().tell(false);
        }
        lastDueNanos = waiting.isEmpty() ? Long.MIN_VALUE : waiting.peekLast().dueNanos;
        linkFreeNanos = now;
    }

    /** Whether the client closed its end (its FIN came, held behind what it sent): drivers never half-close, so no reply reaches it. */
    boolean clientClosed() {
        return requests != null && requests.clientEnded();
    }

    /** Whether a write given now may arrive later: the link is slow or narrow, or still has writes on their way. */
    boolean deliversLater() {
        return listener.bandwidthTowardsClients() != null || listener.delaysWhatGoesToClients() || !waiting.isEmpty();
    }

    /**
     * Tells {@code delivery} when the last write given the link arrives at the client, or is lost first: a reset throws
     * away what the link had not carried, and what has not arrived when the client leaves never reaches it (its socket
     * is closed: a reply later than the client's socket timeout is a network error to it). At once if it went at once.
     */
    void whenArrived(Delivery delivery) {
        WaitingOnTheLink last = waiting.peekLast();
        if (last == null || last.close != null) {
            delivery.arrived();
            return;
        }
        last.add(delivery);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (closedAtTheMembersEnd) {
            ReferenceCountUtil.release(msg); // sent into a member's end that is already closed
            // or into a middlebox that forgot it, which resets it now; or, that middlebox gone (its idle timeout ended,
            // restored, reset), on to the member's host, whose closed end answers with a reset too
            if (forgotten == IdleTimeout.Then.RESET || forgotten != null && listener.idleTimeout() == null) {
                ctx.channel().config().setOption(ChannelOption.SO_LINGER, 0);
                ctx.close();
            }
            return;
        }
        crossed();
        Bandwidth bandwidth = listener.bandwidthTowardsMember();
        long delayMillis = listener.nextRequestDelayMillis();
        if (bandwidth == null && delayMillis == 0 && (requests == null || requests.isEmpty()) || !(msg instanceof ByteBuf bytes)) {
            ctx.fireChannelRead(msg);
            return;
        }
        if (requests == null) {
            requests = new RequestsOnTheLink(() -> requestWindowChanged(ctx));
            // the client's FIN then leaves the channel open (a ChannelInputShutdownEvent), so it can come behind what it sent
            ctx.channel().config().setOption(ChannelOption.ALLOW_HALF_CLOSURE, true);
        }
        requests.carry(ctx, bytes, bandwidth, TimeUnit.MILLISECONDS.toNanos(delayMillis));
    }

    @Override
    public void read(ChannelHandlerContext ctx) {
        if (holdsRequests()) { // the client waits, as a sender does on a full window; asked again once there is room
            readWanted = true;
            return;
        }
        ctx.read();
    }

    private void requestWindowChanged(ChannelHandlerContext ctx) {
        ClientConnection connection = ctx.pipeline().get(ClientConnection.class);
        if (connection != null) {
            connection.linkWindowChanged(); // it reads the client, unless paused for reasons of its own, or stops
        }
        if (readWanted && !holdsRequests()) {
            readWanted = false;
            ctx.read();
        }
    }

    /** Something crossed the link: while an idle timeout is in force, its clock starts again. */
    private void crossed() {
        if (listener.idleTimeout() != null) {
            lastCrossedNanos = System.nanoTime();
        }
    }

    /**
     * The member's idle timeout began (or a new one replaced it), or this connection opened: its clock starts now, as
     * a middlebox put on the link (or replaced) knows nothing of the time before it. Called on the event loop.
     */
    void idleTimeoutBegan() {
        if (ctx != null) { // else not in a pipeline yet: channelActive starts it
            lastCrossedNanos = System.nanoTime();
            checkIdleIn(ctx, listener.idleTimeout());
        }
    }

    private void checkIdleIn(ChannelHandlerContext ctx, IdleTimeout idle) {
        if (idleCheck != null) {
            idleCheck.cancel(false);
            idleCheck = null;
        }
        if (idle != null && !closedAtTheMembersEnd) {
            long in = lastCrossedNanos + TimeUnit.MILLISECONDS.toNanos(idle.afterMillis()) - System.nanoTime();
            idleCheck = ctx.executor().schedule(() -> checkIdle(ctx), Math.max(0, in), TimeUnit.NANOSECONDS);
        }
    }

    private void checkIdle(ChannelHandlerContext ctx) {
        idleCheck = null;
        IdleTimeout idle = listener.idleTimeout();
        if (idle == null || closedAtTheMembersEnd) { // ended: the link is as it was
            return;
        }
        long now = System.nanoTime();
        if (!waiting.isEmpty() || requests != null && !requests.isEmpty()) {
            lastCrossedNanos = now; // still crossing: a slow link is busy, not idle
        }
        if (now - lastCrossedNanos < TimeUnit.MILLISECONDS.toNanos(idle.afterMillis())) {
            checkIdleIn(ctx, idle);
            return;
        }
        forgotten = idle.then();
        closedAtTheMembersEnd = true;
        ClientConnection connection = ctx.pipeline().get(ClientConnection.class);
        if (connection != null) {
            connection.forgottenByTheLink(); // the commands it ends are the idle timeout's
        }
        ctx.fireChannelInactive();
    }

    /**
     * The client's end (FIN), once the link has held its requests (half-closure is on from then): the proxy closes its
     * side once the link has carried the last of them, at the rate, as the FIN arrives behind them. The decoders hear of
     * the end from the close.
     */
    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
        if (event instanceof ChannelInputShutdownEvent) {
            requests.thenEnd(ctx::close);
        } else if (event != ChannelInputShutdownReadComplete.INSTANCE) {
            ctx.fireUserEventTriggered(event);
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        dropWhatWaits(ctx); // the client left (or reset): what was on its way either way is lost
        if (!closedAtTheMembersEnd) { // else the pipeline hears of the end from the close that was sent
            closedAtTheMembersEnd = true;
            ctx.fireChannelInactive();
        }
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        dropWhatWaits(ctx);
    }

    private void waitItsTurn(ChannelHandlerContext ctx, long arrivalNanos, long carriedNanos, ChannelPromise close) {
        // never before the one sent before it: a jitter reorders no bytes, as TCP does not
        lastDueNanos = Math.max(arrivalNanos, lastDueNanos);
        waiting.add(new WaitingOnTheLink(lastDueNanos, carriedNanos, close));
        if (nextSend == null) {
            scheduleNextSend(ctx);
        }
    }

    private void scheduleNextSend(ChannelHandlerContext ctx) {
        long in = waiting.peek().dueNanos - System.nanoTime();
        nextSend = ctx.executor().schedule(() -> sendWhatIsDue(ctx), Math.max(0, in), TimeUnit.NANOSECONDS);
    }

    private void sendWhatIsDue(ChannelHandlerContext ctx) {
        nextSend = null;
        long now = System.nanoTime();
        while (!waiting.isEmpty() && waiting.peek().dueNanos - now <= 0) {
            WaitingOnTheLink next = waiting.poll();
            if (next.close == null) {
                next.tell(true); // before its bytes go: the client cannot have them before the proxy counted them
                writes.removeAndWrite();
            } else {
                ctx.flush();
                ctx.close(next.close); // its channelInactive empties what waits after it
            }
        }
        ctx.flush();
        if (!waiting.isEmpty() && nextSend == null) {
            scheduleNextSend(ctx);
        }
    }

    private void dropWhatWaits(ChannelHandlerContext ctx) {
        if (requests != null) {
            requests.drop();
        }
        if (idleCheck != null) {
            idleCheck.cancel(false);
            idleCheck = null;
        }
        if (nextSend != null) {
            nextSend.cancel(false);
            nextSend = null;
        }
        List<WaitingOnTheLink> left = new ArrayList<>(waiting);
        waiting.clear(); // first: closing the ones left may come back here
        if (writes != null) {
            writes.removeAndFailAll(new ClosedChannelException());
        }
        for (WaitingOnTheLink next : left) {
            if (next.close != null) {
                ctx.close(next.close); // closed already: completes its promise
            } else {
                next.tell(false); // what had not arrived when the client left (or reset) never reaches it
            }
        }
    }
}
