package io.blackpipe.cli;

import java.util.Arrays;
import java.util.function.Function;
import picocli.CommandLine.IParameterExceptionHandler;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParameterException;

/**
 * A usage error about an option whose value came from its BLACKPIPE_* variable says so: configured
 * only by the environment (a compose file, the Docker image), "Invalid value for option '--port'" named
 * a flag nobody typed. The variable's value is not repeated: BLACKPIPE_UPSTREAM and BLACKPIPE_ADMIN_TOKEN
 * may hold secrets.
 */
final class EnvironmentErrors implements IParameterExceptionHandler {
    private final IParameterExceptionHandler standard;
    private final Function<String, String> environment;

    EnvironmentErrors(IParameterExceptionHandler standard, Function<String, String> environment) {
        this.standard = standard;
        this.environment = environment;
    }

    @Override
    public int handleParseException(ParameterException e, String[] args) throws Exception {
        OptionSpec option = optionOf(e);
        String variable = option == null ? null : EnvironmentDefaults.variableOf(option);
        if (variable == null || typed(option, args) || isBlank(environment.apply(variable))) {
            return standard.handleParseException(e, args);
        }
        String message = e.getMessage() + " (set by " + variable + ")";
        ParameterException named = e.getArgSpec() == null ? new ParameterException(e.getCommandLine(), message, e)
                : new ParameterException(e.getCommandLine(), message, e, e.getArgSpec(), e.getValue());
        named.setStackTrace(e.getStackTrace());
        return standard.handleParseException(named, args);
    }

    /**
     * The option the error is about: picocli's own errors carry it; the commands' checks start with its name, and the
     * upstream URI's own checks (UpstreamUri, shared with BlackPipe.start) with "the upstream URI", which --upstream holds.
     */
    private static OptionSpec optionOf(ParameterException e) {
        ArgSpec arg = e.getArgSpec();
        if (arg instanceof OptionSpec option) {
            return option;
        }
        String message = e.getMessage() == null ? "" : e.getMessage();
        for (OptionSpec option : e.getCommandLine().getCommandSpec().options()) {
            String name = option.longestName();
            if (message.startsWith(name + " ") || message.startsWith(name + ":")
                    || name.equals("--upstream") && message.startsWith("the upstream URI")) {
                return option;
            }
        }
        return null;
    }

    private static boolean typed(OptionSpec option, String[] args) {
        return Arrays.stream(args).anyMatch(arg -> Arrays.stream(option.names()).anyMatch(name -> arg.equals(name) || arg.startsWith(name + "=")));
    }

    private static boolean isBlank(String value) {
        return value == null || value.isBlank();
    }
}
