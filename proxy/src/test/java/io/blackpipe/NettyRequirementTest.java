package io.blackpipe;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * A user's build that pins Netty 4.1 (Spring Boot 3 does) resolves blackpipe's Netty modules to 4.1: BlackPipe.start
 * failed with NoClassDefFoundError io/netty/channel/MultiThreadIoEventLoopGroup and no word of what to do.
 */
class NettyRequirementTest {
    @Test
    void anOlderNettyIsNamedWithTheWaysOut() {
        String problem = NettyRequirement.problem(false, "Netty 4.1.118.Final");
        assertNotNull(problem);
        assertTrue(problem.startsWith("blackpipe needs Netty 4.2 (io.netty:netty-transport 4.2.x), and the test classpath has"
                + " Netty 4.1.118.Final"), problem);
        assertTrue(problem.contains("import io.netty:netty-bom 4.2.x"), problem);
        assertTrue(problem.contains("RemoteBlackPipe"), problem);
    }

    @Test
    void nettyFourDotTwoPasses() {
        assertNull(NettyRequirement.problem(true, "Netty 4.2.18.Final"));
        NettyRequirement.check(); // this build's own Netty
    }
}
