package io.blackpipe.pipe;

import io.blackpipe.wire.FrameDecoder;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

/** The upstream side of a pair: hands every reply to its client side, mirrors closes. */
final class UpstreamConnection extends ChannelInboundHandlerAdapter {
    private final ClientConnection client;
    /** The close follows an error already logged (a reset by the member, a TLS failure): no second line for it. */
    private boolean failed;

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
        if (!failed && closedByTheMember()) {
            client.context().log().memberClosed(client.member(), client.describe());
        }
        client.onUpstreamClosed();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
        if (event instanceof FrameDecoder.TruncatedFrame truncated) {
            client.context().log().info(who() + " closed in the middle of a message (" + truncated.describe() + ")");
        }
        ctx.fireUserEventTriggered(event);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        failed = true;
        client.context().log().connectionFailed(who(), cause);
        ctx.close();
        client.onUpstreamClosed();
    }

    /**
     * How the log names this connection: the member, and the client and connection id it serves, as {@code history} and
     * {@code connections list} show them. "closing upstream H:P: Connection reset" alone told no one whose command failed.
     */
    private String who() {
        OpenConnection connection = client.describe();
        return "upstream " + client.member().upstream() + " for client " + connection.client() + " (connection " + connection.id() + ")";
    }

    /**
     * Whether the member ended the connection (it exited, restarted, or dropped it), not the proxy: the client is still
     * there, the proxy is not closing its connection, no deployment fault cut it, and the listener is open. A driver
     * then sees its connection close with no word from the proxy, so the log says where the close came from.
     */
    private boolean closedByTheMember() {
        return client.isOpen() && !client.closing() && client.cutBy() == null && !client.listener().closed();
    }
}
