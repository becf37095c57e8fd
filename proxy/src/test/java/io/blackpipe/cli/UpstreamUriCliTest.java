package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.topology.UpstreamUri;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the CLI makes of upstream URI options that decide which deployment is proxied: a
 * replicaSet the seeds are not members of fails the start (exit 1, as a seed that does not answer);
 * loadBalanced=true asks for a mode blackpipe has not, directConnection must say one thing of one
 * host, and options drivers refuse together are refused: usage errors (exit 2) before anything is
 * dialled. An option no driver knows is warned of, in the log on stderr, and the proxy serves.
 */
class UpstreamUriCliTest {
    @TempDir
    Path temp;

    @Test
    @Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD) // a start that wrongly succeeds serves forever
    void aReplicaSetTheSeedsAreNotMembersOfExitsOneNamingTheSetAndWhatTheSeedReports() {
        String reported = UpstreamLane.setName();
        String uri = UpstreamLane.uriNaming("not-" + reported);
        CliRun run = CliRun.of("proxy", "--upstream", uri, "--host", "127.0.0.1", "--port", "0", "--admin-port", "-1");
        assertEquals(1, run.exitCode(), run::toString);
        assertTrue(run.err().startsWith("blackpipe: no upstream seed is a member of the replica set the URI names (replicaSet=not-"
                + reported + "): " + UpstreamUri.parse(uri).seeds().get(0) + " reports setName '" + reported + "'"), run::toString);
        assertFalse(run.err().contains("Usage:"), () -> "the URI was well formed, the deployment did not match it: " + run);
        assertEquals("", run.out(), "nothing is announced when nothing is served");
    }

    @Test
    void loadBalancedTrueIsAUsageErrorOfProxyAndReportNamingWhatToGiveInstead() {
        for (String command : new String[] {"proxy", "report"}) {
            CliRun run = CliRun.of(command, "--upstream", "mongodb://u:s3cret@lb.example.com:27017/?loadBalanced=true");
            assertEquals(2, run.exitCode(), run::toString);
            assertTrue(run.err().startsWith("the upstream URI option loadBalanced=true is not supported: blackpipe has no"
                    + " load-balanced mode"), run::toString);
            assertTrue(run.err().contains("give the address of a mongos, or of the replica set's members, instead"), run::toString);
            assertTrue(run.err().contains("Usage: blackpipe " + command), run::toString);
            assertFalse(run.err().contains("s3cret"), run::toString);
        }
    }

    @Test
    void aDirectConnectionThatIsNeitherTrueNorFalseOrNamesTwoHostsIsAUsageError() {
        CliRun yes = CliRun.of("proxy", "--upstream", "mongodb://127.0.0.1:27017/?directConnection=yes");
        assertEquals(2, yes.exitCode(), yes::toString);
        assertTrue(yes.err().startsWith("the upstream URI option directConnection=yes must be true or false"), yes::toString);
        CliRun two = CliRun.of("proxy", "--upstream", "mongodb://127.0.0.1:27017,127.0.0.1:27018/?directConnection=true");
        assertEquals(2, two.exitCode(), two::toString);
        assertTrue(two.err().startsWith("the upstream URI option directConnection=true takes one host, the URI names 2"), two::toString);
        assertTrue(two.err().contains("Usage: blackpipe proxy"), two::toString);
    }

    @Test
    @Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD) // a start that wrongly succeeds serves forever
    void optionsThatConflictAndAnEmptyReplicaSetAreUsageErrorsNamingWhatIsWrong() {
        String[][] cases = {
                {"mongodb://127.0.0.1:27017/?tls=true&ssl=false", "the upstream URI options tls=true and ssl=false conflict"},
                {"mongodb://127.0.0.1:27017/?tlsInsecure=true&tlsAllowInvalidHostnames=true",
                        "the upstream URI sets both tlsInsecure and tlsAllowInvalidHostnames, which conflict"},
                {"mongodb://127.0.0.1:27017/?replicaSet=", "the upstream URI's replicaSet= is empty"}};
        for (String[] given : cases) {
            CliRun run = CliRun.of("proxy", "--upstream", given[0], "--port", "0", "--admin-port", "-1");
            assertEquals(2, run.exitCode(), run::toString);
            assertTrue(run.err().startsWith(given[1]), run::toString);
            assertTrue(run.err().contains("Usage: blackpipe proxy"), run::toString);
        }
    }

    @Test
    void anOptionNoDriverKnowsIsWarnedOfAndThoseBlackpipePassesByAreNamedOnceAndTheProxyServes() throws Exception {
        String lane = UpstreamLane.uri();
        String separator = lane.contains("?") ? "&" : lane.substring(lane.indexOf("://") + 3).contains("/") ? "?" : "/?";
        String uri = lane + separator + "replSet=rs0&ReadPreference=primary&w=majority&retryWrites=true&appName=shop&readPref=x";
        try (CliChild child = new CliChild(temp, null, Map.of(), "proxy", "--upstream", uri, "--host", "127.0.0.1", "--port", "0",
                "--admin-port", "-1")) {
            child.awaitLine("connection string: "); // warned, not refused: the proxy serves
            List<String> log = child.stderrText().lines().toList();
            List<String> unknown = log.stream().filter(l -> l.contains(" is no MongoDB connection string option")).toList();
            assertEquals(2, unknown.size(), child::describe);
            assertTrue(unknown.get(0).endsWith(" WARNING blackpipe: the upstream URI option replSet is no MongoDB connection"
                    + " string option (misspelt? names are case-insensitive): ignored"), child::describe);
            assertTrue(unknown.get(1).contains(" WARNING blackpipe: the upstream URI option readPref is no"), child::describe);
            List<String> passedBy = log.stream().filter(l -> l.contains(" INFO blackpipe: the upstream URI options ")).toList();
            assertEquals(1, passedBy.size(), child::describe);
            assertTrue(passedBy.get(0).endsWith("the upstream URI options ReadPreference, w, retryWrites, appName shape a driver's"
                    + " client, not blackpipe's connections to the deployment: give them in the application's connection string"),
                    child::describe);
        }
    }
}
