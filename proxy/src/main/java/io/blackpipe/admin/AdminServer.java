package io.blackpipe.admin;

import io.blackpipe.pipe.AcceptFailures;
import io.blackpipe.pipe.ListeningSockets;
import io.blackpipe.pipe.ProxyLog;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.topology.HostNames;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.DefaultEventExecutorGroup;
import io.netty.util.concurrent.EventExecutorGroup;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.net.InetSocketAddress;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.Phaser;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The HTTP side of a running proxy: GET /metrics (Prometheus) and /health, always open, and the
 * control API under /api/v1 (see {@link AdminApi}), behind a bearer token when one is set.
 */
public final class AdminServer implements AutoCloseable {
    private static final int MAX_BODY_BYTES = 1024 * 1024;
    private static final ProxyLog LOG = new ProxyLog();
    /** Requests answered at once, each connection's in turn: a few, for a scraper, a health check and a control command or two. */
    private static final int WORKERS = 4;
    /** How long a request, once begun, may take to arrive whole: a megabyte body over a slow link takes well under it. */
    static final long REQUEST_TIMEOUT_MILLIS = 30_000;

    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("blackpipe-admin", true), NioIoHandler.newFactory());
    /**
     * Where requests are answered, off the connections' event loop: a failover waits for the node's aborts and the
     * members' answers, a restart for its step-down, and /health, /metrics and a followed history went on meanwhile.
     */
    private final EventExecutorGroup work = new DefaultEventExecutorGroup(WORKERS, new DefaultThreadFactory("blackpipe-admin-work", true));
    /** Open client connections, closed with the server: a history follower would otherwise never hear it stopped. */
    private final ChannelGroup connections = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
    /**
     * A party for each connection whose pipeline is not torn down yet, and the server's own. A closed connection's
     * teardown passes from its I/O loop to the Router's work executor and back, so both must outlive it: shut down at
     * its close, the I/O loop refused the last step, and Netty logged a RejectedExecutionException with its trace.
     */
    private final Phaser pipelinesUp = new Phaser(1);
    private final AtomicBoolean closed = new AtomicBoolean();
    private final ProxyServer proxy;
    private final AdminApi api;
    private final AdminToken token;
    private final AtomicLong followersCutOff = new AtomicLong();
    private final Channel channel;

    private AdminServer(ProxyServer proxy, String host, int port, String token, long requestTimeoutMillis) throws InterruptedException {
        this.proxy = proxy;
        this.api = new AdminApi(proxy);
        try {
            this.token = new AdminToken(token);
            this.channel = bind(host, port, requestTimeoutMillis);
        } catch (Exception e) { // a port taken (Netty throws its BindException unchecked), a token refused
            group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS); // else its thread stayed, one per failed start
            work.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            throw e;
        }
    }

    private Channel bind(String host, int port, long requestTimeoutMillis) throws InterruptedException {
        return new ServerBootstrap()
                .group(group)
                .channelFactory(ListeningSockets.on(host))
                .handler(new AcceptFailures(LOG))
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        connections.add(ch);
                        pipelinesUp.register();
                        ch.pipeline().addFirst(new TornDownLast(pipelinesUp));
                        PartialRequestTimeout timeout = new PartialRequestTimeout(requestTimeoutMillis);
                        ch.pipeline().addLast(timeout.bytesIn(), new HttpServerCodec(), timeout.requestsOut(), new ControlApiGate(AdminServer.this.token, ownNames(host)),
                                new BoundedAggregator());
                        ch.pipeline().addLast(work, new Router());
                    }
                })
                .bind(host, port).sync().channel();
    }

    public static AdminServer start(ProxyServer proxy, String host, int port) {
        return start(proxy, host, port, null);
    }

    /** The names the API is called by whatever they are: its bind address and the host the proxy advertises (see ControlApiGate). */
    private Set<String> ownNames(String host) {
        Set<String> names = new HashSet<>(Set.of(host));
        proxy.members().forEach(member -> names.add(member.advertised().host()));
        return names;
    }

    /** @param token when not null, every /api/v1 request needs "Authorization: Bearer token" */
    public static AdminServer start(ProxyServer proxy, String host, int port, String token) {
        return start(proxy, host, port, token, REQUEST_TIMEOUT_MILLIS);
    }

    /** @param requestTimeoutMillis how long a request, once begun, may take to arrive whole (see {@link PartialRequestTimeout}) */
    static AdminServer start(ProxyServer proxy, String host, int port, String token, long requestTimeoutMillis) {
        try {
            return new AdminServer(proxy, host, port, token, requestTimeoutMillis);
        } catch (Exception e) { // the constructor shut its event loop down: no thread outlives a failed start
            String why = e instanceof java.nio.channels.UnresolvedAddressException // its message is null
                    ? "'" + host + "' is neither an IP address nor a host name that resolves" : e.getMessage();
            throw new IllegalStateException("cannot start the admin server on " + HostNames.withPort(host, port) + ": " + why, e);
        }
    }

    /** How many history followers were cut off for falling behind (for tests). */
    long followersCutOff() {
        return followersCutOff.get();
    }

    /** The client connections open now (for tests). */
    int openConnections() {
        return connections.size();
    }

    /** The listening channel, for a test that fires on its pipeline what its accepts may meet. */
    Channel listener() {
        return channel;
    }

    public int port() {
        return ((InetSocketAddress) channel.localAddress()).getPort();
    }

    private void awaitPipelinesTornDown() {
        try {
            pipelinesUp.awaitAdvanceInterruptibly(pipelinesUp.arrive(), 2, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            // a teardown still under way after 2 s: the executors go all the same
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** First in a connection's pipeline, so removed last as it is torn down (from the tail): its connection's party arrives. */
    private static final class TornDownLast extends ChannelInboundHandlerAdapter {
        private final Phaser pipelinesUp;

        TornDownLast(Phaser pipelinesUp) {
            this.pipelinesUp = pipelinesUp;
        }

        @Override
        public void handlerRemoved(ChannelHandlerContext ctx) {
            pipelinesUp.arriveAndDeregister();
        }
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return; // closed: its executors are gone
        }
        channel.close().syncUninterruptibly();
        connections.close().awaitUninterruptibly(2, TimeUnit.SECONDS);
        awaitPipelinesTornDown();
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        work.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    }

    private final class Router extends SimpleChannelInboundHandler<FullHttpRequest> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
            if (request.decoderResult().isFailure()) { // a request HTTP could not read: nothing of it is acted on
                respond(ctx, false, undecodable(request.decoderResult().cause()));
                return;
            }
            AdminResponse answer;
            try {
                answer = route(ctx, request);
            } catch (IllegalArgumentException e) { // a bad percent-escape in the path or query
                answer = AdminResponse.error(HttpResponseStatus.BAD_REQUEST, "malformed request URI " + request.uri() + ": " + e.getMessage());
            } catch (RuntimeException | StackOverflowError e) {
                // it closed the connection unanswered: a control command read "cannot reach", and the log said nothing
                LOG.warn("admin API: " + request.method() + " " + request.uri() + " failed: " + e);
                answer = AdminResponse.error(HttpResponseStatus.INTERNAL_SERVER_ERROR, "the proxy failed on this request (" + e
                        + "); its log names it too");
            }
            if (answer != null) {
                respond(ctx, HttpUtil.isKeepAlive(request), answer);
            }
        }

        /** The answer, or null when the request became a stream (history?follow=true). */
        private AdminResponse route(ChannelHandlerContext ctx, FullHttpRequest request) {
            // a request target in absolute form (http://host:port/path), which a server must take (RFC 9112 3.2.2): its path
            String target = request.uri().matches("(?i)https?://.*") ? request.uri().replaceFirst("(?i)^https?://[^/?#]*", "") : request.uri();
            QueryStringDecoder uri = new QueryStringDecoder(target.isEmpty() || target.startsWith("?") ? "/" + target : target);
            // The API splits the raw path and decodes each segment: decoded first, "rules/a%2Fb" would read as rules/a/b.
            String path = uri.rawPath();
            if (request.protocolVersion().equals(HttpVersion.HTTP_1_1) && !request.headers().contains(HttpHeaderNames.HOST)) {
                return AdminResponse.error(HttpResponseStatus.BAD_REQUEST, "an HTTP/1.1 request needs a Host header (RFC 9112)");
            }
            if (path.equals("/metrics") || path.equals("/health")) {
                // HEAD as GET, its body left out as it is sent: uptime checkers ask /health so
                return !HttpMethod.GET.equals(request.method()) && !HttpMethod.HEAD.equals(request.method())
                        ? AdminResponse.text(HttpResponseStatus.METHOD_NOT_ALLOWED, "text/plain",
                                request.method() + " is not allowed on " + path + " (allowed: GET, HEAD)\n").withHeader("Allow", "GET, HEAD")
                        : path.equals("/metrics")
                        ? AdminResponse.text(HttpResponseStatus.OK, "text/plain; version=0.0.4; charset=utf-8", proxy.registry().scrape())
                        : AdminResponse.ok(Health.document(proxy));
            } else if (path.startsWith("/api/") && !path.startsWith("/api/v1/")) { // an API client reads JSON errors
                return AdminResponse.error(HttpResponseStatus.NOT_FOUND, "no resource at " + path + " (the API's resources are under /api/v1/)");
            } else if (!path.startsWith("/api/v1/")) {
                return AdminResponse.text(HttpResponseStatus.NOT_FOUND, "text/plain", "no resource at " + path + "\n");
            } // the token was checked on the request's head (ControlApiGate)
            String body;
            try {
                body = StandardCharsets.UTF_8.newDecoder().decode(request.content().nioBuffer()).toString();
            } catch (CharacterCodingException e) { // replaced, a bad byte would make a rule that never matches
                return AdminResponse.error(HttpResponseStatus.BAD_REQUEST, "body: not UTF-8 (" + e.getMessage() + ")");
            }
            body = body.startsWith("\uFEFF") ? body.substring(1) : body; // a byte order mark, as PowerShell 5 writes: JSON may ignore it
            String tooDeep = NestingDepth.whyTooDeep(body);
            if (tooDeep != null) { // the parsers, the matcher and the listing recurse: deep enough, a request went unanswered
                return AdminResponse.error(HttpResponseStatus.BAD_REQUEST, "body: " + tooDeep);
            }
            return api.handle(request.method(), path, uri.parameters(), body, () -> HistoryStream.start(ctx, proxy.history(), followersCutOff::incrementAndGet),
                    addressOf(ctx));
        }

        /** The client's address as the log names it (host:port, [v6]:port). */
        private static String addressOf(ChannelHandlerContext ctx) {
            return HostNames.ofPeer(ctx.channel().remoteAddress());
        }

        /** What a request HTTP could not read earns (the connection then closes: what follows it cannot be framed). */
        private AdminResponse undecodable(Throwable cause) {
            HttpResponseStatus status = cause instanceof TooLongHttpHeaderException ? HttpResponseStatus.REQUEST_HEADER_FIELDS_TOO_LARGE
                    : cause instanceof TooLongHttpLineException ? HttpResponseStatus.REQUEST_URI_TOO_LONG : HttpResponseStatus.BAD_REQUEST;
            return AdminResponse.error(status, "malformed HTTP request, nothing of it was done: " + cause.getMessage());
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }

    private static void respond(ChannelHandlerContext ctx, boolean keepAlive, AdminResponse answer) {
        var written = ctx.writeAndFlush(httpResponse(answer, keepAlive));
        if (!keepAlive) {
            written.addListener(ChannelFutureListener.CLOSE);
        }
    }

    private static FullHttpResponse httpResponse(AdminResponse answer, boolean keepAlive) {
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, answer.status(),
                Unpooled.copiedBuffer(answer.body(), StandardCharsets.UTF_8));
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, answer.contentType());
        answer.headers().forEach(response.headers()::set);
        HttpUtil.setContentLength(response, response.content().readableBytes());
        HttpUtil.setKeepAlive(response, keepAlive);
        return response;
    }

    private static AdminResponse tooLarge() {
        return AdminResponse.error(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, "body: larger than the limit of " + MAX_BODY_BYTES + " bytes");
    }

    /** Bodies over the limit are refused whole with a 413 that says so (nothing is half-read). */
    private static final class BoundedAggregator extends HttpObjectAggregator {
        BoundedAggregator() {
            super(MAX_BODY_BYTES);
        }

        @Override
        protected void handleOversizedMessage(ChannelHandlerContext ctx, HttpMessage oversized) {
            // Closing now, while the client is still sending, would reset the connection and the client
            // could lose this answer. A keep-alive request stays open: the aggregator discards the rest
            // of its body, and the client reads the 400 once it has sent it.
            boolean keepOpen = oversized instanceof io.netty.handler.codec.http.HttpRequest
                    && !(oversized instanceof io.netty.handler.codec.http.FullHttpMessage) && HttpUtil.isKeepAlive(oversized);
            respond(ctx, keepOpen, tooLarge());
        }

        /**
         * A client that asks before sending (Expect: 100-continue, as curl does for a large body) is refused with the
         * same JSON, and the connection closed: Netty's bare 413 said nothing, and kept the connection waiting for a
         * body such a client never sends.
         */
        @Override
        protected Object newContinueResponse(HttpMessage start, int maxContentLength, ChannelPipeline pipeline) {
            Object standard = super.newContinueResponse(start, maxContentLength, pipeline);
            if (standard instanceof HttpResponse refusal && refusal.status().equals(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE)) {
                ReferenceCountUtil.release(standard);
                return httpResponse(tooLarge(), false);
            }
            return standard;
        }

        @Override
        protected boolean closeAfterContinueResponse(Object response) {
            return response instanceof HttpResponse answer && !HttpUtil.isKeepAlive(answer) || super.closeAfterContinueResponse(response);
        }
    }
}
