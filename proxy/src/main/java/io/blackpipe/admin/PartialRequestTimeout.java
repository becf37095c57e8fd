package io.blackpipe.admin;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.LastHttpContent;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Closes a connection whose request, begun, does not arrive whole in time (a client that stalls in its head or its
 * body would otherwise hold the connection and what was read of it for good). It is its own clock only while a
 * request is under way: an idle keep-alive connection, or one following the history, is left alone. The same
 * instance sits before the HTTP codec (bytes arrive: a request is under way) and after it (the request ended).
 */
final class PartialRequestTimeout {
    private final long millis;
    private ScheduledFuture<?> deadline;

    PartialRequestTimeout(long millis) {
        this.millis = millis;
    }

    /** Before the codec: bytes of a request. */
    ChannelInboundHandlerAdapter bytesIn() {
        return new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                if (deadline == null) {
                    deadline = ctx.executor().schedule(() -> {
                        ctx.close();
                    }, millis, TimeUnit.MILLISECONDS);
                }
                ctx.fireChannelRead(msg);
            }

            @Override
            public void channelInactive(ChannelHandlerContext ctx) {
                ended();
                ctx.fireChannelInactive();
            }
        };
    }

    /** After the codec: a request's last part. */
    ChannelInboundHandlerAdapter requestsOut() {
        return new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                if (msg instanceof LastHttpContent) {
                    ended();
                }
                ctx.fireChannelRead(msg);
            }
        };
    }

    private void ended() {
        if (deadline != null) {
            deadline.cancel(false);
            deadline = null;
        }
    }
}
