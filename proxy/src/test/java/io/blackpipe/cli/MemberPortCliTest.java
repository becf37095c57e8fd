package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.UpstreamLane;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * `proxy --member-port HOST:PORT=N` for a host the deployment does not have pinned nothing and
 * said nothing (a typo, or the address apps dial instead of the set's member name): the proxy
 * now warns at start, naming the host and the members there are, and still pins the real ones.
 */
class MemberPortCliTest {
    @TempDir
    Path temp;

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    @Test
    void aPinForAHostThatIsNoMemberIsWarnedOfNamingTheMembers() throws Exception {
        String member = UpstreamLane.directHello().getArray("hosts").get(0).asString().getValue();
        int pinned = freePort();
        int stray = freePort();
        try (CliChild child = new CliChild(temp, null, Map.of(), "proxy", "--upstream", UpstreamLane.uri(), "--host", "127.0.0.1",
                "--port", "0", "--admin-port", "-1", "--member-port", member + "=" + pinned + ",db9.example:27017=" + stray)) {
            child.awaitLine("connection string: ");
            assertTrue(child.seen.contains("  upstream " + member + " -> advertised 127.0.0.1:" + pinned), child::describe);
            // each log line starts with its instant; the rest is the warning, once, for the stray pin only
            List<String> warnings = child.stderrText().lines().filter(l -> l.contains("--member-port"))
                    .map(l -> l.substring(l.indexOf(' ') + 1)).toList();
            assertEquals(List.of("WARNING blackpipe: --member-port db9.example:27017=" + stray + ": db9.example:27017 is not a member"
                    + " of the deployment (members: " + member + "); nothing listens on port " + stray + " unless it joins the set later"),
                    warnings, child::describe);
        }
    }
}
