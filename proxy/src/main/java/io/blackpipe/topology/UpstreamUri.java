package io.blackpipe.topology;

import io.blackpipe.wire.auth.Credential;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The parts of a mongodb:// connection string the proxy needs: seeds, credentials, database,
 * options. A mongodb+srv:// one is resolved as it is parsed (see {@link SrvSeedlist}): its seeds
 * are its SRV records' targets and its options include its TXT record's and TLS by default, as
 * if the equivalent mongodb:// URI had been given. {@link #toString()} and every error message
 * mask the password.
 *
 * @param text       the URI as given (for mongodb+srv://, not the resolved one)
 * @param database   the path's database (the default authSource), or null
 * @param srvHost    the host of a mongodb+srv:// URI, whose DNS records were read; null for mongodb://
 * @param txtOptions the options (lowercased names) that came from that host's TXT record, not from the URI
 * @param optionNames the URI's own options as written ("ReadPreference"), by lowercased name; masked where
 *                    they may be password
 */
public record UpstreamUri(String text, List<MemberAddress> seeds, String username, String password, String database,
                          Map<String, String> options, String srvHost, Set<String> txtOptions, Map<String, String> optionNames) {
    /** A mongodb:// or mongodb+srv:// URI inside other text: up to whitespace or a single quote, where one ends in a message. */
    private static final Pattern URI_IN_TEXT = Pattern.compile("mongodb(?:\\+srv)?://[^\\s']+");

    /**
     * @throws IllegalArgumentException naming what is wrong in the URI as given (found before any DNS
     *                                  lookup); no message shows the password (see {@link UpstreamUriParser})
     * @throws SeedlistException when the DNS records of a mongodb+srv:// host give no seed list to use
     */
    public static UpstreamUri parse(String uri) {
        return parse(uri, DnsRecords.SYSTEM);
    }

    /** As {@link #parse(String)}, a mongodb+srv:// host looked up through {@code dns}. */
    static UpstreamUri parse(String uri, DnsRecords dns) {
        if (uri == null || uri.isBlank()) {
            throw new IllegalArgumentException("the upstream URI is empty");
        }
        if (!uri.startsWith(UpstreamUriParser.SCHEME) && !uri.startsWith(SrvSeedlist.SCHEME)) {
            throw new IllegalArgumentException("the upstream URI must start with mongodb:// or mongodb+srv://, got '"
                    + UpstreamUriParser.masked(uri) + "'");
        }
        return UpstreamUriParser.parse(uri, dns);
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

    /**
     * {@code text} (a message, a program's output) with every mongodb:// or mongodb+srv:// URI in it
     * {@link #masked}: text blackpipe shows but did not write may quote a URI with its password.
     */
    public static String maskedWithin(String text) {
        return text == null ? null : URI_IN_TEXT.matcher(text).replaceAll(uri -> Matcher.quoteReplacement(masked(uri.group())));
    }

    /** The replica set the URI requires its members to belong to (replicaSet=), or null for whatever they report. */
    public String replicaSet() {
        return options.get("replicaset");
    }

    /**
     * An option as given, for messages: "replicaSet=rs0", and where it came from when the URI did not
     * say it: "replicaSet=rs0, from the TXT record of cluster0.example.com".
     */
    public String describeOption(String name) {
        String key = name.toLowerCase(Locale.ROOT);
        if (txtOptions.contains(key)) {
            return name + "=" + options.get(key) + ", from the TXT record of " + srvHost;
        }
        // a value that lies where the password may (an '@' after it) is not quoted, as toString() does not
        return name + "=" + (UpstreamUriParser.showsOption(text, key, options.get(key)) ? options.get(key) : "****");
    }

    /**
     * One warning per option of the URI that no MongoDB connection string has ("replSet"), as drivers
     * warn of them: it is ignored, and whatever it was meant to say goes unchecked.
     */
    public List<String> unknownOptionWarnings() {
        return UpstreamUriOptions.unknownWarnings(optionNames);
    }

    /**
     * What to say of the URI's options that are valid for drivers but that blackpipe passes by
     * (readPreference, w, retryWrites, ...), or null when there are none.
     */
    public String passedByOptionsNote() {
        return UpstreamUriOptions.passedByNote(optionNames);
    }

    /** How to reach the members: plaintext, or TLS from the tls/ssl and tls* options. */
    public io.blackpipe.wire.Tls.Client tls() {
        return io.blackpipe.wire.Tls.Client.fromUriOptions(options);
    }

    public boolean directConnection() {
        return "true".equalsIgnoreCase(options.get("directconnection"));
    }
}
