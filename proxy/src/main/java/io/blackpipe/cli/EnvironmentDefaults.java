package io.blackpipe.cli;

import java.lang.reflect.Field;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.IDefaultValueProvider;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Option;

/**
 * Lets a BLACKPIPE_* variable that is set but empty (BLACKPIPE_PORT= in a compose file) count as
 * unset, for every option whose default reads one ({@code ${env:NAME}} or {@code ${env:NAME:-default}}):
 * picocli takes the empty value as given, and "" is no int, no long, no boolean. A value given on
 * the command line is no default: an explicit {@code --port ''} is still a usage error.
 */
final class EnvironmentDefaults implements IDefaultValueProvider {
    private static final Pattern FROM_ENVIRONMENT = Pattern.compile("\\$\\{env:(\\w+)(?::-(.*))?}");
    private final Function<String, String> environment;

    /** @param environment a variable's value by name, null when unset (System::getenv) */
    EnvironmentDefaults(Function<String, String> environment) {
        this.environment = environment;
    }

    @Override
    public String defaultValue(ArgSpec arg) {
        Matcher fromEnvironment = FROM_ENVIRONMENT.matcher(annotatedDefault(arg));
        if (!fromEnvironment.matches()) {
            return null; // no variable: picocli's own default
        }
        String value = environment.apply(fromEnvironment.group(1));
        if (value != null && !value.isBlank()) {
            return null; // set: picocli reads it, as the annotation says
        }
        String fallback = fromEnvironment.group(2);
        return fallback != null ? fallback : Option.NULL_VALUE; // NULL_VALUE: no default, the field stays unset
    }

    /** The BLACKPIPE_* variable {@code arg}'s default reads, or null when it reads none. */
    static String variableOf(ArgSpec arg) {
        Matcher fromEnvironment = FROM_ENVIRONMENT.matcher(annotatedDefault(arg));
        return fromEnvironment.matches() ? fromEnvironment.group(1) : null;
    }

    /** The default as written on the option's field, before picocli resolves its variable; "" when none. */
    private static String annotatedDefault(ArgSpec arg) {
        if (arg.userObject() instanceof Field field && field.isAnnotationPresent(Option.class)) {
            return field.getAnnotation(Option.class).defaultValue();
        }
        return "";
    }
}
