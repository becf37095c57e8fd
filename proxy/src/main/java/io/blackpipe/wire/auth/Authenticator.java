package io.blackpipe.wire.auth;

import io.blackpipe.wire.BlockingCommandClient;
import io.blackpipe.wire.Tls;
import java.io.IOException;
import java.util.Base64;
import org.bson.BsonBinary;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * Authenticates one control-client connection as a driver would (the MongoDB Authentication
 * spec): the mechanism from the URI, else negotiated with hello's saslSupportedMechs; SCRAM over
 * saslStart/saslContinue, MONGODB-X509 with authenticate on $external.
 */
public final class Authenticator {
    private static final int COMMAND_NOT_FOUND = 59;
    /** A SCRAM conversation is two rounds, three on servers before 4.4 (the empty one); more is a broken server. */
    private static final int MAX_EMPTY_ROUNDS = 2;

    private Authenticator() {
    }

    /**
     * A control connection to {@code host}:{@code port} (over TLS when {@code tls} is enabled), authenticated as
     * {@code credential} when there is one (null: none); closed again when that fails.
     */
    public static BlockingCommandClient connect(String host, int port, int timeoutMillis, Tls.Client tls, Credential credential)
            throws IOException, AuthenticationException {
        BlockingCommandClient client = new BlockingCommandClient(host, port, timeoutMillis, tls);
        if (credential != null) {
            try {
                authenticate(client, credential);
            } catch (IOException | AuthenticationException | RuntimeException e) {
                client.close();
                throw e;
            }
        }
        return client;
    }

    /**
     * @return the mechanism used
     * @throws AuthenticationException naming the user, the database, the mechanism and the server's reason
     * @throws IOException             when the connection fails on the way
     */
    public static Mechanism authenticate(BlockingCommandClient client, Credential credential)
            throws IOException, AuthenticationException {
        // Whether a TLS client certificate is at hand is the caller's to check, before it connects.
        String unusable = credential.unusableBecause(true);
        if (unusable != null) {
            throw new AuthenticationException("cannot authenticate as " + credential.describe(credential.mechanism()) + ": " + unusable);
        }
        Mechanism mechanism = credential.mechanism() != null ? credential.mechanism() : negotiate(client, credential);
        try {
            if (mechanism == Mechanism.MONGODB_X509) {
                x509(client, credential);
            } else {
                scram(client, credential, mechanism);
            }
            return mechanism;
        } catch (AuthenticationException | IllegalArgumentException e) {
            throw new AuthenticationException("authentication as " + credential.describe(mechanism) + " failed: " + e.getMessage(), e);
        }
    }

    /**
     * SCRAM-SHA-256 if the server lists it for the user, else SCRAM-SHA-1, as the spec says
     * (also when the list is missing: an unknown user, or a server before 4.0).
     *
     * @throws AuthenticationException when the server refuses the hello itself: a driver's handshake fails there
     *                                 too, and a SCRAM-SHA-1 tried anyway failed for a reason that was not the one
     */
    static Mechanism negotiate(BlockingCommandClient client, Credential credential) throws IOException, AuthenticationException {
        BsonString user = new BsonString(credential.source() + "." + credential.user());
        BsonDocument reply = client.run("admin", new BsonDocument("hello", new BsonInt32(1)).append("saslSupportedMechs", user));
        if (!ok(reply) && reply.getNumber("code", new BsonInt32(0)).intValue() == COMMAND_NOT_FOUND) {
            reply = client.run("admin", new BsonDocument("isMaster", new BsonInt32(1)).append("saslSupportedMechs", user));
        }
        if (!ok(reply)) {
            throw new AuthenticationException("cannot authenticate as " + credential.describe(null)
                    + ": the hello that negotiates the mechanism failed: " + failure(reply));
        }
        if (reply.isArray("saslSupportedMechs")
                && reply.getArray("saslSupportedMechs").contains(new BsonString(Mechanism.SCRAM_SHA_256.wireName()))) {
            return Mechanism.SCRAM_SHA_256;
        }
        return Mechanism.SCRAM_SHA_1;
    }

    private static void scram(BlockingCommandClient client, Credential credential, Mechanism mechanism)
            throws IOException, AuthenticationException {
        ScramClient scram = ScramClient.start(mechanism, credential.user(), credential.password());
        BsonDocument reply = command(client, credential.source(), new BsonDocument("saslStart", new BsonInt32(1))
                .append("mechanism", new BsonString(mechanism.wireName()))
                .append("payload", new BsonBinary(scram.clientFirst()))
                .append("options", new BsonDocument("skipEmptyExchange", BsonBoolean.TRUE)));
        BsonValue conversationId = reply.get("conversationId");
        if (conversationId == null || done(reply)) {
            throw new AuthenticationException("the server ended the conversation before proving it knows the password");
        }
        reply = command(client, credential.source(), saslContinue(conversationId, scram.clientFinal(payload(reply))));
        scram.verifyServerFinal(payload(reply));
        // Servers before 4.4 ignore skipEmptyExchange and want one more, empty, round.
        for (int round = 0; !done(reply); round++) {
            if (round == MAX_EMPTY_ROUNDS) {
                throw new AuthenticationException("the server keeps the SCRAM conversation open after proving itself");
            }
            reply = command(client, credential.source(), saslContinue(conversationId, new byte[0]));
        }
    }

    private static BsonDocument saslContinue(BsonValue conversationId, byte[] payload) {
        return new BsonDocument("saslContinue", new BsonInt32(1)).append("conversationId", conversationId)
                .append("payload", new BsonBinary(payload));
    }

    /** authenticate on $external: the TLS client certificate already presented is the proof. */
    private static void x509(BlockingCommandClient client, Credential credential) throws IOException, AuthenticationException {
        BsonDocument authenticate = new BsonDocument("authenticate", new BsonInt32(1))
                .append("mechanism", new BsonString(Mechanism.MONGODB_X509.wireName()));
        if (credential.user() != null) {
            authenticate.append("user", new BsonString(credential.user()));
        }
        command(client, "$external", authenticate);
    }

    /** Runs an authentication command; an error reply becomes "CodeName (code): errmsg". */
    private static BsonDocument command(BlockingCommandClient client, String database, BsonDocument command)
            throws IOException, AuthenticationException {
        BsonDocument reply = client.run(database, command);
        if (!ok(reply)) {
            throw new AuthenticationException(failure(reply));
        }
        return reply;
    }

    /** An error reply as "CodeName (code): errmsg". */
    private static String failure(BsonDocument reply) {
        String codeName = reply.isString("codeName") ? reply.getString("codeName").getValue() : "error";
        String code = reply.isNumber("code") ? " (" + reply.getNumber("code").intValue() + ")" : "";
        String errmsg = reply.isString("errmsg") ? reply.getString("errmsg").getValue() : reply.toJson();
        return codeName + code + ": " + errmsg;
    }

    /** The SASL payload: binary in OP_MSG replies, base64 text in some older ones. */
    private static byte[] payload(BsonDocument reply) throws AuthenticationException {
        BsonValue payload = reply.get("payload");
        if (payload != null && payload.isBinary()) {
            return payload.asBinary().getData();
        }
        if (payload != null && payload.isString()) {
            try {
                return Base64.getDecoder().decode(payload.asString().getValue());
            } catch (IllegalArgumentException e) {
                throw new AuthenticationException("the server's SASL payload is neither binary nor base64");
            }
        }
        throw new AuthenticationException("the server's SASL reply has no payload");
    }

    private static boolean done(BsonDocument reply) {
        return reply.getBoolean("done", BsonBoolean.FALSE).getValue();
    }

    private static boolean ok(BsonDocument reply) {
        BsonValue ok = reply.get("ok");
        return ok != null && ok.isNumber() && ok.asNumber().doubleValue() == 1.0;
    }
}
