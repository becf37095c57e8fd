package io.blackpipe.admin;

import io.blackpipe.topology.HostNames;
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
import io.netty.util.NetUtil;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Guards the control API (/api/v1) on a request's head, before its body is read; /metrics and /health stay open.
 * <ul>
 * <li>The token: a client without it is answered 401 and the connection closed at once, so it cannot make the server
 * hold a megabyte body for it.</li>
 * <li>Web pages: a browser lets any page it shows send a form or a fetch to http://127.0.0.1:9090 (it only hides the
 * answer). Such a page could add faults or fail a staging primary over, with no token set. A browser says where such a
 * request comes from (Origin; Sec-Fetch-Site, which is "none" for an address the user typed, and for a redirect the
 * user's own navigation followed: a GET, which changes nothing and whose answer only the user sees), and no client of
 * this API (the CLI, RemoteBlackPipe, curl) sends either: such a request is answered 403, as Toxiproxy refuses
 * browsers.</li>
 * <li>Rebound names: a page whose host name the attacker then points at this machine (DNS rebinding) is the API's own
 * origin, and Chromium marks its reads with neither header: it read the history and the rules. Such a request names
 * the attacker's host in its Host header, a name in a public domain. With no token set, a request whose Host is no IP
 * address, no localhost, no name of one label (a compose service, a hosts file's) and no name of a local domain
 * (.local, .internal, .lan, .home.arpa, .localdomain, .svc) nor one of the proxy's own is answered 403; a token guards it
 * otherwise.</li>
 * </ul>
 */
final class ControlApiGate extends ChannelInboundHandlerAdapter {
    /** Domains no one can register publicly: a rebinding attacker's page cannot be in one (".svc": Kubernetes' services). */
    private static final List<String> LOCAL_DOMAINS = List.of(".localhost", ".local", ".internal", ".lan", ".home.arpa", ".localdomain",
            ".svc");

    private final AdminToken token;
    /**
     * Names the API may be called by whatever they are: the admin server's bind address, and the host the proxy
     * advertises to apps (BlackPipeContainer advertises the Docker host as the test JVM reaches it, which its control()
     * calls too).
     */
    private final Set<String> ownNames;
    /** The request being refused: what follows of it is dropped. */
    private boolean refusing;

    ControlApiGate(AdminToken token, Set<String> ownNames) {
        this.token = token;
        this.ownNames = ownNames.stream().map(HostNames::canonical).collect(Collectors.toUnmodifiableSet());
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof HttpRequest request && request.decoderResult().isSuccess()) {
            String path = new QueryStringDecoder(request.uri()).rawPath();
            String authorization = request.headers().get(HttpHeaderNames.AUTHORIZATION);
            String fromAPage = path.startsWith("/api/v1/") ? fromAWebPage(request.headers()) : null;
            if (fromAPage == null && path.startsWith("/api/v1/") && !token.set()) {
                fromAPage = reboundName(request.headers().get(HttpHeaderNames.HOST));
            }
            refusing = fromAPage != null || path.startsWith("/api/v1/") && !token.permits(authorization);
            if (refusing) {
                ReferenceCountUtil.release(msg);
                if (fromAPage != null && fromAPage.startsWith("Host: ")) {
                    refuse(ctx, AdminResponse.error(HttpResponseStatus.FORBIDDEN, "blackpipe's control API, with no admin token set,"
                            + " answers only a request addressed to an IP address, localhost, a name of one label, a name in a local domain"
                            + " (.local, .internal, .svc, ...) or the proxy's own (--admin-host, --advertise-host); this one came with "
                            + fromAPage + ": a web page whose name was pointed at this machine (DNS rebinding) could read the API."
                            + " Address it so, or start the proxy with --admin-token"));
                } else if (fromAPage != null) {
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

    /** "Host: name:port" when {@code host} could be a rebound name (see the class comment), else null. */
    String reboundName(String host) {
        if (host == null || host.isBlank()) {
            return null; // HTTP/1.0: no browser sends that
        }
        String name = host.strip();
        if (name.startsWith("[")) {
            return null; // an IPv6 literal
        }
        int colon = name.lastIndexOf(':');
        name = (colon < 0 ? name : name.substring(0, colon)).toLowerCase(Locale.ROOT);
        name = name.endsWith(".") ? name.substring(0, name.length() - 1) : name;
        boolean local = NetUtil.isValidIpV4Address(name) || name.equals("localhost") || name.indexOf('.') < 0
                || LOCAL_DOMAINS.stream().anyMatch(name::endsWith) || ownNames.contains(name);
        return local ? null : "Host: " + host.strip();
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
