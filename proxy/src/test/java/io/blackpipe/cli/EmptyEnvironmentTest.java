package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.HeldPort;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/**
 * A BLACKPIPE_* variable set but empty counts as unset, whatever its option's type: the option takes
 * its default (BLACKPIPE_PORT= is --port 27017, not "'' is not an int"). An empty value given on the
 * command line is no default: still a usage error (exit 2, with usage).
 */
class EmptyEnvironmentTest {
    /** Every variable an option of the proxy reads its default from. */
    private static final List<String> PROXY_VARIABLES = List.of("BLACKPIPE_HOST", "BLACKPIPE_PORT", "BLACKPIPE_ADVERTISE_HOST",
            "BLACKPIPE_ADMIN_HOST", "BLACKPIPE_ADMIN_PORT", "BLACKPIPE_ADMIN_TOKEN", "BLACKPIPE_MEMBER_PORTS",
            "BLACKPIPE_SIMULATE_MEMBERS", "BLACKPIPE_CONNECT_TIMEOUT_MS", "BLACKPIPE_TLS_CERT", "BLACKPIPE_TLS_KEY",
            "BLACKPIPE_TLS_CLIENT_CA", "BLACKPIPE_MAX_CONNECTIONS", "BLACKPIPE_SCENARIO", "BLACKPIPE_HISTORY", "BLACKPIPE_SEED",
            "BLACKPIPE_FORWARD_FAILPOINTS");

    @TempDir
    Path temp;

    private static final Function<String, String> ALL_EMPTY = name -> name.startsWith("BLACKPIPE_") ? "" : null;
    private static final Function<String, String> ALL_UNSET = name -> null;

    /** The value of each option of the command at {@code path} once its defaults are applied. */
    private static Map<String, Object> defaults(Function<String, String> environment, String... path) {
        CommandLine root = Main.commandLine(environment);
        root.parseArgs(path);
        CommandLine command = root;
        for (String name : path) {
            command = command.getSubcommands().get(name);
        }
        Map<String, Object> values = new HashMap<>();
        for (OptionSpec option : command.getCommandSpec().options()) {
            values.put(option.longestName(), option.getValue());
        }
        return values;
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"proxy", "local", "report", "health", "stats"})
    void everyOptionTakesTheSameDefaultFromAnEmptyVariableAsFromAnUnsetOne(String command) {
        Map<String, Object> fromEmpty = defaults(ALL_EMPTY, command);
        assertEquals(defaults(ALL_UNSET, command), fromEmpty);
        if (command.equals("proxy")) { // the documented defaults, not merely the same ones
            assertEquals(27017, fromEmpty.get("--port"));
            assertEquals(9090, fromEmpty.get("--admin-port"));
            assertEquals(5000, fromEmpty.get("--connect-timeout-ms"));
            assertEquals(0, fromEmpty.get("--simulate-members"));
            assertEquals(0, fromEmpty.get("--max-connections"));
            assertEquals(false, fromEmpty.get("--forward-failpoints"));
            assertEquals("0.0.0.0", fromEmpty.get("--host"));
            assertEquals("127.0.0.1", fromEmpty.get("--admin-host"));
            assertNull(fromEmpty.get("--seed"), "random, as when unset");
            assertNull(fromEmpty.get("--upstream"));
        }
    }

    /** The real environment of a child JVM: the proxy gets as far as dialling its upstream (exit 1), not a usage error. */
    @Test
    void aProxyWhoseVariablesAreAllEmptyStartsWithItsDefaults() throws Exception {
        Map<String, String> env = new HashMap<>();
        PROXY_VARIABLES.forEach(name -> env.put(name, ""));
        HeldPort refusing = HeldPort.any(); // bound, not listening: refused, and given to no process that would answer
        env.put("BLACKPIPE_UPSTREAM", "mongodb://127.0.0.1:" + refusing.port() + "/");
        try (refusing; CliChild child = new CliChild(temp, null, env, "proxy")) {
            assertEquals(1, child.awaitExit(), child::describe);
            String err = child.stderrText();
            assertTrue(err.contains("no upstream seed answered"), err);
            assertFalse(err.contains("Usage:"), err);
        }
    }

    @ParameterizedTest(name = "{0} ''")
    @ValueSource(strings = {"--port", "--admin-port", "--connect-timeout-ms", "--simulate-members", "--max-connections", "--seed"})
    void anEmptyValueOnTheCommandLineIsStillAUsageError(String option) {
        CliRun run = CliRun.withEnvironment(ALL_EMPTY, "proxy", "--upstream", "mongodb://127.0.0.1:1/", option, "");
        assertEquals(2, run.exitCode(), run::toString);
        assertTrue(run.err().startsWith("Invalid value for option '" + option + "': '' is not a"), run::toString);
        assertTrue(run.err().contains("Usage: blackpipe proxy"), run::toString);
    }
}
