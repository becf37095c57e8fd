package io.blackpipe.cli;

import java.util.function.Function;
import org.bson.BsonInvalidOperationException;
import org.bson.json.JsonParseException;
import picocli.CommandLine;

/** Entry point of {@code java -jar blackpipe.jar}. */
public final class Main {
    private Main() {
    }

    /**
     * Netty's leak detector (on by default, sampling one buffer in 128) costs about half a
     * microsecond per relayed command in the benchmark. The CLI is a long-running proxy, so it runs
     * without it unless asked (-Dio.netty.leakDetection.level=...); the tests run it at PARANOID.
     * Set here, before any Netty class reads it.
     */
    static final String LEAK_DETECTION = "io.netty.leakDetection.level";

    public static void main(String[] args) {
        runWithoutLeakDetectionUnlessAsked();
        LogSetup.configure();
        System.exit(commandLine().execute(args));
    }

    static void runWithoutLeakDetectionUnlessAsked() {
        if (System.getProperty(LEAK_DETECTION) == null) {
            System.setProperty(LEAK_DETECTION, "disabled");
        }
    }

    /** The command tree; picocli's usage-error exit code (2) is what a bad argument returns. */
    public static CommandLine commandLine() {
        return commandLine(System::getenv);
    }

    /** The command tree, its BLACKPIPE_* defaults read from {@code environment}'s empty values as unset. */
    static CommandLine commandLine(Function<String, String> environment) {
        CommandLine cli = new CommandLine(new BlackpipeCommand()).setDefaultValueProvider(new EnvironmentDefaults(environment));
        return cli.setParameterExceptionHandler(new SecretsMasked(new EnvironmentErrors(cli.getParameterExceptionHandler(), environment)))
                .setExecutionExceptionHandler(Main::unreadableAnswer);
    }

    /**
     * The commands read the admin API's answers as its JSON (the user's own JSON is checked where it is read): an
     * answer that is no JSON, or JSON of another shape, came from something else at --admin (another web server, a
     * proxy in between). That is said in one line, exit 1, not with a stack trace; anything else is a defect, and keeps
     * its trace.
     */
    private static int unreadableAnswer(Exception e, CommandLine line, CommandLine.ParseResult parsed) throws Exception {
        boolean talksToAnAdminApi = line.getCommandSpec().findOption("--admin") != null; // report, local, proxy read no answers
        if (!talksToAnAdminApi || !(e instanceof JsonParseException || e instanceof BsonInvalidOperationException)) {
            throw e;
        }
        line.getErr().println("blackpipe: the answer is not the admin API's JSON (is --admin a blackpipe's admin URL?): " + e.getMessage());
        line.getErr().flush();
        return 1;
    }
}
