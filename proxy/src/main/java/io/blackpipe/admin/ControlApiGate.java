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
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;

/**
 * Guards the control API (/api/v1) on a request's head, before its body is read; /metrics and /health stay open.
 * <ul>
 * <li>The token: a client without it is answered 401 and the connection closed at once, so it cannot make the server
 * hold a megabyte body for it.</li>
 * <li>Web pages: a browser lets any page it shows send a form or a fetch to http://127.0.0.1:9090 (it only hides the
 * answer), and a page whose name the attacker points at 127.0.0.1 (DNS rebinding) reads the answer too. Such a page
 * could add faults, fail a staging primary over or read the history's documents, with no token set. A browser says
 * where a request comes from (Origin; Sec-Fetch-Site, which is "none" only for an address the user typed), and no
 * client of this API (the CLI, RemoteBlackPipe, curl) sends either: such a request is answered 403, as Toxiproxy
 * refuses browsers.</li>
 * </ul>
 */
final class ControlApiGate extends ChannelInboundHandlerAdapter {
    private final AdminToken token;
    /** The request being refused: what follows of it is dropped. */
    private boolean refusing;

    ControlApiGate(AdminToken token) {
        this.token = token;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof HttpRequest request && request.decoderResult().isSuccess()) {
            String path = new QueryStringDecoder(request.uri()).rawPath();
            String authorization = request.headers().get(HttpHeaderNames.AUTHORIZATION);
            String fromAPage = path.startsWith("/api/v1/") ? fromAWebPage(request.headers()) : null;
            refusing = fromAPage != null || path.startsWith("/api/v1/") && !token.permits(authorization);
            if (refusing) {
                ReferenceCountUtil.release(msg);
                if (fromAPage != null) {
                    refuse(ctx, AdminResponse.error(HttpResponseStatus.FORBIDDEN, "blackpipe's control API takes no request a web page"
                            + " makes (this one came with " + fromAPage + "): a page open in a browser could change the proxy's faults"
                            + " or read its history. Use the CLI, RemoteBlackPipe or curl"));
                } else {
                    refuse(ctx, AdminResponse.error(HttpResponseStatus.UNAUTHORIZED, authorization != null
                            ? "the Authorization given is not this proxy's: it needs Authorization: Bearer <admin token>"
                            : "this resource needs Authorization: Bearer <admin token>"));
                }
                return;
            }
        }
        if (refusing && msg instanceof HttpContent) {
            ReferenceCountUtil.release(msg);
            return;
        }
        ctx.fireChannelRead(msg);
    }

    /** The header that shows a web page sent the request ("Origin: https://example.com"), or null. */
    static String fromAWebPage(HttpHeaders headers) {
        String site = headers.get("Sec-Fetch-Site");
        if (site != null && !site.equalsIgnoreCase("none")) {
            return "Sec-Fetch-Site: " + site;
        }
        String origin = headers.get(HttpHeaderNames.ORIGIN);
        return origin == null ? null : "Origin: " + origin;
    }

    private static void refuse(ChannelHandlerContext ctx, AdminResponse answer) {
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, answer.status(),
                Unpooled.copiedBuffer(answer.body(), StandardCharsets.UTF_8));
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, answer.contentType());
        if (answer.status().equals(HttpResponseStatus.UNAUTHORIZED)) {
            // WWW-Authenticate: HTTP requires it on a 401, and it tells a client which scheme to answer with
            response.headers().set(HttpHeaderNames.WWW_AUTHENTICATE, "Bearer realm=\"blackpipe\"");
        }
        response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        HttpUtil.setContentLength(response, response.content().readableBytes());
        ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
    }
}
