package io.blackpipe.topology;

import io.netty.util.NetUtil;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Hosts as blackpipe writes them in addresses, connection strings and URLs: an IPv6 literal bracketed beside a port
 * (once: "[::1]" given as a host was written "[[::1]]"), in its short form ("::1", not "0:0:0:0:0:0:0:1", so that one
 * address is spelt one way everywhere), a name in lower case.
 */
public final class HostNames {
    /** Labels of letters, digits, '-' and '_' (compose and Kubernetes service names), dot-separated. */
    private static final Pattern NAME = Pattern.compile("(?=.{1,253}$)[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?"
            + "(\\.[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\\.?");

    private HostNames() {
    }

    /** {@code host} without the brackets an IPv6 literal may come in, the literal in its short form (RFC 5952), a name in lower case. */
    public static String canonical(String host) {
        String bare = host.length() > 2 && host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        int zone = bare.indexOf('%');
        String address = zone < 0 ? bare : bare.substring(0, zone);
        if (address.indexOf(':') < 0 || !NetUtil.isValidIpV6Address(address)) {
            return bare.toLowerCase(Locale.ROOT);
        }
        byte[] bytes = NetUtil.createByteArrayFromIpAddressString(address);
        return shortForm(bytes) + (zone < 0 ? "" : bare.substring(zone));
    }

    /** "host:port", or "[host]:port" for an IPv6 literal. */
    public static String withPort(String host, int port) {
        String canonical = canonical(host);
        return (canonical.indexOf(':') >= 0 ? "[" + canonical + "]" : canonical) + ":" + port;
    }

    /**
     * A peer's socket address as the log, `connections list` and `history` name it: 127.0.0.1:5555, [::1]:5555 (the
     * JDK's own form has a leading slash, which a grep for the address missed).
     */
    public static String ofPeer(SocketAddress address) {
        return address instanceof InetSocketAddress inet && inet.getAddress() != null
                ? withPort(inet.getAddress().getHostAddress(), inet.getPort()) : String.valueOf(address);
    }

    /** Whether {@code host} is a bind address that means every interface (0.0.0.0, ::, [::], 0:0:0:0:0:0:0:0, ::ffff:0.0.0.0). */
    public static boolean isWildcard(String host) {
        String canonical = canonical(host);
        return canonical.equals("0.0.0.0") || canonical.equals("::") || canonical.equals("::ffff:0.0.0.0");
    }

    /** Whether {@code host} is an IPv6 literal (bracketed or not, with a zone, an interface's name or number, or not). */
    public static boolean isIpv6Literal(String host) {
        String bare = host.length() > 2 && host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        int zone = bare.indexOf('%');
        return NetUtil.isValidIpV6Address(zone < 0 ? bare : bare.substring(0, zone))
                && (zone < 0 || bare.substring(zone + 1).matches("[A-Za-z0-9_.-]+"));
    }

    /**
     * Why apps could not dial {@code host} as a host name, or null when they could: an IPv4 or IPv6 literal (bracketed or
     * not) or a DNS name. Its resolving is not asked: a compose service's name resolves only inside its network.
     */
    public static String whyNotAHostName(String host) {
        String bare = host.length() > 2 && host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        int lastColon = host.lastIndexOf(':');
        String beforeLastColon = lastColon > 0 ? host.substring(0, lastColon) : "";
        if (lastColon > 0 && host.substring(lastColon + 1).matches("[0-9]+") && !isIpv6Literal(host)
                && (host.startsWith("[") || beforeLastColon.indexOf(':') < 0 || isIpv6Literal(beforeLastColon))) {
            return "gives a port: give the host alone (each listener's port goes with it)";
        }
        if (host.startsWith("[") && !isIpv6Literal(host)) {
            return "is not an IPv6 address (brackets hold one, and nothing else)";
        }
        if (NetUtil.isValidIpV4Address(bare) || isIpv6Literal(bare)) {
            return isWildcard(bare) ? "is a wildcard address, which apps cannot dial: give the name or address they reach this"
                    + " machine by" : null;
        }
        if (bare.matches("[0-9.]+")) {
            return "is not an IPv4 address";
        }
        if (bare.indexOf(':') >= 0) {
            return "is not an IPv6 address (give a host name or an IP address, without a port)";
        }
        if (NAME.matcher(bare).matches()) {
            return null;
        }
        return "is not a host name (letters, digits, '-' and '_' in dot-separated labels) or an IP address";
    }

    private static String shortForm(byte[] ipv6) {
        boolean ipv4Mapped = true;
        for (int i = 0; i < 12; i++) {
            ipv4Mapped &= ipv6[i] == (i < 10 ? 0 : (byte) 0xff);
        }
        return ipv4Mapped ? "::ffff:" + (ipv6[12] & 0xff) + "." + (ipv6[13] & 0xff) + "." + (ipv6[14] & 0xff) + "." + (ipv6[15] & 0xff)
                : NetUtil.bytesToIpAddress(ipv6);
    }
}
