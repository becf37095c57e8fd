package io.blackpipe.cli;

import io.blackpipe.admin.AdminHttp;
import io.blackpipe.admin.AdminToken;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.ParameterException;

/** Where a running proxy's admin API is, and its token; shared by every command that controls one. */
final class AdminOptions {
    @Option(names = "--admin", paramLabel = "URL", defaultValue = "${env:BLACKPIPE_ADMIN:-http://127.0.0.1:9090}",
            description = "Admin URL of the running proxy (env BLACKPIPE_ADMIN; default http://127.0.0.1:9090, or where BLACKPIPE_ADMIN_HOST and BLACKPIPE_ADMIN_PORT put its admin server when either is set, a wildcard asked on loopback).")
    String admin;

    @Option(names = "--admin-token", paramLabel = "TOKEN", defaultValue = "${env:BLACKPIPE_ADMIN_TOKEN}",
            description = "Bearer token the proxy was started with (env BLACKPIPE_ADMIN_TOKEN).")
    String token;

    /** The client for --admin; a URL that is not http(s)://host[:port] is a usage error. */
    AdminClient client(CommandSpec spec) {
        String base = checkedBaseUrl(spec);
        return new AdminClient(base, token, defaultsFrom(spec) instanceof EnvironmentDefaults defaults && defaults.adminFromListenVariables()
                ? " (BLACKPIPE_ADMIN_HOST and BLACKPIPE_ADMIN_PORT gave that address.)" : "");
    }

    /** --admin as {@link #baseUrl} reads it, once --admin-token is checked too: either one wrong is a usage error. */
    String checkedBaseUrl(CommandSpec spec) {
        String why = AdminToken.whyUnsendable(token);
        if (why != null) { // the header would fail as it is built, quoting the token
            throw new ParameterException(spec.commandLine(), "--admin-token " + why);
        }
        String noAdmin = defaultsFrom(spec) instanceof EnvironmentDefaults defaults ? defaults.whyNoAdminWhereItListens() : null;
        if (noAdmin != null) {
            throw new ParameterException(spec.commandLine(), "--admin: " + noAdmin);
        }
        return baseUrl(spec, admin);
    }

    /** The provider of --admin's default when no --admin was typed, else null. */
    private static Object defaultsFrom(CommandSpec spec) {
        ParseResult parsed = spec.commandLine().getParseResult();
        return parsed != null && parsed.hasMatchedOption("--admin") ? null : spec.commandLine().getDefaultValueProvider();
    }

    /** An --admin value as the admin API's base URL (see {@link AdminHttp#baseUrl}); anything else is a usage error. */
    static String baseUrl(CommandSpec spec, String admin) {
        try {
            return AdminHttp.baseUrl(admin);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "--admin " + e.getMessage());
        }
    }
}
