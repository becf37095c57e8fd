package io.blackpipe.pipe;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.util.concurrent.TimeUnit;

/**
 * A listener's handler for an accept that fails as the process is out of file descriptors: said in the proxy's line a
 * second, and accepting paused a second as Netty's own acceptor pauses it (no busy loop), instead of a 23-line stack at
 * each burst. Every listener of the process needs it, the admin API's too: a scrape of /metrics while the members'
 * clients held every descriptor reached the tail of its pipeline with the stack.
 */
@ChannelHandler.Sharable // a member's listener binds again with the same bootstrap once its member is back
public final class AcceptFailures extends ChannelInboundHandlerAdapter {
    private final ProxyLog log;

    public AcceptFailures(ProxyLog log) {
        this.log = log;
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (!ProxyLog.outOfFileDescriptors(cause)) {
            ctx.fireExceptionCaught(cause);
            return;
        }
        log.acceptFailed(ctx.channel().localAddress());
        ctx.channel().config().setAutoRead(false);
        ctx.channel().eventLoop().schedule(() -> ctx.channel().config().setAutoRead(true), 1, TimeUnit.SECONDS);
    }
}
