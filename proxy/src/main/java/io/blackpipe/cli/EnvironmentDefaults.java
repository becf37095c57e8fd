package io.blackpipe.cli;

import io.blackpipe.topology.HostNames;
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
    private static final String ADMIN = "BLACKPIPE_ADMIN";
    private static final int DEFAULT_ADMIN_PORT = 9090;
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
        if (fromEnvironment.group(1).equals(ADMIN)) {
            String whereTheProxyListens = adminWhereItListens(environment);
            if (whereTheProxyListens != null) {
                return whereTheProxyListens;
            }
        }
        String fallback = fromEnvironment.group(2);
        return fallback != null ? fallback : Option.NULL_VALUE; // NULL_VALUE: no default, the field stays unset
    }

    /**
     * With BLACKPIPE_ADMIN unset, the admin address BLACKPIPE_ADMIN_HOST and _PORT give the proxy, a wildcard asked on
     * loopback, as the Docker image's health check asks it: a control command run where the proxy's variables are set
     * (docker compose exec, a CI job's env) went to 127.0.0.1:9090 whatever port they gave. Null when neither is set,
     * or the port is no fixed one ({@link #whyNoAdminWhereItListens} says why).
     */
    static String adminWhereItListens(Function<String, String> environment) {
        String host = environment.apply(ADMIN + "_HOST");
        String port = environment.apply(ADMIN + "_PORT");
        boolean hostSet = host != null && !host.isBlank();
        boolean portSet = port != null && !port.isBlank();
        if (!hostSet && !portSet || portSet && whyNoFixedPort(port.strip()) != null) {
            return null;
        }
        int number = portSet ? Integer.parseInt(port.strip()) : DEFAULT_ADMIN_PORT;
        String dialled = !hostSet ? "127.0.0.1" : HostNames.isWildcard(host.strip())
                ? (HostNames.isIpv6Literal(host.strip()) ? "::1" : "127.0.0.1") : host.strip();
        return "http://" + HostNames.withPort(dialled, number);
    }

    /** Whether --admin's default is where BLACKPIPE_ADMIN_HOST and _PORT put the admin server (BLACKPIPE_ADMIN unset). */
    boolean adminFromListenVariables() {
        String admin = environment.apply(ADMIN);
        return (admin == null || admin.isBlank()) && adminWhereItListens(environment) != null;
    }

    /**
     * Why the admin server BLACKPIPE_ADMIN_PORT describes is none a control command can dial, or null: the port 0 a proxy
     * picks as it starts, the -1 that turns it off, a value that is no port. The default 127.0.0.1:9090 answered such
     * a command with "cannot reach", or with another proxy's state.
     */
    String whyNoAdminWhereItListens() {
        String admin = environment.apply(ADMIN);
        String port = environment.apply(ADMIN + "_PORT");
        if (admin != null && !admin.isBlank() || port == null || port.isBlank()) {
            return null;
        }
        String why = whyNoFixedPort(port.strip());
        return why == null ? null : why + ": give the proxy's admin address with --admin or BLACKPIPE_ADMIN";
    }

    private static String whyNoFixedPort(String port) {
        int number;
        try {
            number = Integer.parseInt(port);
        } catch (NumberFormatException e) {
            return "BLACKPIPE_ADMIN_PORT '" + port + "' is no port";
        }
        if (number == 0) {
            return "BLACKPIPE_ADMIN_PORT is 0, a port the proxy picked as it started";
        }
        if (number == -1) {
            return "BLACKPIPE_ADMIN_PORT is -1, which turns the proxy's admin server off";
        }
        return number < 0 || number > 65535 ? "BLACKPIPE_ADMIN_PORT " + number + " is no port (1-65535)" : null;
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
