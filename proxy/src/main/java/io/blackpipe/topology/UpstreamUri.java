package io.blackpipe.topology;

import io.blackpipe.wire.auth.Credential;
import java.util.List;
import java.util.Map;

/**
 * The parts of a mongodb:// connection string the proxy needs: seeds, credentials, database,
 * options. {@link #toString()} and every error message mask the password.
 *
 * @param database the path's database (the default authSource), or null
 */
public record UpstreamUri(String text, List<MemberAddress> seeds, String username, String password, String database,
                          Map<String, String> options) {

    /** @throws IllegalArgumentException naming what is wrong; no message shows the password (see {@link UpstreamUriParser}) */
    public static UpstreamUri parse(String uri) {
        if (uri == null || uri.isBlank()) {
            throw new IllegalArgumentException("the upstream URI is empty");
        }
        if (uri.startsWith("mongodb+srv://")) {
            throw new IllegalArgumentException("mongodb+srv:// URIs are not supported: list the members as mongodb://host1,host2,...");
        }
        if (!uri.startsWith(UpstreamUriParser.SCHEME)) {
            throw new IllegalArgumentException("the upstream URI must start with mongodb://, got '" + UpstreamUriParser.masked(uri) + "'");
        }
        return UpstreamUriParser.parse(uri);
    }

    /**
     * Who the proxy's own connections authenticate as (only failover's stepdown needs it), or null
     * when the URI has no user and no authMechanism.
     *
     * @throws IllegalArgumentException when authMechanism names no MongoDB mechanism or authSource is empty
     */
    public Credential credential() {
        return Credential.fromUri(username, password, database, options);
    }

    /** The URI with any password masked, for logs and startup output. */
    @Override
    public String toString() {
        return UpstreamUriParser.masked(text);
    }

    /** {@code text}, a URI that may not even parse, with anything that may be its password masked: for messages. */
    public static String masked(String text) {
        return UpstreamUriParser.masked(text);
    }

    public String replicaSet() {
        return options.get("replicaset");
    }

    /** How to reach the members: plaintext, or TLS from the tls/ssl and tls* options. */
    public io.blackpipe.wire.Tls.Client tls() {
        return io.blackpipe.wire.Tls.Client.fromUriOptions(options);
    }

    public boolean directConnection() {
        return "true".equalsIgnoreCase(options.get("directconnection"));
    }
}
