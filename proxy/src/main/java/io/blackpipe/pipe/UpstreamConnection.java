package io.blackpipe.pipe;

import io.blackpipe.wire.FrameDecoder;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

/** The upstream side of a pair: hands every reply to its client side, mirrors closes. */
final class UpstreamConnection extends ChannelInboundHandlerAdapter {
    private final ClientConnection client;

    UpstreamConnection(ClientConnection client) {
        this.client = client;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        client.onReply((ByteBuf) msg);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        client.onUpstreamReadComplete();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (ctx.channel().isWritable()) {
            client.onUpstreamWritable();
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        client.onUpstreamClosed();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
        if (event instanceof FrameDecoder.TruncatedFrame truncated) {
            client.context().log().info("upstream " + client.member().upstream() + " closed in the middle of a message ("
                    + truncated.describe() + ")");
        }
        ctx.fireUserEventTriggered(event);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        client.context().log().connectionFailed("upstream " + client.member().upstream(), cause);
        ctx.close();
        client.onUpstreamClosed();
    }
}
