package io.blackpipe.topology;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Reads a mongodb:// (or mongodb+srv://) connection string into an {@link UpstreamUri}, with messages that never show its
 * password, whatever the URI's shape. Where a password holds an unescaped '/', '?' or '@', the URI no
 * longer says where it ends: everything between the first ':' after the scheme and the last '@' may be
 * password then, and no message shows any of it, whole or in part (a host, a database, an option).
 */
final class UpstreamUriParser {
    static final String SCHEME = "mongodb://";
    private static final String MASK = "****";
    /** Options whose values are secrets, masked like the user info's password. */
    /** Options whose values may be secrets: a key file's password; an AWS session token among the mechanism's properties. */
    private static final Pattern SECRET_OPTIONS = Pattern.compile("(?i)([?&](?:tlsCertificateKeyFilePassword|authMechanismProperties)=)[^&]*");
    private static final String ESCAPE_HINT = "percent-encode '/', '?', '@' and ':' in a user name or password (%2F, %3F, %40, %3A)";
    /** Why loadBalanced=true is refused, and what to give instead: for the URI's option and a TXT record's alike. */
    static final String NO_LOAD_BALANCED_MODE = "blackpipe has no load-balanced mode (it proxies the members of a replica set,"
            + " or mongos routers, each at the address its hello gives, and rewrites those hellos; a load balancer hides the"
            + " servers behind it, and its protocol (serviceId, connections pinned to a mongos) is not proxied); give the"
            + " address of a mongos, or of the replica set's members, instead: a mongodb:// URI without loadBalanced";

    private final String text;
    /** A mongodb+srv:// URI, resolved through {@link #dns} once everything it says itself is checked. */
    private final boolean srv;
    private final DnsRecords dns;
    /** Where the password may lie, [secretStart, secretEnd); empty when there can be none. */
    private final int secretStart;
    private final int secretEnd;
    /** The raw spans of the options' values that may hold password, to keep them out of later messages. */
    private final List<String> secretValues = new ArrayList<>();
    /** Every tls= and ssl= as written, repeats included: they must all say the same. */
    private final List<String> tlsSwitches = new ArrayList<>();
    /** The options' names as written (the first spelling of each), by lowercased name; masked where they may be password. */
    private final Map<String, String> optionNames = new LinkedHashMap<>();

    private UpstreamUriParser(String text, DnsRecords dns) {
        this.text = text;
        this.srv = text.startsWith(SrvSeedlist.SCHEME);
        this.dns = dns;
        int[] secret = secret(text);
        this.secretStart = secret[0];
        this.secretEnd = secret[1];
    }

    /** {@code text} as messages may show it: the password, and any option that is a secret, masked. */
    static String masked(String text) {
        int[] secret = secret(text);
        String shown = secret[0] == secret[1] ? text : text.substring(0, secret[0]) + MASK + text.substring(secret[1]);
        return SECRET_OPTIONS.matcher(shown).replaceAll("$1" + MASK);
    }

    /**
     * Whether {@link #masked}{@code (text)} shows the option {@code key} (lowercased) with {@code value}:
     * false when that value lies where the password may, and so is masked.
     */
    static boolean showsOption(String text, String key, String value) {
        String shown = masked(text);
        int question = shown.indexOf('?');
        if (question < 0 || value == null) {
            return false;
        }
        for (String pair : shown.substring(question + 1).split("&")) {
            int eq = pair.indexOf('=');
            if (eq > 0 && pair.substring(0, eq).toLowerCase(Locale.ROOT).equals(key)) {
                try {
                    if (URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8).equals(value)) {
                        return true;
                    }
                } catch (IllegalArgumentException e) { // a malformed escape: not this option as parsed
                    continue;
                }
            }
        }
        return false;
    }

    /**
     * Where the password may lie: after the first ':' past the scheme, up to the last '@'; an empty
     * span when there is no such ':'. The widest reading, so it covers every way a malformed URI may be
     * meant (a well-formed one with an '@' in an option value is masked up to there too: no harm).
     */
    private static int[] secret(String text) {
        int scheme = text.indexOf("://");
        int colon = text.indexOf(':', scheme >= 0 ? scheme + 3 : 0);
        int at = text.lastIndexOf('@');
        return colon >= 0 && colon < at ? new int[] {colon + 1, at} : new int[] {0, 0};
    }

    /**
     * @throws IllegalArgumentException naming what is wrong, without the password
     * @throws SeedlistException when a mongodb+srv:// host's DNS records give no seed list to use
     */
    static UpstreamUri parse(String text, DnsRecords dns) {
        return new UpstreamUriParser(text, dns).parse();
    }

    private UpstreamUri parse() {
        int start = (srv ? SrvSeedlist.SCHEME : SCHEME).length();
        int hostsEnd = hostsEnd(start);
        int question = text.indexOf('?', start);
        String username = null;
        String password = null;
        int hostsStart = start;
        int at = text.lastIndexOf('@', hostsEnd - 1);
        if (at >= start) {
            int colon = text.indexOf(':', start);
            boolean hasPassword = colon >= 0 && colon < at;
            username = decodeUserInfo(start, hasPassword ? colon : at, "user name");
            password = hasPassword ? decodeUserInfo(colon + 1, at, "password") : null;
            hostsStart = at + 1;
        }
        List<MemberAddress> seeds = new ArrayList<>();
        String srvHost = srv ? srvHost(hostsStart, hostsEnd) : null;
        for (int from = hostsStart, comma; !srv && from <= hostsEnd; from = comma + 1) { // a trailing comma is an empty host too
            comma = text.indexOf(',', from);
            comma = comma < 0 || comma > hostsEnd ? hostsEnd : comma;
            seeds.add(seed(from, comma));
        }
        String database = null;
        if (hostsEnd < text.length() && text.charAt(hostsEnd) == '/') {
            database = database(hostsEnd + 1, question >= 0 ? question : text.length());
        }
        Map<String, String> options = question >= 0 ? options(question + 1) : new LinkedHashMap<>();
        checkLoadBalanced(options);
        checkDirectConnection(options, seeds.size());
        SrvSeedlist.checkOptions(options, srv);
        UpstreamUri parsed = new UpstreamUri(text, List.copyOf(seeds), username, password, database,
                Collections.unmodifiableMap(options), srvHost, Set.of(), Collections.unmodifiableMap(optionNames));
        try { // what a driver would refuse stops the start here: options that conflict, an empty replicaSet or authSource,
            // an authMechanism that is none, tls=maybe
            UpstreamUriOptions.check(options, tlsSwitches);
            parsed.credential();
            parsed.tls();
        } catch (IllegalArgumentException e) {
            String message = withoutSecretValues(e.getMessage());
            throw message.equals(e.getMessage()) ? e : new IllegalArgumentException(message); // no cause: it quotes what this masks
        }
        if (srv) { // every check of the URI as given is behind us: only now is DNS asked
            SrvSeedlist.Resolved resolved = SrvSeedlist.resolve(srvHost, options, dns);
            parsed = new UpstreamUri(text, List.copyOf(resolved.seeds()), username, password, database,
                    Collections.unmodifiableMap(resolved.options()), srvHost, resolved.txtOptions(),
                    Collections.unmodifiableMap(optionNames));
        }
        return parsed;
    }

    /**
     * Refuses loadBalanced=true (see {@link #NO_LOAD_BALANCED_MODE}); loadBalanced=false is what blackpipe
     * does anyway.
     */
    private static void checkLoadBalanced(Map<String, String> options) {
        if (Boolean.TRUE.equals(flag(options, "loadBalanced"))) {
            throw new IllegalArgumentException("the upstream URI option loadBalanced=true is not supported: " + NO_LOAD_BALANCED_MODE);
        }
    }

    /**
     * directConnection=true names one server, as drivers require: with several hosts it is refused
     * rather than all but the first answering one left out unsaid.
     */
    private static void checkDirectConnection(Map<String, String> options, int hosts) {
        if (Boolean.TRUE.equals(flag(options, "directConnection")) && hosts > 1) {
            throw new IllegalArgumentException("the upstream URI option directConnection=true takes one host, the URI names "
                    + hosts + ": name the one member to proxy, or leave directConnection out to proxy the whole deployment");
        }
    }

    /**
     * A true/false option, either case; null when absent. Any other value is refused: the Java
     * driver reads "yes" or "1" as true and anything else as false, with only a logged warning.
     */
    private static Boolean flag(Map<String, String> options, String name) {
        String value = options.get(name.toLowerCase(Locale.ROOT));
        if (value == null) {
            return null;
        }
        if (value.equalsIgnoreCase("true") || value.equalsIgnoreCase("false")) {
            return value.equalsIgnoreCase("true");
        }
        throw new IllegalArgumentException("the upstream URI option " + name + "=" + value + " must be true or false");
    }

    /** Where the host list ends: at the first '/' or '?' (an option value may itself contain '/'). */
    private int hostsEnd(int start) {
        for (int i = start; i < text.length(); i++) {
            if (text.charAt(i) == '/' || text.charAt(i) == '?') {
                return i;
            }
        }
        return text.length();
    }

    private MemberAddress seed(int from, int to) {
        if (text.substring(from, to).isBlank()) {
            throw new IllegalArgumentException("the upstream URI '" + masked(text) + "' has an empty host");
        }
        String host = decode(from, to, "host");
        try {
            return MemberAddress.parse(host);
        } catch (IllegalArgumentException e) {
            if (mayHoldSecret(from, to)) { // the user info's end was misread: the "host" is part of it (no cause: it quotes it)
                throw new IllegalArgumentException("the upstream URI '" + masked(text) + "' has an invalid host '"
                        + shown(from, to) + "': " + ESCAPE_HINT);
            }
            throw new IllegalArgumentException("the upstream URI has an invalid host " + e.getMessage(), e);
        }
    }

    private String srvHost(int from, int to) {
        if (mayHoldSecret(from, to)) { // the user info's end was misread: the "host" (or its "port") is part of it
            throw new IllegalArgumentException("the upstream URI '" + masked(text) + "' has an invalid host '"
                    + shown(from, to) + "': " + ESCAPE_HINT);
        }
        return SrvSeedlist.host(text.substring(from, to), masked(text));
    }

    private String database(int from, int to) {
        if (text.substring(from, to).indexOf('@') >= 0) { // what drivers would take for a database is user info
            throw new IllegalArgumentException("the upstream URI '" + masked(text) + "' has an '@' after its host list: "
                    + ESCAPE_HINT);
        }
        String database = decode(from, to, "database");
        if (database.contains("/")) {
            throw new IllegalArgumentException("the upstream URI's database '" + shown(from, to) + "' contains '/'");
        }
        return database.isEmpty() ? null : database;
    }

    private Map<String, String> options(int start) {
        Map<String, String> options = new LinkedHashMap<>();
        for (int from = start, amp; from <= text.length(); from = amp + 1) {
            amp = text.indexOf('&', from);
            amp = amp < 0 ? text.length() : amp;
            if (from == amp) {
                continue;
            }
            int eq = text.indexOf('=', from);
            if (eq < 0 || eq >= amp || eq == from) {
                throw new IllegalArgumentException("the upstream URI option '" + shown(from, amp) + "' is not name=value"
                        + (mayHoldSecret(from, amp) ? ": " + ESCAPE_HINT : ""));
            }
            String name = text.substring(from, eq).toLowerCase(Locale.ROOT);
            String value = decode(eq + 1, amp, "option " + shown(from, eq));
            if (mayHoldSecret(eq + 1, amp)) {
                secretValues.add(value);
                secretValues.add(text.substring(eq + 1, amp));
            }
            optionNames.putIfAbsent(name, shown(from, eq));
            if (name.equals("tls") || name.equals("ssl")) {
                tlsSwitches.add(text.substring(from, eq) + "=" + value);
            }
            options.put(name, value);
        }
        return options;
    }

    private String decode(int from, int to, String what) {
        try {
            return URLDecoder.decode(text.substring(from, to), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) { // its message quotes the text: not passed on
            throw new IllegalArgumentException("the upstream URI '" + masked(text) + "' has a malformed %-escape in its "
                    + what + " '" + shown(from, to) + "'" + (mayHoldSecret(from, to) ? ": " + ESCAPE_HINT : ""));
        }
    }

    /** User name and password are only percent-decoded, '+' stays a plus, as the Java driver reads them. */
    private String decodeUserInfo(int from, int to, String what) {
        try {
            return URLDecoder.decode(text.substring(from, to).replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("the upstream URI '" + masked(text) + "' has a malformed %-escape in its "
                    + what + (what.equals("password") ? "" : " '" + shown(from, to) + "'") + ": write a '%' as %25");
        }
    }

    private boolean mayHoldSecret(int from, int to) {
        return from < secretEnd && to > secretStart;
    }

    /** text[from, to) with what may be password in it masked. */
    private String shown(int from, int to) {
        if (!mayHoldSecret(from, to)) {
            return text.substring(from, to);
        }
        return text.substring(from, Math.max(from, secretStart)) + MASK + text.substring(Math.min(to, secretEnd), to);
    }

    /** A message about the options with every value that may hold password masked. */
    private String withoutSecretValues(String message) {
        String shown = message;
        for (String value : secretValues) {
            if (!value.isEmpty()) {
                shown = shown.replace(value, MASK);
            }
        }
        return shown;
    }
}
