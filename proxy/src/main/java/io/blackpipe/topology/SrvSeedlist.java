package io.blackpipe.topology;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import javax.naming.NameNotFoundException;
import javax.naming.NamingException;

/**
 * What a mongodb+srv:// URI stands for, as MongoDB's Initial DNS Seedlist Discovery spec says:
 * the SRV records of its one host name give the seeds, each of which must lie in that host's
 * domain; its TXT record, if it has one, gives defaults for authSource, replicaSet and
 * loadBalanced, under the URI's own options; TLS is on unless the URI says tls=false.
 * What the URI gets wrong is an {@link IllegalArgumentException}, found before any lookup; what
 * DNS answers wrong is a {@link SeedlistException}.
 */
final class SrvSeedlist {
    static final String SCHEME = "mongodb+srv://";

    /** The options a TXT record may set: lowercased (as UpstreamUri keys them) to as written. */
    private static final Map<String, String> TXT_OPTIONS =
            Map.of("authsource", "authSource", "replicaset", "replicaSet", "loadbalanced", "loadBalanced");

    /** RFC 6335's service names (letters, digits, single inner hyphens), longer than 15 as the spec allows. */
    private static final Pattern SERVICE_NAME = Pattern.compile("[A-Za-z0-9]+(-[A-Za-z0-9]+)*");
    /** A DNS label holds 63 bytes, and the service name gets a leading underscore. */
    private static final int SERVICE_NAME_MAX = 62;

    private SrvSeedlist() {
    }

    /**
     * The seeds from the SRV records, and the URI's options over the TXT record's, TLS on by default;
     * {@code txtOptions} names those the TXT record gave (the URI did not set them).
     */
    record Resolved(List<MemberAddress> seeds, Map<String, String> options, Set<String> txtOptions) {
    }

    /**
     * The one host name of a mongodb+srv:// URI's authority (the user info already cut off),
     * lowercased, without a trailing dot.
     *
     * @param shownUri the URI with its password masked, for messages
     * @throws IllegalArgumentException for two hosts or more, a port, an address in brackets, an empty label
     */
    static String host(String authority, String shownUri) {
        String[] hosts = authority.split(",", -1);
        if (hosts.length > 1) {
            throw new IllegalArgumentException("the upstream URI '" + shownUri + "' names " + hosts.length
                    + " hosts; a mongodb+srv:// URI names one host, whose SRV records list the members");
        }
        String host;
        try {
            host = URLDecoder.decode(authority, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) { // its own message names neither the URI nor the host
            throw new IllegalArgumentException("the upstream URI '" + shownUri + "' has a malformed %-escape in its host '"
                    + authority + "'");
        }
        if (host.isBlank()) {
            throw new IllegalArgumentException("the upstream URI '" + shownUri + "' has an empty host");
        }
        if (host.startsWith("[")) {
            throw new IllegalArgumentException("the upstream URI '" + shownUri + "' names the address " + host
                    + "; a mongodb+srv:// URI names a DNS host name, whose SRV records list the members");
        }
        int colon = host.indexOf(':');
        if (colon >= 0) {
            throw new IllegalArgumentException("the upstream URI '" + shownUri + "' gives the port " + host.substring(colon + 1)
                    + "; a mongodb+srv:// URI takes no port: the SRV records give each member's");
        }
        String name = (host.endsWith(".") ? host.substring(0, host.length() - 1) : host).toLowerCase(Locale.ROOT);
        for (String label : name.split("\\.", -1)) {
            if (label.isEmpty()) {
                throw new IllegalArgumentException("the upstream URI '" + shownUri + "' has an empty label in its host name '" + host + "'");
            }
        }
        return name;
    }

    /**
     * Checks, before any lookup, the options only a mongodb+srv:// URI may carry (srvServiceName,
     * srvMaxHosts) and those it may not (directConnection=true).
     *
     * @throws IllegalArgumentException naming the option
     */
    static void checkOptions(Map<String, String> options, boolean srv) {
        if (!srv) {
            for (String name : List.of("srvServiceName", "srvMaxHosts")) {
                if (options.containsKey(name.toLowerCase(Locale.ROOT))) {
                    throw new IllegalArgumentException("the upstream URI option " + name + " is for mongodb+srv:// URIs only");
                }
            }
            return;
        }
        if ("true".equalsIgnoreCase(options.get("directconnection"))) {
            throw new IllegalArgumentException("the upstream URI option directConnection=true does not go with mongodb+srv://:"
                    + " its SRV records name the members of a deployment, not one server");
        }
        serviceName(options);
        String conflict = maxHostsConflict(options);
        if (conflict != null) {
            throw new IllegalArgumentException("the upstream URI option " + conflict);
        }
    }

    /**
     * Looks up the SRV records of {@code _<srvServiceName>._tcp.<host>} and the TXT record of
     * {@code host}, both before anything is dialled.
     *
     * @throws SeedlistException naming what DNS answered wrong, or failed to answer
     */
    static Resolved resolve(String host, Map<String, String> uriOptions, DnsRecords dns) {
        List<MemberAddress> seeds = seeds("_" + serviceName(uriOptions) + "._tcp." + host, host, dns);
        int maxHosts = maxHosts(uriOptions);
        if (maxHosts > 0 && maxHosts < seeds.size()) {
            Collections.shuffle(seeds, ThreadLocalRandom.current()); // the spec's random pick: a Fisher-Yates shuffle
            seeds = new ArrayList<>(seeds.subList(0, maxHosts));
        }
        Map<String, String> options = new LinkedHashMap<>(uriOptions);
        Map<String, String> txt = txtOptions(host, dns);
        txt.forEach(options::putIfAbsent); // the URI's own options win
        Set<String> fromTxt = new HashSet<>(txt.keySet());
        fromTxt.removeAll(uriOptions.keySet());
        if (!options.containsKey("tls") && !options.containsKey("ssl")) {
            options.put("tls", "true");
        }
        if ("true".equalsIgnoreCase(options.get("loadbalanced"))) { // the URI's own loadBalanced=true was refused before
            throw new SeedlistException("the TXT record of " + host + " sets loadBalanced=true, so the deployment is load-balanced"
                    + " (an Atlas serverless instance, or mongos behind a load balancer): " + UpstreamUriParser.NO_LOAD_BALANCED_MODE);
        }
        String conflict = maxHostsConflict(options); // the URI's own conflicts were refused before the lookups
        if (conflict != null) {
            throw new SeedlistException("the upstream URI option " + conflict + ", which the TXT record of " + host + " sets");
        }
        return new Resolved(List.copyOf(seeds), Collections.unmodifiableMap(options), Set.copyOf(fromTxt));
    }

    private static List<MemberAddress> seeds(String srvName, String host, DnsRecords dns) {
        List<String> records;
        try {
            records = dns.lookup(srvName, "SRV");
        } catch (NameNotFoundException e) {
            throw new SeedlistException("no SRV records for " + srvName + ": the name does not exist (" + DnsRecords.describe(e) + ")");
        } catch (NamingException e) {
            throw new SeedlistException("cannot look up the SRV records of " + srvName + ": " + DnsRecords.describe(e));
        }
        if (records.isEmpty()) {
            throw new SeedlistException("no SRV records for " + srvName + ": the name exists but has none");
        }
        // Three labels or more: a target must lie in the host's parent domain; fewer: below the host itself.
        String domain = host.split("\\.").length >= 3 ? host.substring(host.indexOf('.') + 1) : host;
        List<MemberAddress> seeds = new ArrayList<>();
        for (String record : records) {
            MemberAddress target = srvTarget(record, srvName);
            if (!target.host().endsWith("." + domain)) {
                throw new SeedlistException("the SRV record of " + srvName + " points to " + target + ", not a name under " + domain
                        + (domain.equals(host) ? " (" + host + " has fewer than three labels: its targets must lie below it)"
                        : " (the parent domain of " + host + ", where every target must lie)"));
            }
            seeds.add(target);
        }
        return seeds;
    }

    /** "priority weight port target." as JNDI prints an SRV record; priority and weight are ignored, as the spec says. */
    private static MemberAddress srvTarget(String record, String srvName) {
        String[] fields = record.trim().split("\\s+");
        try {
            if (fields.length == 4) {
                String target = fields[3].endsWith(".") ? fields[3].substring(0, fields[3].length() - 1) : fields[3];
                return new MemberAddress(target, Integer.parseInt(fields[2]));
            }
        } catch (IllegalArgumentException e) { // a port that is no number, or out of range, or an empty target
            // reported below
        }
        throw new SeedlistException("the SRV record '" + record + "' of " + srvName + " is not 'priority weight port target'");
    }

    /** The options of {@code host}'s TXT record, lowercased names to decoded values; none when it has no TXT record. */
    private static Map<String, String> txtOptions(String host, DnsRecords dns) {
        List<String> records;
        try {
            records = dns.lookup(host, "TXT");
        } catch (NameNotFoundException e) {
            return Map.of();
        } catch (NamingException e) {
            throw new SeedlistException("cannot look up the TXT record of " + host + ": " + DnsRecords.describe(e));
        }
        if (records.size() > 1) {
            throw new SeedlistException(records.size() + " TXT records for " + host + " ("
                    + records.stream().map(r -> "'" + joinStrings(r) + "'").collect(Collectors.joining(", "))
                    + "); a mongodb+srv:// host may have one at most");
        }
        Map<String, String> options = new LinkedHashMap<>();
        String text = records.isEmpty() ? "" : joinStrings(records.get(0));
        for (String pair : text.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            if (eq <= 0 || eq == pair.length() - 1) {
                throw new SeedlistException("the TXT record of " + host + " is not name=value&...: '" + text + "'");
            }
            String name = pair.substring(0, eq).toLowerCase(Locale.ROOT);
            if (!TXT_OPTIONS.containsKey(name)) {
                throw new SeedlistException("the TXT record of " + host + " sets " + pair.substring(0, eq)
                        + "; only authSource, replicaSet and loadBalanced may come from it");
            }
            String value;
            try {
                value = URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
            } catch (IllegalArgumentException e) { // what DNS answered, not the URI: a failed start, not a usage error
                throw new SeedlistException("the TXT record of " + host + " has a malformed %-escape in "
                        + pair.substring(0, eq) + ": '" + text + "'");
            }
            if (name.equals("loadbalanced") && !value.equals("true") && !value.equals("false")) {
                throw new SeedlistException("the TXT record of " + host + " sets loadBalanced=" + value + "; it must be true or false");
            }
            options.put(name, value);
        }
        return options;
    }

    /**
     * One TXT record's character-strings joined into one string, as the spec wants them read.
     * JNDI separates them with spaces and quotes those that hold a space or are empty.
     */
    static String joinStrings(String jndiText) {
        StringBuilder joined = new StringBuilder();
        boolean quoted = false;
        for (char c : jndiText.toCharArray()) {
            if (c == '"') {
                quoted = !quoted;
            } else if (c != ' ' || quoted) {
                joined.append(c);
            }
        }
        return joined.toString();
    }

    /** srvServiceName, "mongodb" by default. */
    private static String serviceName(Map<String, String> options) {
        String name = options.getOrDefault("srvservicename", "mongodb");
        if (name.length() > SERVICE_NAME_MAX || !SERVICE_NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("the upstream URI option srvServiceName=" + name
                    + " is no SRV service name (letters, digits and inner hyphens, at most " + SERVICE_NAME_MAX + ")");
        }
        return name;
    }

    /** srvMaxHosts, 0 (no limit) by default. */
    private static int maxHosts(Map<String, String> options) {
        String value = options.getOrDefault("srvmaxhosts", "0");
        try {
            int max = Integer.parseInt(value);
            if (max >= 0) {
                return max;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException("the upstream URI option srvMaxHosts=" + value + " must be a whole number, 0 or more");
    }

    /**
     * What srvMaxHosts conflicts with, as the spec says (a picked subset cannot be a whole set), or null.
     * The spec's other conflict, loadBalanced=true, never gets here: blackpipe refuses that option first.
     */
    private static String maxHostsConflict(Map<String, String> options) {
        int maxHosts = maxHosts(options);
        if (maxHosts > 0 && options.containsKey("replicaset")) {
            return "srvMaxHosts=" + maxHosts + " does not go with replicaSet=" + options.get("replicaset");
        }
        return null;
    }
}
