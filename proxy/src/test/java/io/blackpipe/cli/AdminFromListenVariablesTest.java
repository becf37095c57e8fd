package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.testing.ScriptedMongod;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A control command run where the proxy's own variables are set (docker compose exec into the image, a CI job's env)
 * went to 127.0.0.1:9090 whatever BLACKPIPE_ADMIN_PORT said, while the image's health check followed it. With
 * BLACKPIPE_ADMIN unset, the commands now ask where BLACKPIPE_ADMIN_HOST and _PORT put the admin server.
 */
class AdminFromListenVariablesTest {

    @Test
    void aControlCommandFindsTheProxyWhereItsVariablesPutIt() throws Exception {
        try (ScriptedMongod member = ScriptedMongod.start();
             AdminRig rig = AdminRig.start(ProxyConfig.embedded("mongodb://" + member.address() + "/?replicaSet=" + ScriptedMongod.SET_NAME))) {
            String port = Integer.toString(rig.admin().port());
            for (String host : new String[] {"0.0.0.0", "127.0.0.1"}) {
                CliRun run = CliRun.withEnvironment(Map.of("BLACKPIPE_ADMIN_HOST", host, "BLACKPIPE_ADMIN_PORT", port)::get,
                        "fault", "add", "--command", "insert", "--times", "1", "--reset", "--admin-token", AdminRig.TOKEN);
                assertEquals(0, run.exitCode(), () -> host + ": " + run);
            }
            assertEquals(2, rig.ruleIds().size(), "both rules reached the proxy");

            CliRun portAlone = CliRun.withEnvironment(Map.of("BLACKPIPE_ADMIN_PORT", port)::get, "fault", "list", "--admin-token", AdminRig.TOKEN);
            assertEquals(0, portAlone.exitCode(), portAlone::toString);
        }
    }

    @Test
    void anIpv6WildcardIsAskedOnLoopbackAndTheUnreachableAddressSaysWhereItCameFrom() {
        CliRun wildcard = CliRun.withEnvironment(Map.of("BLACKPIPE_ADMIN_HOST", "::", "BLACKPIPE_ADMIN_PORT", "1")::get, "stats");
        assertEquals(1, wildcard.exitCode(), wildcard::toString);
        assertTrue(wildcard.err().contains("http://[::1]:1"), wildcard::toString);
        // it named only --admin and BLACKPIPE_ADMIN, which the user never set
        assertTrue(wildcard.err().contains("(BLACKPIPE_ADMIN_HOST and BLACKPIPE_ADMIN_PORT gave that address.) Point --admin or BLACKPIPE_ADMIN"),
                wildcard::toString);

        CliRun typed = CliRun.withEnvironment(Map.of("BLACKPIPE_ADMIN_PORT", "1")::get, "stats", "--admin", "127.0.0.1:1");
        assertEquals(1, typed.exitCode(), typed::toString);
        assertFalse(typed.err().contains("gave that address"), typed::toString);

        // a name no URL can hold is theirs, not an --admin nobody typed
        CliRun underscore = CliRun.withEnvironment(Map.of("BLACKPIPE_ADMIN_HOST", "my_host", "BLACKPIPE_ADMIN_PORT", "9191")::get, "stats");
        assertEquals(2, underscore.exitCode(), underscore::toString);
        assertTrue(underscore.err().startsWith("--admin 'http://my_host:9191' is not a URL such as http://127.0.0.1:9090"
                + " (set by BLACKPIPE_ADMIN_HOST and BLACKPIPE_ADMIN_PORT)"), underscore::toString);
    }

    /** A port that is no fixed one left the default, 127.0.0.1:9090: "cannot reach", or another proxy's answers. */
    @Test
    void aPortThatIsNoFixedOneIsAUsageErrorSayingWhy() {
        Map<String, String> whyByPort = Map.of(
                "0", "--admin: BLACKPIPE_ADMIN_PORT is 0, a port the proxy picked as it started: give the proxy's admin address with --admin or BLACKPIPE_ADMIN",
                "-1", "--admin: BLACKPIPE_ADMIN_PORT is -1, which turns the proxy's admin server off",
                "nine", "--admin: BLACKPIPE_ADMIN_PORT 'nine' is no port",
                "99999", "--admin: BLACKPIPE_ADMIN_PORT 99999 is no port (1-65535)");
        whyByPort.forEach((port, why) -> {
            for (String command : new String[] {"stats", "health"}) {
                CliRun run = CliRun.withEnvironment(Map.of("BLACKPIPE_ADMIN_HOST", "0.0.0.0", "BLACKPIPE_ADMIN_PORT", port)::get, command);
                assertEquals(2, run.exitCode(), run::toString);
                assertTrue(run.err().startsWith(why), run::toString);
                assertTrue(run.err().contains("Usage: blackpipe " + command), run::toString);
            }
        });

        // an address given another way is asked, whatever the proxy's own port variable says
        CliRun typed = CliRun.withEnvironment(Map.of("BLACKPIPE_ADMIN_PORT", "0")::get, "stats", "--admin", "127.0.0.1:1");
        assertTrue(typed.err().contains("http://127.0.0.1:1"), typed::toString);
        // (picocli reads a set BLACKPIPE_ADMIN from the process's own environment, so which address it asked is not seen here)
        CliRun variable = CliRun.withEnvironment(Map.of("BLACKPIPE_ADMIN_PORT", "0", "BLACKPIPE_ADMIN", "127.0.0.1:1")::get, "stats");
        assertEquals(1, variable.exitCode(), variable::toString);
        assertFalse(variable.err().contains("BLACKPIPE_ADMIN_PORT"), variable::toString);
    }
}
