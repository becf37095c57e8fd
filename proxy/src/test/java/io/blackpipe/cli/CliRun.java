package io.blackpipe.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.function.Function;
import picocli.CommandLine;

/** What one in-process run of the CLI printed and returned. */
record CliRun(int exitCode, String out, String err) {
    static CliRun of(String... args) {
        return of(Main.commandLine(), args);
    }

    /** A run whose BLACKPIPE_* defaults see {@code environment} (a variable's value by name, null when unset). */
    static CliRun withEnvironment(Function<String, String> environment, String... args) {
        return of(Main.commandLine(environment), args);
    }

    private static CliRun of(CommandLine cli, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        int code = cli.execute(args);
        return new CliRun(code, out.toString(), err.toString());
    }

    List<String> lines() {
        return out.lines().toList();
    }

    @Override
    public String toString() {
        return "exit " + exitCode + "\n--- out:\n" + out + "\n--- err:\n" + err;
    }
}
