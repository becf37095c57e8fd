package io.blackpipe;

import io.netty.util.Version;

/**
 * blackpipe runs on Netty 4.2 (its MultiThreadIoEventLoopGroup). A user's build that pins Netty 4.1, as
 * Spring Boot 3's dependency management does, resolves blackpipe's Netty modules to 4.1 too, and the
 * start failed with a bare NoClassDefFoundError: say what is wrong and what to do before any listener starts.
 */
final class NettyRequirement {
    private static final String SINCE_4_2 = "io.netty.channel.MultiThreadIoEventLoopGroup";

    private NettyRequirement() {
    }

    /** @throws IllegalStateException naming the Netty found and the ways out, when it is older than 4.2 */
    static void check() {
        String problem = problem(present(SINCE_4_2), foundVersion());
        if (problem != null) {
            throw new IllegalStateException(problem);
        }
    }

    /** Why blackpipe cannot start on this Netty, or null when it can. */
    static String problem(boolean has4dot2, String found) {
        if (has4dot2) {
            return null;
        }
        return "blackpipe needs Netty 4.2 (io.netty:netty-transport 4.2.x), and the test classpath has " + found
                + ": the build pins an older Netty (Spring Boot 3's dependency management does, as netty.version). Move the"
                + " build to Netty 4.2 (set netty.version, or import io.netty:netty-bom 4.2.x; Maven cannot do it for the tests"
                + " alone, so the application runs on 4.2 too), or run blackpipe outside the test JVM (its CLI jar, or"
                + " BlackPipeContainer) and drive it with RemoteBlackPipe, which runs on Netty 4.1";
    }

    private static String foundVersion() {
        try {
            Version transport = Version.identify().get("netty-transport");
            return transport == null ? "a Netty without version information" : "Netty " + transport.artifactVersion();
        } catch (RuntimeException | LinkageError e) {
            return "a Netty without version information";
        }
    }

    private static boolean present(String className) {
        try {
            Class.forName(className, false, NettyRequirement.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }
}
