package io.blackpipe.admin;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Locale;

/** The admin bearer token; compared in constant time so its bytes cannot be guessed by timing. */
public final class AdminToken {
    private static final String SCHEME = "bearer";
    private final byte[] expected;

    /** @throws IllegalArgumentException for a token no client could send (see {@link #whyUnsendable}) */
    AdminToken(String token) {
        String why = whyUnsendable(token);
        if (why != null) {
            throw new IllegalArgumentException("the admin token " + why);
        }
        this.expected = token == null || token.isEmpty() ? null : token.getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * Why no client could send {@code token} (never quoting it: it is a secret), or null when one can: an HTTP header
     * carries printable ASCII, a space at either end is trimmed off, and other bytes are read as Latin-1.
     */
    public static String whyUnsendable(String token) {
        return token == null || token.isEmpty() || token.chars().allMatch(c -> c > 0x20 && c < 0x7F) ? null
                : "must be printable ASCII without spaces: it goes in an HTTP header, which carries nothing else";
    }

    /** Whether a token is set: without one, anyone who reaches the API is let in. */
    boolean set() {
        return expected != null;
    }

    /** Whether {@code authorization} ("Bearer token"; the scheme's case and the spaces after it are free, as RFC 7235 has them) holds the token. */
    boolean permits(String authorization) {
        if (expected == null) {
            return true;
        }
        String given = "";
        if (authorization != null && authorization.length() > SCHEME.length()
                && authorization.substring(0, SCHEME.length()).toLowerCase(Locale.ROOT).equals(SCHEME)
                && authorization.charAt(SCHEME.length()) == ' ') {
            given = authorization.substring(SCHEME.length()).stripLeading();
        }
        return MessageDigest.isEqual(expected, given.getBytes(StandardCharsets.ISO_8859_1));
    }
}
