package io.blackpipe.admin;

import io.blackpipe.observe.History;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;

/**
 * GET /api/v1/history?follow=true: the operation history as a chunked NDJSON stream, the
 * entries so far and then each new one, until the client hangs up.
 */
final class HistoryStream {
    private HistoryStream() {
    }

    static void start(ChannelHandlerContext ctx, History history) {
        HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
        head.headers().set(HttpHeaderNames.CONTENT_TYPE, "application/x-ndjson");
        head.headers().set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
        ctx.writeAndFlush(head);
        Channel channel = ctx.channel();
        AutoCloseable subscription = history.follow(entry -> {
            if (channel.isActive()) { // the recording thread only queues the write on the channel's loop
                channel.writeAndFlush(new DefaultHttpContent(Unpooled.copiedBuffer(entry.toJson() + "\n", StandardCharsets.UTF_8)));
            }
        });
        channel.closeFuture().addListener(f -> subscription.close());
    }
}
