package io.blackpipe.admin;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;

/**
 * Checks the token on a request's head, before its body is read: a client without it is answered 401 and the
 * connection closed at once, so it cannot make the server hold a megabyte body for it. /metrics and /health stay open.
 */
final class TokenGate extends ChannelInboundHandlerAdapter {
    private final AdminToken token;
    /** The request being refused: what follows of it is dropped. */
    private boolean refusing;

    TokenGate(AdminToken token) {
        this.token = token;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof HttpRequest request && request.decoderResult().isSuccess()) {
            String path = new QueryStringDecoder(request.uri()).rawPath();
            String authorization = request.headers().get(HttpHeaderNames.AUTHORIZATION);
            refusing = path.startsWith("/api/v1/") && !token.permits(authorization);
            if (refusing) {
                ReferenceCountUtil.release(msg);
                refuse(ctx, authorization != null);
                return;
            }
        }
        if (refusing && msg instanceof HttpContent) {
            ReferenceCountUtil.release(msg);
            return;
        }
        ctx.fireChannelRead(msg);
    }

    /** @param given whether the request carried an Authorization: one given that is wrong is not told as none */
    private static void refuse(ChannelHandlerContext ctx, boolean given) {
        AdminResponse answer = AdminResponse.error(HttpResponseStatus.UNAUTHORIZED, given
                ? "the Authorization given is not this proxy's: it needs Authorization: Bearer <admin token>"
                : "this resource needs Authorization: Bearer <admin token>");
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, answer.status(),
                Unpooled.copiedBuffer(answer.body(), StandardCharsets.UTF_8));
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, answer.contentType());
        // WWW-Authenticate: HTTP requires it on a 401, and it tells a client which scheme to answer with
        response.headers().set(HttpHeaderNames.WWW_AUTHENTICATE, "Bearer realm=\"blackpipe\"");
        response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        HttpUtil.setContentLength(response, response.content().readableBytes());
        ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
    }
}
