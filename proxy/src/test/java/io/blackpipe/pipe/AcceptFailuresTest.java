package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.LogCapture;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A listener out of file descriptors: its accept fails, which reached the tail of the pipeline as Netty's warning with a
 * 23-line stack (the admin API's listener did so in CI, while a test held the members' clients). The listeners' own
 * handler says it in the proxy's line, pauses accepting a second, and lets any other failure through.
 */
class AcceptFailuresTest {
    @Test
    void anAcceptOutOfFileDescriptorsIsSaidAndPausesAcceptingASecond() throws Exception {
        EmbeddedChannel listener = new EmbeddedChannel(new AcceptFailures(new ProxyLog()));
        try (LogCapture log = LogCapture.start()) {
            listener.pipeline().fireExceptionCaught(new IOException("Too many open files"));
            listener.checkException(); // throws what reached the tail
            assertFalse(listener.config().isAutoRead(), "accepting paused");
            assertTrue(log.awaitContaining(Duration.ofSeconds(5), "could not accept a connection")
                    .contains("the proxy's process is out of file descriptors (Too many open files; 1 connection refused so"));
            listener.advanceTimeBy(1, TimeUnit.SECONDS);
            listener.runScheduledPendingTasks();
            assertTrue(listener.config().isAutoRead(), "accepting again a second later");
        } finally {
            listener.finishAndReleaseAll();
        }
    }

    @Test
    void anyOtherFailureGoesOnDownThePipeline() {
        EmbeddedChannel listener = new EmbeddedChannel(new AcceptFailures(new ProxyLog()));
        try {
            IOException other = new IOException("Connection reset by peer");
            listener.pipeline().fireExceptionCaught(other);
            assertSame(other, assertThrows(IOException.class, listener::checkException));
            assertTrue(listener.config().isAutoRead());
        } finally {
            listener.finishAndReleaseAll();
        }
    }
}
