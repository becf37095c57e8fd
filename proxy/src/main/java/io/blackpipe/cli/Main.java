package io.blackpipe.cli;

import picocli.CommandLine;

/** Entry point of {@code java -jar blackpipe.jar}. */
public final class Main {
    private Main() {
    }

    public static void main(String[] args) {
        LogSetup.configure();
        System.exit(commandLine().execute(args));
    }

    /** The command tree; picocli's usage-error exit code (2) is what a bad argument returns. */
    public static CommandLine commandLine() {
        return new CommandLine(new BlackpipeCommand());
    }
}
