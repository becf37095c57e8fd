package io.blackpipe.wire.auth;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The client side of one SCRAM conversation (RFC 5802; SHA-256: RFC 7677) with MongoDB's rules
 * from the Authentication spec: no channel binding ("n,,"), the user name escaped but not
 * SASLprep'd, at least 4096 iterations, and the password as MongoDB hashes it (see
 * {@link #scramPassword}). Pure computation: the messages go over the wire elsewhere.
 */
public final class ScramClient {
    /** Fewer iterations than this could be a downgrade by someone in the middle; drivers refuse them too. */
    static final int MINIMUM_ITERATIONS = 4096;
    private static final String GS2_HEADER = "n,,";
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Mechanism mechanism;
    private final String digest;
    private final String hmac;
    private final String clientFirstBare;
    private final String clientNonce;
    private final String password;
    private byte[] expectedServerSignature;

    /**
     * @param password as SCRAM uses it, from {@link #scramPassword}
     * @param clientNonce printable, without ','
     */
    ScramClient(Mechanism mechanism, String user, String password, String clientNonce) {
        if (mechanism != Mechanism.SCRAM_SHA_1 && mechanism != Mechanism.SCRAM_SHA_256) {
            throw new IllegalArgumentException(mechanism + " is not a SCRAM mechanism");
        }
        this.mechanism = mechanism;
        this.digest = mechanism == Mechanism.SCRAM_SHA_1 ? "SHA-1" : "SHA-256";
        this.hmac = mechanism == Mechanism.SCRAM_SHA_1 ? "HmacSHA1" : "HmacSHA256";
        this.password = password;
        this.clientNonce = clientNonce;
        this.clientFirstBare = "n=" + escapeUser(user) + ",r=" + clientNonce;
    }

    /** A conversation with a fresh random nonce (24 random bytes, base64: printable, never a ','). */
    public static ScramClient start(Mechanism mechanism, String user, String password) {
        byte[] nonce = new byte[24];
        RANDOM.nextBytes(nonce);
        return new ScramClient(mechanism, user, scramPassword(mechanism, user, password), Base64.getEncoder().encodeToString(nonce));
    }

    /**
     * The password as MongoDB's SCRAM hashes it: for SCRAM-SHA-1 the digest MONGODB-CR used,
     * hex(MD5(user ":mongo:" password)), kept so SHA-1 credentials survived the move from it;
     * for SCRAM-SHA-256 the password itself, SASLprep'd.
     *
     * @throws IllegalArgumentException when SASLprep refuses the password or leaves nothing of it
     */
    static String scramPassword(Mechanism mechanism, String user, String password) {
        if (mechanism == Mechanism.SCRAM_SHA_1) {
            try {
                byte[] md5 = MessageDigest.getInstance("MD5").digest((user + ":mongo:" + password).getBytes(StandardCharsets.UTF_8));
                return HexFormat.of().formatHex(md5);
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException("this JVM has no MD5", e);
            }
        }
        String prepared = SaslPrep.prepare(password);
        if (prepared.isEmpty()) {
            throw new IllegalArgumentException("the password is empty once SASLprep (RFC 4013) has removed what it maps to nothing");
        }
        return prepared;
    }

    /** '=' and ',' delimit SCRAM attributes, so a user name carries them as =3D and =2C (RFC 5802 section 5.1). */
    static String escapeUser(String user) {
        return user.replace("=", "=3D").replace(",", "=2C");
    }

    /** The client-first-message, payload of saslStart. */
    public byte[] clientFirst() {
        return utf8(GS2_HEADER + clientFirstBare);
    }

    /**
     * The client-final-message, with the proof, for the server-first-message; remembers the
     * signature the server must send back.
     *
     * @throws AuthenticationException when the server's message breaks the protocol (nonce, iterations, extensions)
     */
    public byte[] clientFinal(byte[] serverFirstBytes) throws AuthenticationException {
        String serverFirst = new String(serverFirstBytes, StandardCharsets.UTF_8);
        Map<Character, String> attributes = attributes(serverFirst);
        if (attributes.containsKey('m')) {
            throw new AuthenticationException("the server asks for a SCRAM extension (m=) that no MongoDB server uses");
        }
        String nonce = required(attributes, 'r', serverFirst);
        if (!nonce.startsWith(clientNonce) || nonce.length() == clientNonce.length()) {
            throw new AuthenticationException("the server's nonce does not extend the client's (SCRAM requires it)");
        }
        byte[] salt = base64(required(attributes, 's', serverFirst), "salt");
        String iterationCount = required(attributes, 'i', serverFirst);
        int iterations;
        try {
            // RFC 5802's posit-number: ASCII digits, no sign (parseInt alone takes "+4096" and other scripts' digits)
            iterations = iterationCount.matches("[1-9][0-9]*") ? Integer.parseInt(iterationCount) : -1;
        } catch (NumberFormatException e) { // too many digits for an int
            iterations = -1;
        }
        if (iterations < 0) {
            throw new AuthenticationException("the server's iteration count is not a positive number: i=" + iterationCount);
        }
        if (iterations < MINIMUM_ITERATIONS) {
            throw new AuthenticationException("the server asks for " + iterations + " iterations, fewer than the minimum "
                    + MINIMUM_ITERATIONS + " drivers accept (a downgrade by someone in the middle?)");
        }
        String withoutProof = "c=" + Base64.getEncoder().encodeToString(utf8(GS2_HEADER)) + ",r=" + nonce;
        byte[] authMessage = utf8(clientFirstBare + "," + serverFirst + "," + withoutProof);

        byte[] saltedPassword = hi(utf8(password), salt, iterations);
        byte[] clientKey = hmac(saltedPassword, utf8("Client Key"));
        byte[] storedKey = hash(clientKey);
        byte[] clientSignature = hmac(storedKey, authMessage);
        byte[] proof = new byte[clientKey.length];
        for (int i = 0; i < proof.length; i++) {
            proof[i] = (byte) (clientKey[i] ^ clientSignature[i]);
        }
        expectedServerSignature = hmac(hmac(saltedPassword, utf8("Server Key")), authMessage);
        return utf8(withoutProof + ",p=" + Base64.getEncoder().encodeToString(proof));
    }

    /**
     * Checks the server-final-message: only a server that knows the password's keys can sign the
     * conversation, so this is what proves the server is who it claims to be.
     *
     * @throws AuthenticationException when the server reports an error (e=) or its signature is wrong
     */
    public void verifyServerFinal(byte[] serverFinalBytes) throws AuthenticationException {
        if (expectedServerSignature == null) {
            throw new IllegalStateException("verifyServerFinal before clientFinal");
        }
        String serverFinal = new String(serverFinalBytes, StandardCharsets.UTF_8);
        Map<Character, String> attributes = attributes(serverFinal);
        if (attributes.containsKey('e')) {
            throw new AuthenticationException("the server ended the SCRAM conversation with e=" + attributes.get('e'));
        }
        byte[] signature = base64(required(attributes, 'v', serverFinal), "server signature");
        if (!MessageDigest.isEqual(signature, expectedServerSignature)) {
            throw new AuthenticationException("the server's " + mechanism + " signature does not match: it does not know"
                    + " this user's keys, or something between us changed the conversation");
        }
    }

    /** "k=v,k=v" into a map; a value may hold '=' (base64). */
    private static Map<Character, String> attributes(String message) throws AuthenticationException {
        Map<Character, String> attributes = new HashMap<>();
        for (String part : message.split(",")) {
            if (part.length() < 2 || part.charAt(1) != '=') {
                throw new AuthenticationException("the server sent a malformed SCRAM message (attribute '" + abbreviate(part) + "')");
            }
            attributes.putIfAbsent(part.charAt(0), part.substring(2));
        }
        return attributes;
    }

    private static String required(Map<Character, String> attributes, char name, String message) throws AuthenticationException {
        String value = attributes.get(name);
        if (value == null) {
            throw new AuthenticationException("the server's SCRAM message lacks " + name + "= (got '" + abbreviate(message) + "')");
        }
        return value;
    }

    private static String abbreviate(String s) {
        return s.length() <= 80 ? s : s.substring(0, 80) + "...";
    }

    private static byte[] base64(String value, String what) throws AuthenticationException {
        try {
            return Base64.getDecoder().decode(value);
        } catch (IllegalArgumentException e) {
            throw new AuthenticationException("the server's " + what + " is not base64");
        }
    }

    /** Hi(str, salt, i) of RFC 5802: PBKDF2 with HMAC as the PRF and one block of output. */
    private byte[] hi(byte[] key, byte[] salt, int iterations) {
        Mac mac = mac(key);
        mac.update(salt);
        byte[] u = mac.doFinal(new byte[] {0, 0, 0, 1});
        byte[] result = u.clone();
        for (int i = 1; i < iterations; i++) {
            u = mac.doFinal(u);
            for (int j = 0; j < result.length; j++) {
                result[j] ^= u[j];
            }
        }
        return result;
    }

    private byte[] hmac(byte[] key, byte[] data) {
        return mac(key).doFinal(data);
    }

    private Mac mac(byte[] key) {
        try {
            Mac mac = Mac.getInstance(hmac);
            mac.init(new SecretKeySpec(key, hmac));
            return mac;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("this JVM cannot compute " + hmac, e);
        }
    }

    private byte[] hash(byte[] data) {
        try {
            return MessageDigest.getInstance(digest).digest(data);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("this JVM has no " + digest, e);
        }
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
