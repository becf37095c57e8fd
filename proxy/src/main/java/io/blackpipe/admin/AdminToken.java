package io.blackpipe.admin;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

/** The admin bearer token; compared in constant time so its bytes cannot be guessed by timing. */
final class AdminToken {
    private final byte[] expected;

    AdminToken(String token) {
        this.expected = token == null || token.isEmpty() ? null : ("Bearer " + token).getBytes(StandardCharsets.UTF_8);
    }

    boolean permits(String authorization) {
        if (expected == null) {
            return true;
        }
        byte[] given = authorization == null ? new byte[0] : authorization.getBytes(StandardCharsets.UTF_8);
        return MessageDigest.isEqual(expected, given);
    }
}
