package io.blackpipe.testing;

import com.mongodb.internal.authentication.SaslPrep;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.crypto.Mac;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;
import javax.crypto.spec.SecretKeySpec;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * Access control for {@link ScriptedMongod}s, as mongod with {@code --auth} has it: users with
 * SCRAM-SHA-1 and/or SCRAM-SHA-256 credentials, stored as mongod stores them (salt, iteration
 * count, StoredKey, ServerKey: never the password), answering saslStart / saslContinue,
 * speculativeAuthenticate and hello's saslSupportedMechs, and refusing other commands on an
 * unauthenticated connection with 13 Unauthorized. Its SCRAM is written independently of the
 * proxy's (the JDK's PBKDF2, the Java driver's SASLprep), so the real driver authenticating
 * against it shows it is a real SCRAM peer. Members of one scripted replica set share an instance,
 * as real members share their users. Every user may do everything (no roles).
 */
public final class ScriptedScramServer {
    /** What mongod answers without authentication; everything else needs a user. */
    static final Set<String> OPEN_COMMANDS = Set.of("hello", "isMaster", "ismaster", "saslStart", "saslContinue",
            "authenticate", "ping", "buildInfo", "buildinfo", "logout");
    static final Set<String> AUTH_COMMANDS = Set.of("saslStart", "saslContinue", "authenticate");
    public static final String X509 = "MONGODB-X509";
    public static final String SHA_1 = "SCRAM-SHA-1";
    public static final String SHA_256 = "SCRAM-SHA-256";

    /** One authentication the server accepted (or, with ok false, refused at the proof). */
    public record Login(String db, String user, String mechanism, boolean speculative, boolean ok) {
    }

    /** A user's keys for one mechanism. */
    private record Keys(byte[] salt, int iterations, byte[] storedKey, byte[] serverKey) {
    }

    private final Map<String, Map<String, Keys>> users = new LinkedHashMap<>(); // "db.user" -> mechanism -> keys
    private final int sha1Iterations;
    private final int sha256Iterations;
    private final boolean skipsEmptyExchange;
    private final boolean forgesSignature;
    private final String x509Subject;
    private final List<Login> logins = new CopyOnWriteArrayList<>();
    private final SecureRandom random = new SecureRandom();

    private ScriptedScramServer(Builder b) {
        this.sha1Iterations = b.sha1Iterations;
        this.sha256Iterations = b.sha256Iterations;
        this.skipsEmptyExchange = b.skipsEmptyExchange;
        this.forgesSignature = b.forgesSignature;
        this.x509Subject = b.x509Subject;
        b.users.forEach((key, user) -> {
            Map<String, Keys> byMechanism = new LinkedHashMap<>();
            for (String mechanism : user.mechanisms) {
                byMechanism.put(mechanism, keys(mechanism, user.name, user.password));
            }
            users.put(key, byMechanism);
        });
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Users and server behaviour; the defaults are mongod 7.0's. */
    public static final class Builder {
        private record User(String name, String password, List<String> mechanisms) {
        }

        private final Map<String, User> users = new LinkedHashMap<>();
        private int sha1Iterations = 10_000;
        private int sha256Iterations = 15_000;
        private boolean skipsEmptyExchange = true;
        private boolean forgesSignature;
        private String x509Subject;

        private Builder() {
        }

        /** A user in {@code db}; no mechanisms: both SCRAM-SHA-1 and SCRAM-SHA-256, as createUser does by default. */
        public Builder user(String db, String name, String password, String... mechanisms) {
            users.put(db + "." + name, new User(name, password, mechanisms.length == 0 ? List.of(SHA_1, SHA_256) : List.of(mechanisms)));
            return this;
        }

        /** scramIterationCount and scramSHA256IterationCount. */
        public Builder iterations(int sha1, int sha256) {
            this.sha1Iterations = sha1;
            this.sha256Iterations = sha256;
            return this;
        }

        /** Ignore skipEmptyExchange and want the extra empty round, as servers before 4.4 do. */
        public Builder withoutSkipEmptyExchange() {
            this.skipsEmptyExchange = false;
            return this;
        }

        /**
         * Accept every proof and send a server signature that is not the real one, as a server that
         * does not know the user's keys (an impostor) would have to.
         */
        public Builder forgingServerSignatures() {
            this.forgesSignature = true;
            return this;
        }

        /**
         * Accept MONGODB-X509 as {@code subject}: the client certificate subject that the TLS
         * terminator in front of the server (which checked the certificate) saw. The scripted
         * server speaks plaintext, so it takes the terminator's word, as mongod takes its TLS layer's.
         */
        public Builder x509(String subject) {
            this.x509Subject = subject;
            return this;
        }

        public ScriptedScramServer build() {
            return new ScriptedScramServer(this);
        }
    }

    /** Every proof checked so far, in order. */
    public List<Login> logins() {
        return new ArrayList<>(logins);
    }

    // ---------------------------------------------------------------- one connection's state

    /** The state of a new connection: not authenticated, no conversation. */
    Session newSession() {
        return new Session();
    }

    /** What one connection has said so far: conversations under way, and who it is once authenticated. */
    final class Session {
        private final Map<Integer, Conversation> conversations = new HashMap<>();
        private int nextConversationId = 1;
        private Login authenticated;

        boolean authenticated() {
            return authenticated != null;
        }

        /** "user@db", or null. */
        String user() {
            return authenticated == null ? null : authenticated.user() + "@" + authenticated.db();
        }

        String mechanism() {
            return authenticated == null ? null : authenticated.mechanism();
        }

        /** saslStart, saslContinue or authenticate; the reply body without $clusterTime. */
        BsonDocument run(String name, BsonDocument cmd) {
            return switch (name) {
                case "saslStart" -> saslStart(cmd.getString("$db").getValue(), cmd, false);
                case "saslContinue" -> saslContinue(cmd);
                default -> authenticate(cmd);
            };
        }

        /** authenticate with MONGODB-X509 on $external: the certificate is the proof, the user (if named) must match it. */
        private BsonDocument authenticate(BsonDocument cmd) {
            String mechanism = cmd.getString("mechanism", new BsonString("")).getValue();
            if (!mechanism.equals(X509) || x509Subject == null) {
                return ScriptedMongodCommands.error(334, "MechanismUnavailable",
                        "Received authentication for mechanism " + mechanism + " which is not enabled");
            }
            boolean userMatches = !cmd.containsKey("user") || cmd.getString("user").getValue().equals(x509Subject);
            if (!cmd.getString("$db").getValue().equals("$external") || !userMatches) {
                return ScriptedMongodCommands.error(18, "AuthenticationFailed", "Authentication failed.");
            }
            authenticated = new Login("$external", x509Subject, X509, false, true);
            logins.add(authenticated);
            return new BsonDocument("dbname", new BsonString("$external")).append("user", new BsonString(x509Subject))
                    .append("ok", new BsonDouble(1));
        }

        /** Adds what hello says about authentication: saslSupportedMechs and the speculative saslStart's first reply. */
        void decorateHello(BsonDocument request, BsonDocument reply) {
            if (request.isString("saslSupportedMechs")) {
                Map<String, Keys> user = users.get(request.getString("saslSupportedMechs").getValue());
                if (user != null) { // mongod leaves the field out for a user it does not know
                    BsonArray mechanisms = new BsonArray();
                    user.keySet().forEach(m -> mechanisms.add(new BsonString(m)));
                    reply.append("saslSupportedMechs", mechanisms);
                }
            }
            if (request.isDocument("speculativeAuthenticate")) {
                BsonDocument start = request.getDocument("speculativeAuthenticate");
                if (start.containsKey("saslStart") && start.isString("db")) {
                    BsonDocument answer = saslStart(start.getString("db").getValue(), start, true);
                    if (ScriptedMongodCommands.isOk(answer)) { // a failed speculative start is left out, not reported
                        answer.remove("ok");
                        reply.append("speculativeAuthenticate", answer);
                    }
                }
            }
        }

        private BsonDocument saslStart(String db, BsonDocument cmd, boolean speculative) {
            String mechanism = cmd.getString("mechanism", new BsonString("")).getValue();
            if (!mechanism.equals(SHA_1) && !mechanism.equals(SHA_256)) {
                return ScriptedMongodCommands.error(334, "MechanismUnavailable",
                        "Received authentication for mechanism " + mechanism + " which is not enabled");
            }
            String clientFirst = payload(cmd);
            if (!clientFirst.startsWith("n,,")) {
                return ScriptedMongodCommands.error(17, "ProtocolError",
                        "SCRAM: the client-first-message must start with n,, (no channel binding, no authzid)");
            }
            String bare = clientFirst.substring(3);
            Map<Character, String> attributes = attributes(bare);
            String user = unescape(attributes.getOrDefault('n', ""));
            String clientNonce = attributes.get('r');
            if (clientNonce == null || user.isEmpty()) {
                return ScriptedMongodCommands.error(17, "ProtocolError", "SCRAM: the client-first-message lacks n= or r=");
            }
            Map<String, Keys> byMechanism = users.get(db + "." + user);
            Keys keys = byMechanism == null ? null : byMechanism.get(mechanism);
            if (byMechanism != null && keys == null) {
                return ScriptedMongodCommands.error(18, "AuthenticationFailed", "Authentication failed.");
            }
            if (keys == null) {
                // As mongod: an unknown user gets made-up keys and fails at the proof, so the
                // answers do not tell which users exist.
                keys = keys(mechanism, user, "not-" + user + "-" + random.nextLong());
            }
            byte[] serverNonce = new byte[24];
            random.nextBytes(serverNonce);
            String serverFirst = "r=" + clientNonce + Base64.getEncoder().encodeToString(serverNonce)
                    + ",s=" + Base64.getEncoder().encodeToString(keys.salt()) + ",i=" + keys.iterations();
            int id = nextConversationId++;
            boolean skipEmpty = cmd.getDocument("options", new BsonDocument())
                    .getBoolean("skipEmptyExchange", BsonBoolean.FALSE).getValue();
            conversations.put(id, new Conversation(db, user, mechanism, keys, byMechanism != null, bare, serverFirst,
                    skipEmpty && skipsEmptyExchange, speculative));
            return new BsonDocument("conversationId", new BsonInt32(id)).append("done", BsonBoolean.FALSE)
                    .append("payload", new BsonBinary(serverFirst.getBytes(StandardCharsets.UTF_8)))
                    .append("ok", new BsonDouble(1));
        }

        private BsonDocument saslContinue(BsonDocument cmd) {
            BsonValue id = cmd.get("conversationId");
            Conversation conversation = id != null && id.isNumber() ? conversations.get(id.asNumber().intValue()) : null;
            if (conversation == null) {
                return ScriptedMongodCommands.error(17, "ProtocolError", "No SASL session state found");
            }
            BsonDocument reply = conversation.proven ? conversation.emptyRound(payload(cmd)) : conversation.proof(payload(cmd));
            if (!ScriptedMongodCommands.isOk(reply) || reply.getBoolean("done").getValue()) {
                conversations.remove(id.asNumber().intValue());
            }
            if (ScriptedMongodCommands.isOk(reply) && reply.getBoolean("done").getValue()) {
                authenticated = new Login(conversation.db, conversation.user, conversation.mechanism, conversation.speculative, true);
            }
            return reply.append("conversationId", id);
        }
    }

    /** One SCRAM conversation, server side (RFC 5802 section 3). */
    private final class Conversation {
        final String db;
        final String user;
        final String mechanism;
        final Keys keys;
        final boolean userExists;
        final String clientFirstBare;
        final String serverFirst;
        final boolean skipEmpty;
        final boolean speculative;
        boolean proven;

        Conversation(String db, String user, String mechanism, Keys keys, boolean userExists, String clientFirstBare,
                     String serverFirst, boolean skipEmpty, boolean speculative) {
            this.db = db;
            this.user = user;
            this.mechanism = mechanism;
            this.keys = keys;
            this.userExists = userExists;
            this.clientFirstBare = clientFirstBare;
            this.serverFirst = serverFirst;
            this.skipEmpty = skipEmpty;
            this.speculative = speculative;
        }

        /** The client-final-message: check the channel binding, the nonce and the proof. */
        BsonDocument proof(String clientFinal) {
            int p = clientFinal.lastIndexOf(",p=");
            if (p < 0) {
                return ScriptedMongodCommands.error(17, "ProtocolError", "SCRAM: the client-final-message has no proof");
            }
            String withoutProof = clientFinal.substring(0, p);
            Map<Character, String> attributes = attributes(withoutProof);
            String expectedNonce = attributes(serverFirst).get('r');
            if (!"biws".equals(attributes.get('c')) || !expectedNonce.equals(attributes.get('r'))) {
                return ScriptedMongodCommands.error(17, "ProtocolError", "SCRAM: wrong channel binding or nonce");
            }
            byte[] authMessage = (clientFirstBare + "," + serverFirst + "," + withoutProof).getBytes(StandardCharsets.UTF_8);
            byte[] proof = Base64.getDecoder().decode(clientFinal.substring(p + 3));
            byte[] clientSignature = hmac(mechanism, keys.storedKey(), authMessage);
            byte[] clientKey = new byte[clientSignature.length];
            for (int i = 0; i < clientKey.length && i < proof.length; i++) {
                clientKey[i] = (byte) (proof[i] ^ clientSignature[i]);
            }
            boolean ok = userExists && proof.length == clientSignature.length
                    && MessageDigest.isEqual(hash(mechanism, clientKey), keys.storedKey());
            if (!ok && !forgesSignature) {
                logins.add(new Login(db, user, mechanism, speculative, false));
                return ScriptedMongodCommands.error(18, "AuthenticationFailed", "Authentication failed.");
            }
            logins.add(new Login(db, user, mechanism, speculative, true));
            byte[] signature = hmac(mechanism, keys.serverKey(), authMessage);
            if (forgesSignature) {
                signature[0] ^= 1;
            }
            proven = true;
            String serverFinal = "v=" + Base64.getEncoder().encodeToString(signature);
            return new BsonDocument("done", BsonBoolean.valueOf(skipEmpty))
                    .append("payload", new BsonBinary(serverFinal.getBytes(StandardCharsets.UTF_8)))
                    .append("ok", new BsonDouble(1));
        }

        /** The extra round of servers before 4.4: the client acknowledges the signature with nothing. */
        BsonDocument emptyRound(String payload) {
            if (!payload.isEmpty()) {
                return ScriptedMongodCommands.error(17, "ProtocolError", "SCRAM: expected an empty payload to end the conversation");
            }
            return new BsonDocument("done", BsonBoolean.TRUE).append("payload", new BsonBinary(new byte[0]))
                    .append("ok", new BsonDouble(1));
        }
    }

    // ---------------------------------------------------------------- SCRAM, as mongod's createUser stores it

    private Keys keys(String mechanism, String user, String password) {
        byte[] salt = new byte[mechanism.equals(SHA_1) ? 16 : 28];
        random.nextBytes(salt);
        int iterations = mechanism.equals(SHA_1) ? sha1Iterations : sha256Iterations;
        // SCRAM-SHA-1 hashes MONGODB-CR's digest of the password; SCRAM-SHA-256 the SASLprep'd password.
        String secret = mechanism.equals(SHA_1) ? md5Hex(user + ":mongo:" + password) : SaslPrep.saslPrepStored(password);
        byte[] saltedPassword = pbkdf2(mechanism, secret, salt, iterations);
        byte[] clientKey = hmac(mechanism, saltedPassword, "Client Key".getBytes(StandardCharsets.UTF_8));
        byte[] serverKey = hmac(mechanism, saltedPassword, "Server Key".getBytes(StandardCharsets.UTF_8));
        return new Keys(salt, iterations, hash(mechanism, clientKey), serverKey);
    }

    private static byte[] pbkdf2(String mechanism, String secret, byte[] salt, int iterations) {
        String algorithm = mechanism.equals(SHA_1) ? "PBKDF2WithHmacSHA1" : "PBKDF2WithHmacSHA256";
        int bits = mechanism.equals(SHA_1) ? 160 : 256;
        try {
            // The JDK's PBKDF2 encodes the password's chars as UTF-8, as SCRAM wants.
            return SecretKeyFactory.getInstance(algorithm).generateSecret(new PBEKeySpec(secret.toCharArray(), salt, iterations, bits))
                    .getEncoded();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static byte[] hmac(String mechanism, byte[] key, byte[] data) {
        String algorithm = mechanism.equals(SHA_1) ? "HmacSHA1" : "HmacSHA256";
        try {
            Mac mac = Mac.getInstance(algorithm);
            mac.init(new SecretKeySpec(key, algorithm));
            return mac.doFinal(data);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static byte[] hash(String mechanism, byte[] data) {
        try {
            return MessageDigest.getInstance(mechanism.equals(SHA_1) ? "SHA-1" : "SHA-256").digest(data);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String md5Hex(String s) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("MD5").digest(s.getBytes(StandardCharsets.UTF_8)));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String payload(BsonDocument cmd) {
        BsonValue payload = cmd.get("payload");
        byte[] bytes = payload == null ? new byte[0]
                : payload.isBinary() ? payload.asBinary().getData() : Base64.getDecoder().decode(payload.asString().getValue());
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static Map<Character, String> attributes(String message) {
        Map<Character, String> attributes = new HashMap<>();
        for (String part : message.split(",")) {
            if (part.length() >= 2 && part.charAt(1) == '=') {
                attributes.putIfAbsent(part.charAt(0), part.substring(2));
            }
        }
        return attributes;
    }

    private static String unescape(String user) {
        return user.replace("=2C", ",").replace("=3D", "=");
    }
}
