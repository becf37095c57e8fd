package io.blackpipe.pipe;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;

final class Channels {
    private Channels() {
    }

    /**
     * Closes after what is already queued has been written, so a last reply is not lost. A channel
     * not active yet (an upstream connection still being set up) is closed at once: that abandons the
     * attempt, which would otherwise complete later and stay open with nobody on the other side. One that is not open
     * has nothing to close, and one no socket could be made for (out of file descriptors) throws at a close.
     */
    static void closeOnFlush(Channel channel) {
        if (channel == null || !channel.isOpen()) {
            return;
        }
        if (channel.isActive()) {
            channel.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
        } else {
            channel.close();
        }
    }
}
