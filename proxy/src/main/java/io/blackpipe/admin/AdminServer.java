package io.blackpipe.admin;

import io.blackpipe.pipe.ProxyServer;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/** The HTTP side of a running proxy: Prometheus metrics and a health check. */
public final class AdminServer implements AutoCloseable {
    private static final int MAX_BODY_BYTES = 1024 * 1024;

    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final ProxyServer proxy;
    private final Channel channel;

    private AdminServer(ProxyServer proxy, String host, int port) throws InterruptedException {
        this.proxy = proxy;
        this.channel = new ServerBootstrap()
                .group(group)
                .channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(MAX_BODY_BYTES), new Router());
                    }
                })
                .bind(host, port).sync().channel();
    }

    public static AdminServer start(ProxyServer proxy, String host, int port) {
        try {
            return new AdminServer(proxy, host, port);
        } catch (Exception e) {
            throw new IllegalStateException("cannot start the admin server on " + host + ":" + port + ": " + e.getMessage(), e);
        }
    }

    public int port() {
        return ((InetSocketAddress) channel.localAddress()).getPort();
    }

    @Override
    public void close() {
        channel.close().syncUninterruptibly();
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    }

    private final class Router extends SimpleChannelInboundHandler<FullHttpRequest> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
            String path = new QueryStringDecoder(request.uri()).path();
            FullHttpResponse response;
            if (!HttpMethod.GET.equals(request.method())) {
                response = text(HttpResponseStatus.METHOD_NOT_ALLOWED, "text/plain", request.method() + " is not allowed on " + path + "\n");
            } else if (path.equals("/metrics")) {
                response = text(HttpResponseStatus.OK, "text/plain; version=0.0.4; charset=utf-8", proxy.registry().scrape());
            } else if (path.equals("/health")) {
                response = text(HttpResponseStatus.OK, "application/json", Health.json(proxy));
            } else {
                response = text(HttpResponseStatus.NOT_FOUND, "text/plain", "no resource at " + path + "\n");
            }
            boolean keepAlive = HttpUtil.isKeepAlive(request);
            HttpUtil.setKeepAlive(response, keepAlive);
            var written = ctx.writeAndFlush(response);
            if (!keepAlive) {
                written.addListener(ChannelFutureListener.CLOSE);
            }
        }

        private FullHttpResponse text(HttpResponseStatus status, String contentType, String body) {
            FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
                    Unpooled.copiedBuffer(body, StandardCharsets.UTF_8));
            response.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
            HttpUtil.setContentLength(response, response.content().readableBytes());
            return response;
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
