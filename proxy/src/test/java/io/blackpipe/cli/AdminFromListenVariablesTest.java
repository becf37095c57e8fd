package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
    void anIpv6WildcardIsAskedOnLoopbackAndAPortThatIsNoFixedOneLeavesTheDefault() {
        CliRun wildcard = CliRun.withEnvironment(Map.of("BLACKPIPE_ADMIN_HOST", "::", "BLACKPIPE_ADMIN_PORT", "1")::get, "stats");
        assertTrue(wildcard.err().contains("http://[::1]:1"), wildcard::toString);

        CliRun noFixedPort = CliRun.withEnvironment(Map.of("BLACKPIPE_ADMIN_HOST", "0.0.0.0", "BLACKPIPE_ADMIN_PORT", "0")::get, "stats");
        assertTrue(noFixedPort.err().contains("http://127.0.0.1:9090"), noFixedPort::toString);

        // a name no URL can hold is theirs, not an --admin nobody typed
        CliRun underscore = CliRun.withEnvironment(Map.of("BLACKPIPE_ADMIN_HOST", "my_host", "BLACKPIPE_ADMIN_PORT", "9191")::get, "stats");
        assertEquals(2, underscore.exitCode(), underscore::toString);
        assertTrue(underscore.err().startsWith("--admin 'http://my_host:9191' is not a URL such as http://127.0.0.1:9090"
                + " (set by BLACKPIPE_ADMIN_HOST and BLACKPIPE_ADMIN_PORT)"), underscore::toString);
    }
}
