package io.blackpipe.topology;

/** A host:port pair as replica set members name each other (host names compare case-insensitively, IPv6 literals in their short form). */
public record MemberAddress(String host, int port) {
    public static final int DEFAULT_PORT = 27017;

    public MemberAddress {
        if (host == null || host.isEmpty()) {
            throw new IllegalArgumentException("empty host name");
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port " + port + " is out of range");
        }
        host = HostNames.canonical(host); // "[::1]" and "0:0:0:0:0:0:0:1" are "::1"
    }

    /** Parses "host", "host:port", "[v6]" or "[v6]:port". */
    public static MemberAddress parse(String text) {
        String s = text.trim();
        String host = s;
        int port = DEFAULT_PORT;
        if (s.startsWith("[")) {
            int close = s.indexOf(']');
            if (close < 0) {
                throw new IllegalArgumentException("'" + text + "': unterminated IPv6 address");
            }
            host = s.substring(1, close);
            if (close + 1 < s.length()) {
                if (s.charAt(close + 1) != ':') {
                    throw new IllegalArgumentException("'" + text + "': expected ':' after ']'");
                }
                port = parsePort(text, s.substring(close + 2));
            }
        } else {
            int colon = s.lastIndexOf(':');
            if (colon >= 0) {
                host = s.substring(0, colon);
                port = parsePort(text, s.substring(colon + 1));
                if (host.indexOf(':') >= 0 && !HostNames.isIpv6Literal(host)) { // "mongo:27017:1": read as host "mongo:27017"
                    throw new IllegalArgumentException("'" + text + "': a host has no ':' (an IPv6 address goes in brackets: [::1]:27017)");
                }
            }
        }
        try {
            return new MemberAddress(host, port);
        } catch (IllegalArgumentException e) { // "port 99999 is out of range", said of the text given
            throw new IllegalArgumentException("'" + text + "': " + e.getMessage(), e);
        }
    }

    private static int parsePort(String text, String port) {
        try {
            return Integer.parseInt(port);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + text + "': port '" + port + "' is not a number");
        }
    }

    @Override
    public String toString() {
        return host.indexOf(':') >= 0 ? "[" + host + "]:" + port : host + ":" + port;
    }
}
