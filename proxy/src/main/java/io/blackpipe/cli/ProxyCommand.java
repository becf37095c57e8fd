package io.blackpipe.cli;

import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.topology.SeedlistException;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

@Command(name = "proxy", mixinStandardHelpOptions = true, versionProvider = Version.class,
        description = "Proxy a MongoDB deployment: one listener per member, hello replies rewritten to name the proxy.")
final class ProxyCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--upstream", paramLabel = "URI", defaultValue = "${env:BLACKPIPE_UPSTREAM}",
            description = "mongodb:// or mongodb+srv:// URI of the deployment to proxy (env BLACKPIPE_UPSTREAM).")
    String upstream;

    @Mixin
    ListenOptions listen;

    @Mixin
    FaultOptions faults;

    @Override
    public Integer call() throws InterruptedException {
        if (upstream == null || upstream.isBlank()) {
            throw new ParameterException(spec.commandLine(), "Missing required option: '--upstream=URI' (or env BLACKPIPE_UPSTREAM)");
        }
        try (StopSignals stop = StopSignals.install(spec.commandLine().getErr())) {
            return serve(stop);
        }
    }

    private int serve(StopSignals stop) throws InterruptedException {
        ProxyConfig config;
        try {
            config = Cli.config(spec, listen, faults, upstream);
        } catch (SeedlistException e) { // the URI was well formed, its DNS records were not: a failed start, not a usage error
            spec.commandLine().getErr().println("blackpipe: " + e.getMessage());
            return 1;
        }
        RunningProxy running;
        try {
            faults.checkScenario();
            running = RunningProxy.start(config, listen.adminToken);
        } catch (RuntimeException e) {
            spec.commandLine().getErr().println("blackpipe: " + EnvironmentErrors.namingTheVariable(spec.commandLine(), e));
            return 1;
        }
        try {
            faults.startScenario(running.proxy);
        } catch (IllegalArgumentException e) {
            running.close();
            spec.commandLine().getErr().println("blackpipe: " + EnvironmentErrors.namingTheVariable(spec.commandLine(), e));
            return 1;
        }
        if (stop.requested()) { // a teardown while it started: stopped, as it would stop serving
            running.close();
            return running.exitStatus(spec.commandLine().getErr());
        }
        running.printBanner(spec.commandLine().getOut());
        running.awaitShutdown(stop, () -> { });
        return running.exitStatus(spec.commandLine().getErr());
    }
}
