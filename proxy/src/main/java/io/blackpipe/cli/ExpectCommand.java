package io.blackpipe.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.bson.BsonDocument;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

@Command(name = "expect", mixinStandardHelpOptions = true, versionProvider = Version.class,
        description = {"Check what a running proxy counted, for a CI job: a line per expectation, ok or FAIL with what was"
                + " counted; exit 0 when every one holds, 1 when one does not (after --wait) or the proxy cannot be asked.",
                "Counts are summed over members and apps, from the proxy's start (`blackpipe reset` keeps them) or from"
                        + " a --baseline; N is written =N, >=N or <=N. Names are checked: a misspelt command, outcome or fault"
                        + " is a usage error, never a count of 0."})
final class ExpectCommand extends AdminCommand {
    private static final long POLL_MILLIS = 100;
    private static final BsonDocument NO_COUNTS = new BsonDocument();

    @Option(names = "--attempts", paramLabel = "COMMAND=N", converter = Expectation.Attempts.class,
            description = "Attempts of a command, first ones and retries (e.g. insert=2). Repeatable, as are the others.")
    List<Expectation> attempts = new ArrayList<>();

    @Option(names = "--retries", paramLabel = "COMMAND=N", converter = Expectation.Retries.class,
            description = "Attempts of a command recognised as retries (e.g. insert=1).")
    List<Expectation> retries = new ArrayList<>();

    @Option(names = "--outcomes", paramLabel = "COMMAND:OUTCOME=N", converter = Expectation.Outcomes.class,
            description = "Attempts of a command that ended so: ok, error, network_error or no_reply (e.g. insert:network_error=1).")
    List<Expectation> outcomes = new ArrayList<>();

    @Option(names = "--faults", paramLabel = "FAULT[:COMMAND]=N", converter = Expectation.Faults.class,
            description = "Faults injected under a label (resetConnection, errorReply, outage, ...), of every command or"
                    + " of one (e.g. resetConnection=1, dropReply:update>=1).")
    List<Expectation> faults = new ArrayList<>();

    @Option(names = "--wait", paramLabel = "DURATION", converter = DurationConverter.class, defaultValue = "0",
            description = "Ask again every 100ms until every expectation holds, for up to this long (e.g. 10s; default: ask"
                    + " once). Counts only grow: wait for one to reach a value, not to stay below it.")
    long waitMillis;

    @Option(names = "--baseline", paramLabel = "FILE", converter = OptionalPath.class,
            description = "Count from the counts FILE holds, saved earlier with `blackpipe stats --json > FILE` (before a"
                    + " test case, say): each count is then what the proxy counted since. Default: from the proxy's start.")
    Path baselineFile;

    @Override
    int run(AdminClient admin, PrintWriter out) throws AdminClient.Failure {
        List<Expectation> all = Stream.of(attempts, retries, outcomes, faults).flatMap(List::stream).toList();
        if (all.isEmpty()) {
            throw new ParameterException(spec.commandLine(), "nothing to expect: give --attempts, --retries, --outcomes or --faults");
        }
        BsonDocument baseline = baselineFile == null ? NO_COUNTS : StatsBaseline.read(spec.commandLine(), baselineFile);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis);
        while (true) {
            BsonDocument stats = stats(admin, deadline);
            StatsBaseline.checkSameRun(stats, baseline, baselineFile);
            for (Expectation expectation : all) {
                expectation.checkBelow(stats, baseline, baselineFile);
            }
            boolean allHold = all.stream().allMatch(expectation -> expectation.holds(expectation.counted(stats, baseline)));
            if (allHold || System.nanoTime() - deadline >= 0 || !pause()) {
                for (Expectation expectation : all) {
                    long counted = expectation.counted(stats, baseline);
                    out.printf("%-5s %s (counted %d)%n", expectation.holds(counted) ? "ok" : "FAIL", expectation, counted);
                }
                return allHold ? 0 : 1;
            }
        }
    }

    /**
     * The proxy's counts. A proxy that does not answer yet (a sidecar still starting) is asked again until the
     * deadline; one that answers with an error (a wrong token) is a failure at once.
     */
    private static BsonDocument stats(AdminClient admin, long deadline) throws AdminClient.Failure {
        while (true) {
            AdminClient.Answer answer;
            try {
                answer = admin.send("GET", "stats", null);
            } catch (AdminClient.Failure unanswered) {
                if (System.nanoTime() - deadline >= 0 || !pause()) {
                    throw unanswered;
                }
                continue;
            }
            if (!answer.ok()) {
                throw admin.refused("GET", "stats", answer);
            }
            return BsonDocument.parse(answer.body());
        }
    }

    /** Waits before asking again; false when interrupted, to answer with what was counted last. */
    private static boolean pause() {
        try {
            Thread.sleep(POLL_MILLIS);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
