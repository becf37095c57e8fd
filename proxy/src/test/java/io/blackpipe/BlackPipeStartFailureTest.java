package io.blackpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.sun.management.UnixOperatingSystemMXBean;
import io.blackpipe.testing.UpstreamLane;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** A start that fails takes back what it had opened: a test class that retries it must not run out of descriptors. */
class BlackPipeStartFailureTest {

    @Test
    void aStartRefusedForItsHistoryFileLeavesNoDescriptorsOpen() {
        OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        assumeTrue(os instanceof UnixOperatingSystemMXBean, "counting open descriptors needs a Unix JVM");
        UnixOperatingSystemMXBean unix = (UnixOperatingSystemMXBean) os;
        String upstream = UpstreamLane.uri(); // the lane's own descriptors are open before counting
        Path unwritable = Path.of("/no-such-directory/history.jsonl");

        long before = unix.getOpenFileDescriptorCount();
        for (int i = 0; i < 10; i++) {
            IllegalStateException refused = assertThrows(IllegalStateException.class,
                    () -> BlackPipe.builder().upstream(upstream).historyFile(unwritable).start());
            assertEquals("cannot open the history file " + unwritable + ": its directory /no-such-directory does not exist",
                    refused.getMessage());
        }
        long leaked = unix.getOpenFileDescriptorCount() - before;
        // each start had opened the event loops' selectors (about 10 descriptors here) before the history file failed
        assertTrue(leaked < 5, "descriptors still open after 10 failed starts: " + leaked);
    }

    /** Before, each start refused for its admin port (taken) left the admin server's event loop thread and selector. */
    @Test
    void aStartRefusedForItsAdminPortLeavesNoThreadBehind() throws Exception {
        String upstream = UpstreamLane.uri();
        try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            long before = adminThreads();
            for (int i = 0; i < 5; i++) {
                IllegalStateException refused = assertThrows(IllegalStateException.class,
                        () -> BlackPipe.builder().upstream(upstream).adminPort(taken.getLocalPort()).start());
                assertTrue(refused.getMessage().startsWith("cannot start the admin server on ")
                        && refused.getMessage().contains(":" + taken.getLocalPort() + ": "), refused.getMessage());
            }
            io.blackpipe.testing.Await.until(java.time.Duration.ofSeconds(10), () -> "admin threads: " + adminThreads() + ", before: "
                    + before, () -> adminThreads() <= before);
        }
    }

    private static long adminThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith("blackpipe-admin") && t.isAlive()).count();
    }
}
