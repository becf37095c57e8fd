package io.blackpipe.topology;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What the upstream URI's options say together, checked as drivers check them: options the URI
 * Options spec says conflict, and a replicaSet that names no set.
 */
final class UpstreamUriOptions {
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

    private static String key(String name) {
        return name.toLowerCase(Locale.ROOT);
    }
}
