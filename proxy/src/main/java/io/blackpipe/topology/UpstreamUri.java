package io.blackpipe.topology;

import io.blackpipe.wire.auth.Credential;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The parts of a mongodb:// connection string the proxy needs: seeds, credentials, database,
 * options. {@link #toString()} and every error message mask the password.
 *
 * @param database the path's database (the default authSource), or null
 */
public record UpstreamUri(String text, List<MemberAddress> seeds, String username, String password, String database,
                          Map<String, String> options) {

    public static UpstreamUri parse(String uri) {
        if (uri == null || uri.isBlank()) {
            throw new IllegalArgumentException("the upstream URI is empty");
        }
        if (uri.startsWith("mongodb+srv://")) {
            throw new IllegalArgumentException("mongodb+srv:// URIs are not supported: list the members as mongodb://host1,host2,...");
        }
        if (!uri.startsWith("mongodb://")) {
            throw new IllegalArgumentException("the upstream URI must start with mongodb://, got '" + masked(uri) + "'");
        }
        String rest = uri.substring("mongodb://".length());
        int question = rest.indexOf('?');
        int hostsEnd = hostsEnd(rest);
        String authority = rest.substring(0, hostsEnd);
        String username = null;
        String password = null;
        int at = authority.lastIndexOf('@');
        if (at >= 0) {
            String userInfo = authority.substring(0, at);
            authority = authority.substring(at + 1);
            int colon = userInfo.indexOf(':');
            username = decodeUserInfo(colon >= 0 ? userInfo.substring(0, colon) : userInfo);
            password = colon >= 0 ? decodeUserInfo(userInfo.substring(colon + 1)) : null;
        }
        List<MemberAddress> seeds = new ArrayList<>();
        for (String host : authority.split(",", -1)) { // -1: a trailing comma is an empty host too
            if (host.isBlank()) {
                throw new IllegalArgumentException("the upstream URI '" + masked(uri) + "' has an empty host");
            }
            seeds.add(MemberAddress.parse(decode(host)));
        }
        String database = null;
        if (hostsEnd < rest.length() && rest.charAt(hostsEnd) == '/') {
            String path = decode(rest.substring(hostsEnd + 1, question >= 0 ? question : rest.length()));
            database = path.isEmpty() ? null : path;
        }
        Map<String, String> options = new LinkedHashMap<>();
        if (question >= 0) {
            for (String pair : rest.substring(question + 1).split("&")) {
                if (pair.isEmpty()) {
                    continue;
                }
                int eq = pair.indexOf('=');
                if (eq <= 0) {
                    throw new IllegalArgumentException("the upstream URI option '" + pair + "' is not name=value");
                }
                options.put(pair.substring(0, eq).toLowerCase(Locale.ROOT), decode(pair.substring(eq + 1)));
            }
        }
        UpstreamUri parsed = new UpstreamUri(uri, List.copyOf(seeds), username, password, database,
                Collections.unmodifiableMap(options));
        parsed.credential(); // an authMechanism that is no mechanism, or an empty authSource, stops the start here
        return parsed;
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

    /** Where the host list ends: at the first '/' or '?' (an option value may itself contain '/'). */
    private static int hostsEnd(String rest) {
        int slash = rest.indexOf('/');
        int question = rest.indexOf('?');
        int end = rest.length();
        if (slash >= 0) {
            end = slash;
        }
        if (question >= 0 && question < end) {
            end = question;
        }
        return end;
    }

    private static String decode(String s) {
        return URLDecoder.decode(s, StandardCharsets.UTF_8);
    }

    /** User name and password are only percent-decoded, '+' stays a plus, as the Java driver reads them. */
    private static String decodeUserInfo(String s) {
        return decode(s.replace("+", "%2B"));
    }

    /** The URI with any password masked, for logs and startup output. */
    @Override
    public String toString() {
        return masked(text);
    }

    /** Options whose values are secrets, masked like the user info's password. */
    private static final java.util.regex.Pattern SECRET_OPTIONS =
            java.util.regex.Pattern.compile("(?i)([?&]tlsCertificateKeyFilePassword=)[^&]*");

    /**
     * {@code text} with the password of its user info replaced by ****, by position (it may be
     * URL-escaped), and so is the value of tlsCertificateKeyFilePassword.
     */
    private static String masked(String text) {
        return SECRET_OPTIONS.matcher(maskedUserInfo(text)).replaceAll("$1****");
    }

    private static String maskedUserInfo(String text) {
        int scheme = text.indexOf("://");
        if (scheme < 0) {
            return text;
        }
        String prefix = text.substring(0, scheme + 3);
        String rest = text.substring(prefix.length());
        int at = rest.substring(0, hostsEnd(rest)).lastIndexOf('@');
        int colon = rest.indexOf(':');
        if (at < 0 || colon < 0 || colon > at) {
            return text;
        }
        return prefix + rest.substring(0, colon + 1) + "****" + rest.substring(at);
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
