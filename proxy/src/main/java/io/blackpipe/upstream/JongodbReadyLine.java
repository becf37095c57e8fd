package io.blackpipe.upstream;

import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one line jongodb prints on stdout once it listens, e.g.
 * {@code JONGODB_URI=mongodb://127.0.0.1:40123/test?replicaSet=jongodb-rs0}. We take host, port
 * and set name from it (rather than from what we asked for) because we start jongodb on port 0
 * and only this line tells which port it got.
 */
public record JongodbReadyLine(String host, int port, String replicaSet) {
    public static final String PREFIX = "JONGODB_URI=";

    private static final Pattern URI = Pattern.compile(
            "mongodb://(?<host>[^:/?,]+):(?<port>\\d{1,5})(?:/[^?]*)?(?:\\?(?<query>.*))?");

    /** Whether {@code line} is the ready line at all (it may still be malformed). */
    public static boolean isReadyLine(String line) {
        return line.startsWith(PREFIX);
    }

    /** Parses the ready line; empty if the line is not one, or names no usable host and port. */
    public static Optional<JongodbReadyLine> parse(String line) {
        if (line == null || !isReadyLine(line.strip())) {
            return Optional.empty();
        }
        Matcher m = URI.matcher(line.strip().substring(PREFIX.length()));
        if (!m.matches()) {
            return Optional.empty();
        }
        int port = Integer.parseInt(m.group("port"));
        if (port < 1 || port > 65_535) {
            return Optional.empty();
        }
        return Optional.of(new JongodbReadyLine(m.group("host"), port, queryParameter(m.group("query"), "replicaSet")));
    }

    /** mongodb://host:port/ plus ?replicaSet=NAME when jongodb runs as a replica set. */
    public String uri() {
        String base = "mongodb://" + host + ":" + port + "/";
        return replicaSet == null ? base : base + "?replicaSet=" + replicaSet;
    }

    private static String queryParameter(String query, String name) {
        if (query == null) {
            return null;
        }
        for (String pair : query.split("&")) {
            int eq = pair.indexOf('=');
            if (eq > 0 && pair.substring(0, eq).equals(name) && eq < pair.length() - 1) {
                return pair.substring(eq + 1);
            }
        }
        return null;
    }
}
