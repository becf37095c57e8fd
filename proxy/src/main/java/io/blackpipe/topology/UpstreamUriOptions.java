package io.blackpipe.topology;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * What the upstream URI's options say together, checked as drivers check them: options the URI
 * Options spec says conflict, and a replicaSet that names no set; and which options blackpipe uses,
 * passes by, or does not know at all.
 */
final class UpstreamUriOptions {
    /** The options blackpipe's own connections to the deployment (discovery, role probes, proxied traffic, failover) use. */
    private static final Set<String> USED = lowercased("replicaSet", "directConnection", "loadBalanced", "tls", "ssl",
            "tlsCAFile", "tlsCertificateKeyFile", "tlsCertificateKeyFilePassword", "tlsAllowInvalidCertificates",
            "tlsAllowInvalidHostnames", "sslInvalidHostNameAllowed", "tlsInsecure", "authSource", "authMechanism", "srvServiceName", "srvMaxHosts");
    /**
     * The rest of the URI Options spec's list, and the Java driver's own options: valid in a driver's
     * connection string, where they shape the application's client, but not used by blackpipe.
     */
    private static final Set<String> PASSED_BY = lowercased("appName", "authMechanismProperties", "compressors",
            "connectTimeoutMS", "heartbeatFrequencyMS", "journal", "localThresholdMS", "maxConnecting", "maxIdleTimeMS",
            "maxPoolSize", "maxStalenessSeconds", "minPoolSize", "proxyHost", "proxyPort", "proxyUsername", "proxyPassword",
            "readConcernLevel", "readPreference", "readPreferenceTags", "retryReads", "retryWrites", "serverMonitoringMode",
            "serverSelectionTimeoutMS", "serverSelectionTryOnce", "socketTimeoutMS", "timeoutMS",
            "tlsDisableCertificateRevocationCheck", "tlsDisableOCSPEndpointCheck", "w", "waitQueueTimeoutMS", "wTimeoutMS",
            "zlibCompressionLevel",
            // the Java driver's, beyond the spec's
            "enableOverloadRetargeting", "gssapiServiceName", "maxAdaptiveRetries", "maxLifeTimeMS", "safe", "srvAllowedHostsSuffix",
            "uuidRepresentation");
    /**
     * Pairs the URI Options spec forbids together, whatever their values (they relax certificate
     * checks in overlapping ways); the Java driver adds its alias sslInvalidHostNameAllowed.
     */
    private static final List<List<String>> CONFLICTING = List.of(
            List.of("tlsInsecure", "tlsAllowInvalidCertificates"),
            List.of("tlsInsecure", "tlsAllowInvalidHostnames"),
            List.of("tlsInsecure", "sslInvalidHostNameAllowed"),
            List.of("tlsInsecure", "tlsDisableOCSPEndpointCheck"),
            List.of("tlsInsecure", "tlsDisableCertificateRevocationCheck"),
            List.of("tlsAllowInvalidCertificates", "tlsDisableOCSPEndpointCheck"),
            List.of("tlsAllowInvalidCertificates", "tlsDisableCertificateRevocationCheck"),
            List.of("tlsDisableOCSPEndpointCheck", "tlsDisableCertificateRevocationCheck"));

    private UpstreamUriOptions() {
    }

    /**
     * @param options     the URI's options, names lowercased (a repeated name keeps its last value)
     * @param tlsSwitches every tls= and ssl= of the URI in order, as written ("ssl=false"), repeats included
     * @throws IllegalArgumentException naming the options that conflict, or the empty replicaSet
     */
    static void check(Map<String, String> options, List<String> tlsSwitches) {
        checkTlsSwitches(tlsSwitches);
        for (List<String> pair : CONFLICTING) {
            if (options.containsKey(key(pair.get(0))) && options.containsKey(key(pair.get(1)))) {
                throw new IllegalArgumentException("the upstream URI sets both " + pair.get(0) + " and " + pair.get(1)
                        + ", which conflict whatever their values (drivers refuse them together, as the URI Options spec"
                        + " says): give one of them");
            }
        }
        String replicaSet = options.get("replicaset");
        if (replicaSet != null && replicaSet.isEmpty()) {
            throw new IllegalArgumentException("the upstream URI's replicaSet= is empty: name the replica set the seeds must"
                    + " belong to, or leave replicaSet out to proxy whatever they report");
        }
    }

    /** ssl is another name for tls: every instance of either must say the same, or drivers refuse the URI. */
    private static void checkTlsSwitches(List<String> switches) {
        String first = null;
        for (String option : switches) {
            int eq = option.indexOf('=');
            String value = option.substring(eq + 1);
            if (!value.equalsIgnoreCase("true") && !value.equalsIgnoreCase("false")) {
                throw new IllegalArgumentException("the upstream URI option " + option + " must be true or false");
            }
            if (first == null) {
                first = option;
            } else if (!first.substring(first.indexOf('=') + 1).equalsIgnoreCase(value)) {
                throw new IllegalArgumentException("the upstream URI options " + first + " and " + option + " conflict"
                        + " (ssl is another name for tls, and drivers refuse a URI whose tls and ssl differ): give one value");
            }
        }
    }

    /** Whether a driver knows the option (its name lowercased). */
    static boolean known(String name) {
        return USED.contains(name) || PASSED_BY.contains(name);
    }

    /** @param names the URI's option names as written, by lowercased name */
    static List<String> unknownWarnings(Map<String, String> names) {
        List<String> warnings = new ArrayList<>();
        names.forEach((key, written) -> {
            if (!known(key)) {
                warnings.add("the upstream URI option " + written + " is no MongoDB connection string option (misspelt?"
                        + " names are case-insensitive): ignored");
            }
        });
        return warnings;
    }

    /** @param names the URI's option names as written, by lowercased name */
    static String passedByNote(Map<String, String> names) {
        List<String> passed = new ArrayList<>();
        names.forEach((key, written) -> {
            if (PASSED_BY.contains(key)) {
                passed.add(written);
            }
        });
        return passed.isEmpty() ? null : "the upstream URI option" + (passed.size() == 1 ? " " : "s ") + String.join(", ", passed)
                + " shape" + (passed.size() == 1 ? "s" : "") + " a driver's client, not blackpipe's connections to the"
                + " deployment: give " + (passed.size() == 1 ? "it" : "them") + " in the application's connection string";
    }

    private static Set<String> lowercased(String... names) {
        Set<String> set = new HashSet<>();
        for (String name : names) {
            set.add(key(name));
        }
        return Set.copyOf(set);
    }

    private static String key(String name) {
        return name.toLowerCase(Locale.ROOT);
    }
}
