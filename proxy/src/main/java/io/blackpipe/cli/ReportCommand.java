package io.blackpipe.cli;

import com.mongodb.ConnectionString;
import io.blackpipe.fault.Plural;
import io.blackpipe.report.ResilienceReport;
import io.blackpipe.report.SpecCheck;
import io.blackpipe.report.SpecDriver;
import io.blackpipe.topology.SeedlistException;
import io.blackpipe.topology.UpstreamUri;
import io.blackpipe.upstream.LocalUpstream;
import io.blackpipe.upstream.LocalUpstreams;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.Arrays;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

@Command(name = "report", mixinStandardHelpOptions = true, versionProvider = Version.class,
        description = {"Run the article's strategy tables on real data: every retry strategy under every fault, through "
                + "blackpipe, with the real Java driver, counting on the server. Starts a local upstream unless --upstream is given (as `local` does: jongodb is installed"
                + " once into $BLACKPIPE_CACHE, else $XDG_CACHE_HOME/blackpipe or ~/.cache/blackpipe).",
                "",
                "With --spec: does a driver follow the retryable reads/writes specs? Every error code of the specs' retryable "
                + "lists, a sample of non-retryable ones and a network reset are injected (failCommand, times: 1) on an "
                + "insertOne and a find; getMore, updateMany, deleteMany and a w:0 insert meet a fault too (never retried), and "
                + "a fault twice in a row checks the driver retries only once; on 4.4 and later (maxWireVersion 9), a 10107 "
                + "without labels (not retried) and a 2 with RetryableWriteError (retried) check a write is retried by the label, "
                + "not the code. Each case runs through a fresh blackpipe and is judged by the attempts blackpipe counted and, "
                + "for a write, by their lsid and txnNumber in its history: an insertOne's first attempt carries a txnNumber and "
                + "its retry the same lsid and txnNumber; a w:0 insert, updateMany and deleteMany carry none. Reads are judged "
                + "by the count alone: the retryable reads spec requires nothing of the retry's session. On a standalone, or a "
                + "server whose hello has no logicalSessionTimeoutMinutes, drivers retry no write and add no txnNumber (the "
                + "spec's rule): write cases then expect one attempt without one. "
                + "Exit status 0 when every case matches, 3 when one does not.",
                "",
                "--driver-cmd CMD checks another driver: for each case blackpipe runs `/bin/sh -c 'CMD \"$@\"' blackpipe-spec URI OPERATION`, i.e. CMD URI OPERATION. "
                + "URI is blackpipe's connection string with the case's database and retryWrites=true&retryReads=true "
                + "(and the upstream URI's user, password, authSource, authMechanism and authMechanismProperties, if it has a user); "
                + "OPERATION is one of insert (insertOne), find (find one document), getMore (iterate the whole collection "
                + "with batchSize 2), updateMany, deleteMany, insertW0 (insertOne with w:0). Work on the collection \"items\" "
                + "(also in env BLACKPIPE_SPEC_COLLECTION) of the URI's database, which holds _id 1 to 5. Use the driver's "
                + "defaults otherwise, and exit when the operation ends (success or error); the exit status and last output "
                + "line are shown (any mongodb:// URI in it with its password masked) but the verdict comes from what blackpipe saw. "
                + "Each run has 60s."})
final class ReportCommand implements Callable<Integer> {
    /** Held strongly: java.util.logging forgets the level of a logger nobody references. */
    private static final java.util.logging.Logger PROXY_LOG = java.util.logging.Logger.getLogger("blackpipe");

    @Spec
    CommandSpec spec;

    @Option(names = "--upstream", paramLabel = "URI", defaultValue = "${env:BLACKPIPE_UPSTREAM}",
            description = "Run against this deployment instead of starting one (env BLACKPIPE_UPSTREAM). It must be one you can write test data to: "
                    + "a database per cell or case (blackpipe_report_*, blackpipe_spec_*), dropped once judged where the server allows.")
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

    @Option(names = "--spec", description = "Check a driver against the retryable reads/writes specs instead (see above).")
    boolean specCheck;

    @Option(names = "--driver-cmd", paramLabel = "CMD",
            description = "With --spec: check this external program instead of the bundled Java driver (contract above).")
    String driverCmd;

    @Mixin
    EngineOption engine;

    @Override
    public Integer call() throws Exception {
        LocalUpstreams.Engine chosen = Cli.engine(spec, engine);
        if (iterations < 1 || iterations > 10_000) {
            throw new ParameterException(spec.commandLine(), "--iterations must be from 1 to 10000, got " + iterations);
        }
        if (json && markdown) {
            throw new ParameterException(spec.commandLine(), "--json and --markdown exclude each other");
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (driverCmd != null && !specCheck) {
            throw new ParameterException(spec.commandLine(), "--driver-cmd goes with --spec");
        }
        for (String reportOnly : new String[] {"--iterations", "--seed"}) { // --spec runs each case once, with no random draw
            if (specCheck && spec.commandLine().getParseResult().hasMatchedOption(reportOnly)) {
                throw new ParameterException(spec.commandLine(), reportOnly + " goes with the report, not --spec");
            }
        }
        if (driverCmd != null && driverCmd.isBlank()) {
            throw new ParameterException(spec.commandLine(), "--driver-cmd needs a command, got '" + driverCmd + "'");
        }
        // Typed but empty (`--upstream "$MONGODB_URI"` with the variable unset) is a mistake, not a wish for a
        // local upstream: that report would judge a deployment nobody asked about. An empty env variable is unset.
        if (upstream != null && upstream.isBlank() && spec.commandLine().getParseResult().hasMatchedOption("--upstream")) {
            throw new ParameterException(spec.commandLine(), "--upstream needs a URI, got '" + upstream + "'");
        }
        if (upstream != null && !upstream.isBlank() && spec.commandLine().getParseResult().hasMatchedOption("--engine")) {
            throw new ParameterException(spec.commandLine(), "--engine chooses the local upstream, and --upstream names a deployment: give one");
        }
        String given = null;
        if (upstream != null && !upstream.isBlank()) {
            try {
                // parsed for its toString: the description is printed and goes into the report, the password must not
                given = "the deployment at " + UpstreamUri.parse(upstream);
                driverAccepts(upstream);
            } catch (IllegalArgumentException e) {
                throw new ParameterException(spec.commandLine(), e.getMessage(), e); // as `proxy` does: exit 2 with usage
            } catch (SeedlistException e) { // as `proxy` does: the DNS records of a mongodb+srv:// host, not the URI, failed
                err.println("blackpipe: " + e.getMessage());
                return 1;
            }
        }
        long runSeed = seed != null ? seed : ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
        // Dozens of short-lived proxies: their start/stop lines would bury the progress line.
        PROXY_LOG.setLevel(java.util.logging.Level.WARNING);
        LocalUpstream local = null;
        String uri = upstream;
        String description;
        try {
            if (uri == null || uri.isBlank()) {
                err.println("starting a local upstream ...");
                err.flush();
                try {
                    local = LocalUpstreams.start(chosen, "put mongod on PATH, or name an existing replica set:"
                            + " blackpipe report --upstream URI");
                } catch (IOException e) { // no npm, no network for the first install: as `local` says it
                    err.println("blackpipe: cannot start a local upstream: " + e.getMessage());
                    return 1;
                }
                uri = local.uri();
                description = local.description();
            } else {
                description = given;
            }
            if (specCheck) {
                return spec(uri, description, out, err);
            }
            err.println("upstream: " + description + "; seed " + runSeed + "; " + Plural.of(iterations, "increment") + " per cell");
            err.flush();
            boolean terminal = Terminal.stderr();
            ResilienceReport report = ResilienceReport.run(uri, description, iterations, runSeed, progress(err, terminal));
            endProgress(err, terminal);
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

    /**
     * The report's own clients (seeding, counting) read the URI with the Java driver, which refuses options
     * the proxy passes over (readPreference=bogus, w=-5): say so now, not as a failed run.
     */
    private static void driverAccepts(String uri) {
        try {
            new ConnectionString(uri);
        } catch (IllegalArgumentException e) {
            // the driver's message may not name the option ("state should be: w >= 0"); its key, never its value (a secret?)
            String query = uri.indexOf('?') < 0 ? "" : uri.substring(uri.indexOf('?') + 1);
            String culprit = Arrays.stream(query.split("&")).filter(option -> !acceptedAlone(option)).findFirst()
                    .map(option -> " (" + option.split("=", 2)[0] + ")").orElse("");
            throw new IllegalArgumentException("the upstream URI has an option the report's Java driver refuses" + culprit + ": "
                    + e.getMessage(), e);
        }
    }

    private static boolean acceptedAlone(String option) {
        try {
            new ConnectionString("mongodb://127.0.0.1/?" + option);
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    private int spec(String uri, String description, PrintWriter out, PrintWriter err) throws InterruptedException {
        SpecDriver driver = driverCmd != null ? SpecDriver.external(driverCmd) : SpecDriver.bundledJava();
        err.println("upstream: " + description + "; driver: " + driver.name());
        err.flush();
        boolean terminal = Terminal.stderr();
        SpecCheck check = SpecCheck.run(uri, description, driver, progress(err, terminal));
        endProgress(err, terminal);
        out.print(json ? check.json() + "\n" : markdown ? check.markdown() : check.text());
        out.flush();
        return check.allMatch() ? 0 : 3;
    }

    /**
     * "[3/30] cell": on a terminal, each line overwrites the last; anywhere else (a CI log, a file) one line
     * each, as the carriage return and the erase-line escape turned a log into one long garbled line.
     */
    private static Consumer<String> progress(PrintWriter err, boolean terminal) {
        return line -> {
            if (terminal) {
                err.print("\r\u001b[2K" + line);
            } else {
                err.println(line);
            }
            err.flush();
        };
    }

    private static void endProgress(PrintWriter err, boolean terminal) {
        if (terminal) {
            err.println();
        }
    }
}
