package io.blackpipe.cli;

import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.upstream.LocalUpstreams;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;

/** Small helpers shared by the commands. */
final class Cli {
    private Cli() {
    }

    /** An upstream to check the other options against before the real one is known (see {@link #check}). */
    private static final String ANY_UPSTREAM = "mongodb://127.0.0.1:27017/";

    /**
     * Checks the options before anything starts, for a command that starts its upstream first
     * (`local`): a bad value is a usage error (exit 2) and no upstream is started for it.
     */
    static void check(CommandSpec spec, ListenOptions listen, FaultOptions faults) {
        config(spec, listen, faults, ANY_UPSTREAM);
    }

    /** The local upstream --engine names; one it does not name is a usage error (exit 2). */
    static LocalUpstreams.Engine engine(CommandSpec spec, EngineOption option) {
        try {
            return option.engine();
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage(), e);
        }
    }

    /** Builds the proxy configuration; a bad value is a usage error (exit 2) naming the option. */
    static ProxyConfig config(CommandSpec spec, ListenOptions listen, FaultOptions faults, String upstream) {
        try {
            return faults.applyTo(listen.toConfig(upstream));
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage(), e);
        }
    }
}
