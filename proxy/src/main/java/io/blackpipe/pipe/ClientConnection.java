package io.blackpipe.pipe;

import io.blackpipe.fault.DeploymentFaults;
import io.blackpipe.observe.ConnectionMeters;
import io.blackpipe.observe.ConnectionObserver;
import io.blackpipe.topology.Member;
import io.blackpipe.wire.CommandFacts;
import io.blackpipe.wire.FrameDecoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import java.util.concurrent.RejectedExecutionException;
import org.bson.BsonDocument;

/**
 * The client side of one client<->upstream pair, and the channel plumbing of both: it opens its
 * own upstream connection (1:1, on the same event loop, so the pair needs no locks), reads
 * requests only once that connection exists, and hands messages to its {@link Exchange}.
 */
final class ClientConnection extends ChannelInboundHandlerAdapter {
    private final MemberListener listener;
    private final Member member;
    private final PipeContext context;
    private final ConnectionMeters meters;
    private final ConnectionObserver observer;
    private final Exchange exchange;
    /** The link to the client, which may still carry what was sent before this connection ended for the proxy. */
    private final ClientLink link;
    private Channel client;
    private long openedAtMillis; // for connections list
    private Channel upstream;
    private boolean closing;
    private boolean clientPausedForBackpressure;
    private boolean clientPausedByFault;
    private boolean upstreamPausedForBackpressure;
    private int upstreamPausesByFault; // not a flag: a held reply's and a batch insert's made again may overlap
    private final DelayedWork delayed = new DelayedWork();
    private final BehindTheBlackhole behindTheBlackhole = new BehindTheBlackhole();
    /** What the member's side does once the client left; made with the member's connection. */
    private AfterTheClientLeft afterTheClientLeft;
    /** The deployment fault (outage, connections reset) that is closing this connection, or null. */
    private String cutBy;

    ClientConnection(MemberListener listener, ClientLink link, PipeContext context) {
        this.listener = listener;
        this.link = link;
        this.member = listener.member();
        this.context = context;
        this.meters = context.meters().forMember(member.upstream().toString());
        this.observer = context.observer().forConnection(member.upstream().toString());
        this.exchange = new Exchange(this, context, member, observer);
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        client = ctx.channel();
        openedAtMillis = System.currentTimeMillis();
        listener.connections().accepted(client, this);
        meters.opened();
        ChannelFuture connect = UpstreamDial.connect(client, context, member, this);
        upstream = connect.channel();
        afterTheClientLeft = new AfterTheClientLeft(this, exchange, upstream);
        if (upstream.isOpen()) { // one no socket could be made for (out of file descriptors) is not, and its close threw at shutdown
            context.openConnections().add(upstream);
        }
        connect.addListener(f -> {
            if (f.isSuccess()) {
                updateClientAutoRead();
            } else if (client.isActive()) { // else the client left first and the attempt was abandoned with it
                context.log().upstreamUnreachable(member, client.remoteAddress(), f.cause(), meters::refused);
                client.close(); // the driver must see what a down member looks like: the connection just closes
            }
        });
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf frame = (ByteBuf) msg;
        meters.fromClient(frame.readableBytes());
        exchange.onRequest(frame);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        upstream.flush();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        upstreamPausedForBackpressure = !client.isWritable();
        updateUpstreamAutoRead();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        meters.closed();
        listener.connections().closed(client, this);
        delayed.runAllNow(); // held commands and replies end now, and see the connection closed
        exchange.onClosed();
        if (!afterTheClientLeft.holdsABlockedCommand()) { // else the member's connection stays until that command is sent
            afterTheClientLeft.closeUpstream();
        }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
        if (event instanceof FrameDecoder.TruncatedFrame truncated) {
            exchange.cutWhileItCame(truncated, ProxyLog.client(client.remoteAddress(), member));
        }
        ctx.fireUserEventTriggered(event);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        failed(cause);
    }

    /** Why the pair ends: logged, then both sides closed; nothing the client sent after the message it failed on is read. */
    private void failed(Throwable cause) {
        context.log().clientConnectionFailed(ProxyLog.client(client.remoteAddress(), member), cause);
        FrameDecoder.discardTheRestOf(client);
        client.close();
        afterTheClientLeft.closeUpstream();
    }

    /**
     * Runs work that reads messages outside the pipeline (a hold or a blackhole ending, a held reply going out): what it
     * throws (a malformed message that waited its turn) ends this connection as it would have in {@link #exceptionCaught},
     * instead of escaping to the event loop and leaving the client waiting with its reads paused.
     */
    void runOrClose(Runnable task) {
        try {
            task.run();
        } catch (RuntimeException e) {
            failed(e);
        }
    }

    // ---- used by Exchange and its helpers, on this connection's event loop ----

    ByteBufAllocator alloc() {
        return client.alloc();
    }

    MemberListener listener() {
        return listener;
    }

    /** See {@link MemberConnections#fallBehindTheBlackhole}; called on this connection's event loop. */
    void fellBehindTheBlackhole(String fault, BsonDocument interruptedWith) {
        behindTheBlackhole.fell(fault, interruptedWith);
    }

    /**
     * The member's blackhole ended, {@code downBy} what held the member down then (else null): what waited in it goes
     * on, or the connection ends as {@link BehindTheBlackhole#ended} says (the member's replies it held never left
     * the member). Called on this connection's event loop.
     */
    void blackholeEnded(String downBy) {
        if (listener.blackholed()) {
            return; // another began meanwhile: all of it waits for that one's end
        }
        BehindTheBlackhole.Fall end = behindTheBlackhole.ended(downBy);
        if (end == null) {
            exchange.blackholeEnded();
        } else {
            exchange.replies().dropTheMembers();
            endBy(end.fault(), end.interruptedWith());
        }
    }

    /** The member's topologyVersion moved on; called on this connection's event loop. */
    void topologyChanged() {
        exchange.answerAwaitingHello(null);
    }

    /** The member began to quiesce (a restart); called on this connection's event loop. */
    void quiesceBegan() {
        Quiesce quiesce = listener.quiesce();
        if (quiesce != null) {
            exchange.answerAwaitingHello(quiesce.helloError());
        }
    }

    /**
     * Ends this connection for a deployment fault (labelled {@code fault}): a reset (RST), or, where the member exits
     * ({@code interruptedWith}: a restart), what awaits its replies interrupted as mongod does at shutdown, then a FIN.
     */
    void endBy(String fault, BsonDocument interruptedWith) {
        if (!client.isActive()) {
            return;
        }
        cutBy(fault); // before the close: the commands it ends read it
        if (interruptedWith != null) {
            exchange.interruptAtShutdown(interruptedWith);
            closeClient(false);
        } else {
            client.config().setOption(ChannelOption.SO_LINGER, 0);
            client.close();
        }
    }

    /** Open for the proxy: a close waiting on a slow link to the client, or a middlebox that forgot it, has ended it already. */
    boolean isOpen() {
        return client.isActive() && !link.closedAtTheMembersEnd();
    }

    void sendUpstream(ByteBuf frame) {
        upstream.write(frame, upstream.voidPromise());
        if (!upstream.isWritable()) {
            clientPausedForBackpressure = true; // resumed when the upstream drains
            updateClientAutoRead();
        }
    }

    /** Whether the member's connection is open: once it closed, nothing sent on it is answered. */
    boolean upstreamOpen() {
        return upstream.isActive();
    }

    void sendToClient(ByteBuf frame) {
        client.write(frame, client.voidPromise());
        if (!client.isWritable()) {
            upstreamPausedForBackpressure = true; // resumed in channelWritabilityChanged
            updateUpstreamAutoRead();
        }
    }

    /** The link to the client: whether a reply sent now may reach it later (slow or narrow), or never (the client closed). */
    ClientLink link() {
        return link;
    }

    /** Sends {@code frame}, which the link delivers later, and tells {@code delivery} what became of it. */
    void sendToClient(ByteBuf frame, Delivery delivery) {
        sendToClient(frame);
        client.flush(); // through TLS now, so that the link holds the reply's last byte
        link.whenArrived(delivery);
    }

    void flushClient() {
        client.flush();
    }

    void flushUpstream() {
        upstream.flush();
    }

    void pauseClientReads(boolean paused) {
        clientPausedByFault = paused;
        updateClientAutoRead();
    }

    void pauseUpstreamReads(boolean paused) {
        upstreamPausesByFault += paused ? 1 : -1;
        updateUpstreamAutoRead();
    }

    /** Runs {@code task} on this connection's event loop, from any thread; false once the proxy closed (the loop stopped). */
    boolean runOnItsEventLoop(Runnable task) {
        try {
            client.eventLoop().execute(() -> runOrClose(task));
            return true;
        } catch (RejectedExecutionException e) {
            return false; // the proxy is closing, and this connection with it
        }
    }

    void schedule(long millis, Runnable task) {
        delayed.schedule(client.eventLoop(), millis, () -> runOrClose(task));
    }

    /** How many tasks {@link #schedule} has pending for this connection. */
    int scheduledTasks() {
        return delayed.size();
    }

    /** See {@link AfterTheClientLeft#sendWhenTheBlockEnds}. */
    void sendAfterClientLeft(ByteBuf frame, CommandFacts facts, long delayMillis) {
        afterTheClientLeft.sendWhenTheBlockEnds(frame, facts, delayMillis);
    }

    /** Closes the client side: a FIN as the server would, or an RST (SO_LINGER 0) as a network would. */
    void closeClient(boolean reset) {
        closing = true;
        if (reset && client.isActive()) {
            client.config().setOption(ChannelOption.SO_LINGER, 0);
            client.close();
        } else {
            Channels.closeOnFlush(client);
        }
        afterTheClientLeft.closeUpstream();
    }

    /** The link to the client filled with requests under a bandwidth, or has room again. */
    void linkWindowChanged() {
        updateClientAutoRead();
    }

    private void updateClientAutoRead() {
        if (client.isActive()) {
            client.config().setAutoRead(!clientPausedForBackpressure && !clientPausedByFault && !link.holdsRequests());
        }
    }

    private void updateUpstreamAutoRead() {
        if (upstream.isActive() && !afterTheClientLeft.seesThrough()) {
            upstream.config().setAutoRead(!upstreamPausedForBackpressure && upstreamPausesByFault == 0);
        }
    }

    // --- called by UpstreamConnection ---

    void onReply(ByteBuf frame) {
        meters.fromUpstream(frame.readableBytes());
        passOn(frame);
    }

    /** A reply read from the member, or made again in its place (see DuplicateKeyBatches): to the client, or to its run. */
    void passOn(ByteBuf frame) {
        if (afterTheClientLeft.seesThrough()) { // the client left: the reply ends its run, and goes nowhere
            afterTheClientLeft.onReply(frame);
            return;
        }
        try {
            exchange.onReply(frame);
        } catch (RuntimeException e) {
            if (frame.refCnt() > 0) {
                frame.release();
            }
            throw e;
        }
    }

    void onUpstreamReadComplete() {
        client.flush();
    }

    void onUpstreamWritable() {
        clientPausedForBackpressure = false;
        updateClientAutoRead();
    }

    void onUpstreamClosed() {
        afterTheClientLeft.upstreamClosed();
        Channels.closeOnFlush(client);
    }

    Member member() {
        return member;
    }

    /** The member's idle timeout began, or a new one replaced it: this connection's idle clock starts now. */
    void idleTimeoutBegan() {
        link.idleTimeoutBegan();
    }

    /** The member's idle timeout forgot this connection, which is ending for the proxy: what it cuts is labelled so. */
    void forgottenByTheLink() {
        cutBy(DeploymentFaults.IDLE_TIMEOUT);
        meters.idleTimedOut();
    }

    /** A deployment fault is about to reset this connection: what it cuts is labelled {@code fault}. */
    void cutBy(String fault) {
        cutBy = fault;
    }

    /** The deployment fault that closed this connection (see {@link #cutBy(String)}), or null. */
    String cutBy() {
        return cutBy;
    }

    /** Whether the member is in an outage: its connections are being reset. */
    boolean memberDown() {
        return listener.down();
    }

    /** Whether the proxy is closing this connection: what the client sent after that is never read, as by a server. */
    boolean closing() {
        return closing;
    }

    /** Whether the member is partitioned away: nothing may pass in either direction. */
    boolean blackholed() {
        return behindTheBlackhole.fell() || listener.blackholed();
    }

    PipeContext context() {
        return context;
    }

    OpenConnection describe() { // on its event loop
        return OpenConnection.of(observer.connectionId(), member, client.remoteAddress(), observer.appName(), openedAtMillis);
    }
}
