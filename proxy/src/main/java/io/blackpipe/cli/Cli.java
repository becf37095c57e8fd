package io.blackpipe.cli;

import io.blackpipe.pipe.ProxyConfig;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;

/** Small helpers shared by the commands. */
final class Cli {
    private Cli() {
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
