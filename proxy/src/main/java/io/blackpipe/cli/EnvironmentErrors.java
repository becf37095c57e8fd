package io.blackpipe.cli;

import java.util.Arrays;
import java.util.Map;
import java.util.function.Function;
import picocli.CommandLine;
import picocli.CommandLine.IParameterExceptionHandler;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;

/**
 * A usage error about an option whose value came from its BLACKPIPE_* variable says so: configured
 * only by the environment (a compose file, the Docker image), "Invalid value for option '--port'" named
 * a flag nobody typed. The variable's value is not repeated: BLACKPIPE_UPSTREAM and BLACKPIPE_ADMIN_TOKEN
 * may hold secrets.
 */
final class EnvironmentErrors implements IParameterExceptionHandler {
    /** How the shared checks' messages about an option begin, by the option's name (see {@link #optionNamedBy}). */
    private static final Map<String, String> OPENINGS = Map.of("--upstream", "the upstream URI", "--history", "cannot open the history file");

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
        if ("BLACKPIPE_ADMIN".equals(variable) && isBlank(environment.apply(variable)) && !typed(option, args)
                && EnvironmentDefaults.adminWhereItListens(environment) != null) { // the address those two gave --admin
            variable = "BLACKPIPE_ADMIN_HOST and BLACKPIPE_ADMIN_PORT";
            String message = e.getMessage() + " (set by " + variable + ")";
            return standard.handleParseException(new ParameterException(e.getCommandLine(), message, e), args);
        }
        if (variable == null || isBlank(environment.apply(variable)) || typed(option, args) && !flagGivenItsVariable(option, e, variable)) {
            return standard.handleParseException(e, args);
        }
        String message = e.getMessage() + " (set by " + variable + ")";
        ParameterException named = e.getArgSpec() == null ? new ParameterException(e.getCommandLine(), message, e)
                : new ParameterException(e.getCommandLine(), message, e, e.getArgSpec(), e.getValue());
        named.setStackTrace(e.getStackTrace());
        return standard.handleParseException(named, args);
    }

    /** The option the error is about: picocli's own errors carry it; the commands' checks start with its name (or see OPENINGS). */
    private static OptionSpec optionOf(ParameterException e) {
        ArgSpec arg = e.getArgSpec();
        if (arg instanceof OptionSpec option) {
            return option;
        }
        return optionNamedBy(e.getCommandLine(), e.getMessage());
    }

    /**
     * The option a message begins with (the commands' checks do), or null. Checks shared with BlackPipe.start, whose
     * callers typed no flag, begin with what the option holds instead: the upstream URI's (UpstreamUri), and the
     * history file's (History.open, when the proxy starts).
     */
    private static OptionSpec optionNamedBy(CommandLine line, String message) {
        String text = message == null ? "" : message;
        for (OptionSpec option : line.getCommandSpec().options()) {
            String name = option.longestName();
            if (text.startsWith(name + " ") || text.startsWith(name + ":")
                    || OPENINGS.containsKey(name) && text.startsWith(OPENINGS.get(name))) {
                return option;
            }
        }
        return null;
    }

    /**
     * A failed start's message (exit 1: e.g. "--tls-cert /certs/x.pem is not a readable file") with the
     * variable that set its option, when no flag did: a compose file's BLACKPIPE_TLS_CERT, not a --tls-cert nobody typed.
     * A scenario's errors (one a line) are its option's; the variable is named on the first line.
     */
    static String namingTheVariable(CommandLine line, RuntimeException failure) {
        String message = failure.getMessage();
        OptionSpec option = failure instanceof FaultOptions.ScenarioRefused ? line.getCommandSpec().findOption("--scenario")
                : optionNamedBy(line, message);
        String variable = option == null ? null : EnvironmentDefaults.variableOf(option);
        ParseResult parsed = line.getParseResult();
        if (variable == null || parsed == null || parsed.hasMatchedOption(option)) {
            return message;
        }
        int firstLineEnd = message.indexOf('\n');
        String named = " (set by " + variable + ")";
        return firstLineEnd < 0 ? message + named : message.substring(0, firstLineEnd) + named + message.substring(firstLineEnd);
    }

    private static boolean typed(OptionSpec option, String[] args) {
        return Arrays.stream(args).anyMatch(arg -> Arrays.stream(option.names()).anyMatch(name -> arg.equals(name) || arg.startsWith(name + "=")));
    }

    /**
     * A flag typed takes no value, yet picocli reads its default (the variable) to set it: the value it failed on is
     * then the variable's, and "'maybe' is not a boolean" about a typed --forward-failpoints named nothing anyone typed.
     */
    private boolean flagGivenItsVariable(OptionSpec option, ParameterException e, String variable) {
        return option.arity().max() == 0 && environment.apply(variable).equals(e.getValue());
    }

    private static boolean isBlank(String value) {
        return value == null || value.isBlank();
    }
}
