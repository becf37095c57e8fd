package io.blackpipe.cli;

import io.blackpipe.admin.AdminToken;
import java.net.URI;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/** Where a running proxy's admin API is, and its token; shared by every command that controls one. */
final class AdminOptions {
    @Option(names = "--admin", paramLabel = "URL", defaultValue = "${env:BLACKPIPE_ADMIN:-http://127.0.0.1:9090}",
            description = "Admin URL of the running proxy (env BLACKPIPE_ADMIN; default ${DEFAULT-VALUE}).")
    String admin;

    @Option(names = "--admin-token", paramLabel = "TOKEN", defaultValue = "${env:BLACKPIPE_ADMIN_TOKEN}",
            description = "Bearer token the proxy was started with (env BLACKPIPE_ADMIN_TOKEN).")
    String token;

    /** The client for --admin; a URL that is not http(s)://host[:port] is a usage error. */
    AdminClient client(CommandSpec spec) {
        return new AdminClient(checkedBaseUrl(spec), token);
    }

    /** --admin as {@link #baseUrl} reads it, once --admin-token is checked too: either one wrong is a usage error. */
    String checkedBaseUrl(CommandSpec spec) {
        String why = AdminToken.whyUnsendable(token);
        if (why != null) { // the header would fail as it is built, quoting the token
            throw new ParameterException(spec.commandLine(), "--admin-token " + why);
        }
        return baseUrl(spec, admin);
    }

    /**
     * An --admin value as a base URL without a trailing slash: http:// is added when no scheme is
     * given (127.0.0.1:9090, localhost:9090). Anything but http(s)://host[:port][/path] is a usage error.
     */
    static String baseUrl(CommandSpec spec, String admin) {
        String text = admin == null ? "" : admin.strip();
        if (!text.contains("://")) {
            text = "http://" + text;
        }
        URI uri;
        try {
            uri = URI.create(text);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "--admin '" + admin + "' is not a URL such as http://127.0.0.1:9090");
        }
        if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) || uri.getHost() == null
                || uri.getQuery() != null || uri.getFragment() != null || uri.getPort() == 0 || uri.getPort() > 65_535) {
            throw new ParameterException(spec.commandLine(), "--admin '" + admin + "' is not a URL such as http://127.0.0.1:9090");
        }
        return text.replaceAll("/+$", "");
    }
}
