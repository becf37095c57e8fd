package io.blackpipe.cli;

import io.blackpipe.fault.RuleParser;
import io.blackpipe.fault.ScenarioException;
import io.blackpipe.fault.ScenarioLoader;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;
import picocli.CommandLine.Option;

/** How the proxy breaks and records things; shared by every command that starts one. */
final class FaultOptions {
    @Option(names = "--scenario", paramLabel = "FILE|NAME", defaultValue = "${env:BLACKPIPE_SCENARIO}", converter = OptionalPath.class,
            description = "Run this scenario (YAML or JSON, see fault-scripts/) once the proxy listens; when no such file exists, "
                    + "the bundled scenario of that name (transient-blip, ...) (env BLACKPIPE_SCENARIO).")
    Path scenario;

    @Option(names = "--history", paramLabel = "FILE", defaultValue = "${env:BLACKPIPE_HISTORY}", converter = OptionalPath.class,
            description = "Append one JSON line per application command to FILE: Jepsen-style operation history (env BLACKPIPE_HISTORY).")
    Path history;

    @Option(names = "--seed", paramLabel = "N", defaultValue = "${env:BLACKPIPE_SEED}",
            description = "Seed of every random fault decision (activationProbability), to replay a run; default: random, printed at start (env BLACKPIPE_SEED).")
    Long seed;

    // fallbackValue: typed, the flag means true; without it picocli sets a flag to the opposite of its default, so
    // BLACKPIPE_FORWARD_FAILPOINTS=true with --forward-failpoints typed turned forwarding off
    @Option(names = "--forward-failpoints", defaultValue = "${env:BLACKPIPE_FORWARD_FAILPOINTS:-false}", fallbackValue = "true",
            description = "Pass configureFailPoint commands on to the server instead of taking them as blackpipe rules (env BLACKPIPE_FORWARD_FAILPOINTS).")
    boolean forwardFailPoints;

    long effectiveSeed() {
        if (seed == null) {
            seed = ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
        }
        return seed;
    }

    ProxyConfig applyTo(ProxyConfig config) {
        return config.withHistoryFile(history).withFaultOptions(effectiveSeed(), forwardFailPoints);
    }

    /**
     * Reads the --scenario, if any, and checks it as {@code scenario validate} does, before anything starts: a file
     * that cannot be read or is no valid scenario fails the command before it binds a port or dials the upstream. What
     * needs the deployment (its members' names, a failover it cannot run) is checked as it starts.
     *
     * @throws ScenarioRefused with file:line: field: message
     */
    void checkScenario() {
        withScenario(argument -> argument.load(ScenarioLoader.offline(new RuleParser(0)))); // not the proxy's seeded draws
    }

    /** Loads and starts the --scenario (a file, or a bundled scenario's name), if any. @throws ScenarioRefused with file:line: field: message */
    void startScenario(ProxyServer proxy) {
        withScenario(argument -> proxy.scenarios().start(argument::load));
    }

    private void withScenario(ScenarioUse use) {
        if (scenario == null) {
            return;
        }
        ScenarioArgument argument = new ScenarioArgument(scenario);
        try {
            use.apply(argument);
        } catch (IOException e) {
            throw new ScenarioRefused("cannot read scenario " + argument.cannotRead(e), e);
        } catch (ScenarioException e) {
            throw new ScenarioRefused(e.getMessage(), e);
        }
    }

    private interface ScenarioUse {
        void apply(ScenarioArgument argument) throws IOException, ScenarioException;
    }

    /** The --scenario the start could not read or refused: a failure of that option's, which BLACKPIPE_SCENARIO may have set. */
    static final class ScenarioRefused extends IllegalArgumentException {
        ScenarioRefused(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
