package io.blackpipe.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.List;
import java.util.UUID;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Proves the leak check sees a real leak, and does not cry wolf over released buffers. */
class NettyLeakCheckTest {

    @Test
    void theRecordingDetectorGuardsByteBufs() {
        assertTrue(NettyLeakCheck.isActive(), "NettyLeakCheck must be installed before Netty buffers are first used");
    }

    @Test
    void recordsABufferThatWasNeverReleased() {
        assumeTrue(NettyLeakCheck.isActive(), "leak detection is off in this JVM");
        String marker = "deliberate-leak-" + UUID.randomUUID();
        System.out.println("[blackpipe] NettyLeakCheckTest leaks one buffer on purpose: the LEAK error logged with hint "
                + marker + " is expected");
        leakOneBuffer(marker);
        try {
            List<String> found = awaitReportsMentioning(marker, 10_000);
            assertEquals(1, found.size(), "exactly one leak report for the buffer we leaked: " + found);
            String report = found.get(0);
            assertTrue(report.startsWith("LEAK: ByteBuf.release() was not called"), report);
            // Paranoid records show where the buffer was created, which is what makes a report useful.
            assertTrue(report.contains("leakOneBuffer"), "report names the allocating method: " + report);
        } finally {
            // The leak was on purpose: keep it from failing this class in afterAll.
            NettyLeakCheck.forgetLeaks(report -> report.contains(marker));
        }
        assertTrue(NettyLeakCheck.recordedLeaks().stream().noneMatch(r -> r.contains(marker)));
    }

    @Test
    void releasedBuffersAreNotReported() {
        assumeTrue(NettyLeakCheck.isActive(), "leak detection is off in this JVM");
        String marker = "released-" + UUID.randomUUID();
        ByteBuf buf = PooledByteBufAllocator.DEFAULT.directBuffer(64);
        buf.touch(marker).writeLong(7);
        assertTrue(buf.release());
        List<String> reports = NettyLeakCheck.detectLeaks().stream()
                .filter(r -> r.contains(marker)).collect(Collectors.toList());
        assertEquals(List.of(), reports);
    }

    /** Allocates a tracked buffer, marks it and drops it without release(); kept separate so nothing keeps it reachable. */
    private static void leakOneBuffer(String marker) {
        ByteBuf buf = PooledByteBufAllocator.DEFAULT.directBuffer(64);
        buf.touch(marker).writeLong(42);
    }

    private static List<String> awaitReportsMentioning(String marker, long timeoutMillis) {
        long deadline = System.currentTimeMillis() + timeoutMillis;
        List<String> found;
        do {
            found = NettyLeakCheck.detectLeaks().stream().filter(r -> r.contains(marker)).collect(Collectors.toList());
        } while (found.isEmpty() && System.currentTimeMillis() < deadline);
        return found;
    }
}
