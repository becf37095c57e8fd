package io.blackpipe.admin;

import io.blackpipe.observe.History;
import io.blackpipe.observe.HistoryEntry;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import java.nio.charset.StandardCharsets;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * GET /api/v1/history?follow=true: the operation history as a chunked NDJSON stream, the
 * entries so far and then each new one, until the client hangs up.
 */
final class HistoryStream {
    /**
     * How far a follower may fall behind (written for it, not yet taken by its socket) before its stream ends: one
     * that stops reading (a paused `history --follow | less`) must not grow the proxy's memory while traffic runs.
     */
    static final long MAX_BEHIND_BYTES = 8L << 20;
    /** How long a follower cut off has to read its last line before its connection closes, read or not. */
    private static final long LAST_LINE_GRACE_SECONDS = 10;

    private HistoryStream() {
    }

    /** @param cutOff told when the follower falls too far behind and its stream ends */
    static void start(ChannelHandlerContext ctx, History history, Runnable cutOff) {
        HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
        head.headers().set(HttpHeaderNames.CONTENT_TYPE, "application/x-ndjson");
        head.headers().set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
        ctx.writeAndFlush(head);
        Channel channel = ctx.channel();
        AutoCloseable subscription = history.follow(new Forwarder(channel, cutOff));
        channel.closeFuture().addListener(f -> subscription.close());
    }

    /**
     * Hands entries from the recording threads to the stream's own event loop: they queue here and
     * one task writes all that are queued, so a busy proxy wakes that loop once per batch instead of
     * once per command, and the JSON is built there, not on the proxy's event loops.
     */
    private static final class Forwarder implements Consumer<HistoryEntry> {
        private final Channel channel;
        private final Queue<HistoryEntry> pending = new ConcurrentLinkedQueue<>();
        private final AtomicBoolean writeScheduled = new AtomicBoolean();
        /** Cut off (see {@link #fellBehind}): nothing more is queued for it. */
        private volatile boolean cutOff;

        private final Runnable onCutOff;

        Forwarder(Channel channel, Runnable onCutOff) {
            this.channel = channel;
            this.onCutOff = onCutOff;
        }

        @Override
        public void accept(HistoryEntry entry) {
            if (cutOff || !channel.isActive()) {
                return;
            }
            pending.add(entry);
            if (writeScheduled.compareAndSet(false, true)) {
                channel.eventLoop().execute(this::writePending);
            }
        }

        private void writePending() {
            writeScheduled.set(false); // first: an entry queued from now on schedules the next write
            if (cutOff) { // entries queued as it was cut off
                pending.clear();
                return;
            }
            HistoryEntry entry;
            boolean wrote = false;
            while ((entry = pending.poll()) != null) {
                if (!channel.isActive()) {
                    continue;
                }
                if (!channel.isWritable()) {
                    channel.flush(); // what the socket takes goes: only what it refuses counts as behind, not a burst
                    if (channel.bytesBeforeWritable() > MAX_BEHIND_BYTES) {
                        fellBehind();
                        return;
                    }
                }
                channel.write(new DefaultHttpContent(Unpooled.copiedBuffer(entry.toJson() + "\n", StandardCharsets.UTF_8)));
                wrote = true;
            }
            if (wrote) {
                channel.flush();
            }
        }

        /** The follower stopped reading: its stream ends with a line that says so, and nothing more is queued for it. */
        private void fellBehind() {
            cutOff = true;
            onCutOff.run();
            pending.clear();
            String last = "{\"error\": \"this follower fell more than " + (MAX_BEHIND_BYTES >> 20) + " MiB behind, and its stream ends;"
                    + " GET /api/v1/history?since=INSTANT catches up\"}\n";
            channel.write(new DefaultHttpContent(Unpooled.copiedBuffer(last, StandardCharsets.UTF_8)));
            channel.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT).addListener(ChannelFutureListener.CLOSE);
            // a follower that never reads again would never take that line: its connection, and what waits for it, go anyway
            channel.eventLoop().schedule(() -> channel.close(), LAST_LINE_GRACE_SECONDS, TimeUnit.SECONDS);
        }
    }
}
