package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.BindRetry;
import io.blackpipe.testing.HeldPort;
import io.blackpipe.testing.UpstreamLane;
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

    /**
     * The pinned port is held from the moment it is found until just before the child starts; the child binds it by
     * number a second or so later (its JVM starts, it asks the upstream), so a port given to another process meanwhile
     * fails the child's start, and the whole case is run again. The stray pin's port stays held throughout: nothing
     * may listen there.
     */
    @Test
    void aPinForAHostThatIsNoMemberIsWarnedOfNamingTheMembers() throws Exception {
        String member = UpstreamLane.directHello().getArray("hosts").get(0).asString().getValue();
        try (HeldPort stray = HeldPort.any()) {
            BindRetry.upTo(3, () -> aStrayPinIsWarnedOf(member, stray.port()));
        }
    }

    private void aStrayPinIsWarnedOf(String member, int stray) throws Exception {
        int pinned;
        try (HeldPort held = HeldPort.any()) {
            pinned = held.port();
        }
        try (CliChild child = new CliChild(temp, null, Map.of(), "proxy", "--upstream", UpstreamLane.uri(), "--host", "127.0.0.1",
                "--port", "0", "--admin-port", "-1", "--member-port", member + "=" + pinned + ",db9.example:27017=" + stray)) {
            child.awaitLineListeningOn("connection string: ", pinned);
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
