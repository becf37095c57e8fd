package io.blackpipe.cli;

import java.io.PrintWriter;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * A command that talks to a running proxy's admin API: --admin/--admin-token, and exit 1 with
 * the failure's message when the proxy cannot be reached or the API says no.
 */
abstract class AdminCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    AdminOptions adminOptions;

    @Override
    public final Integer call() throws Exception {
        AdminClient client = adminOptions.client(spec);
        try {
            int code = run(client, spec.commandLine().getOut());
            spec.commandLine().getOut().flush();
            return code;
        } catch (AdminClient.Failure e) {
            spec.commandLine().getOut().flush();
            PrintWriter err = spec.commandLine().getErr();
            err.println("blackpipe: " + e.getMessage());
            err.flush();
            return 1;
        }
    }

    /** Does the work; returns the exit code. */
    abstract int run(AdminClient admin, PrintWriter out) throws AdminClient.Failure;

    /** What {@code make} builds from the options; its refusal ("delay: ...") a usage error naming the option ("--delay: ..."). */
    <T> T asOptions(Supplier<T> make) {
        try {
            return make.get();
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "--" + e.getMessage());
        }
    }
}
