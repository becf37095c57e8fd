package io.blackpipe.cli;

import io.blackpipe.report.ResilienceReport;
import io.blackpipe.upstream.LocalUpstream;
import io.blackpipe.upstream.LocalUpstreams;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

@Command(name = "report", mixinStandardHelpOptions = true, versionProvider = Version.class,
        description = "Run the article's strategy tables on real data: every retry strategy under every fault, through "
                + "blackpipe, with the real Java driver, counting on the server. Starts a local upstream unless --upstream is given.")
final class ReportCommand implements Callable<Integer> {
    /** Held strongly: java.util.logging forgets the level of a logger nobody references. */
    private static final java.util.logging.Logger PROXY_LOG = java.util.logging.Logger.getLogger("blackpipe");

    @Spec
    CommandSpec spec;

    @Option(names = "--upstream", paramLabel = "URI", defaultValue = "${env:BLACKPIPE_UPSTREAM}",
            description = "Run against this deployment instead of starting one (env BLACKPIPE_UPSTREAM). It must be one you can write test data to.")
    String upstream;

    @Option(names = {"-n", "--iterations"}, defaultValue = "10",
            description = "Increments per cell (persistent-outage cells do at most 3; default ${DEFAULT-VALUE}).")
    int iterations;

    @Option(names = "--seed", description = "Seed for the backoff jitter and random faults (default: random, printed).")
    Long seed;

    @Option(names = "--json", description = "Print the report as JSON.")
    boolean json;

    @Option(names = "--markdown", description = "Print the report as a Markdown table.")
    boolean markdown;

    @Override
    public Integer call() throws Exception {
        if (iterations < 1 || iterations > 10_000) {
            throw new ParameterException(spec.commandLine(), "--iterations must be from 1 to 10000, got " + iterations);
        }
        if (json && markdown) {
            throw new ParameterException(spec.commandLine(), "--json and --markdown exclude each other");
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        long runSeed = seed != null ? seed : ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
        // Dozens of short-lived proxies: their start/stop lines would bury the progress line.
        PROXY_LOG.setLevel(java.util.logging.Level.WARNING);
        LocalUpstream local = null;
        String uri = upstream;
        String description = "the deployment at " + upstream;
        try {
            if (uri == null || uri.isBlank()) {
                err.println("starting a local upstream ...");
                err.flush();
                local = LocalUpstreams.start();
                uri = local.uri();
                description = local.description();
            }
            err.println("upstream: " + description + "; seed " + runSeed + "; " + iterations + " increments per cell");
            err.flush();
            ResilienceReport report = ResilienceReport.run(uri, description, iterations, runSeed, line -> {
                err.print("\r\u001b[2K" + line);
                err.flush();
            });
            err.println();
            out.print(json ? report.json() + "\n" : markdown ? report.markdown() : report.text());
            out.flush();
            return 0;
        } catch (RuntimeException e) {
            err.println();
            err.println("blackpipe: the report failed: " + e.getMessage());
            return 1;
        } finally {
            if (local != null) {
                local.close();
            }
        }
    }
}
