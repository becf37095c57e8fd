package io.blackpipe.topology;

import io.blackpipe.wire.BlockingCommandClient;
import io.blackpipe.wire.Tls;
import io.blackpipe.wire.auth.AuthenticationException;
import io.blackpipe.wire.auth.Authenticator;
import io.blackpipe.wire.auth.Credential;
import java.io.EOFException;
import java.io.IOException;
import java.net.SocketException;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonValue;

/**
 * A real failover: asks the primary to step down (replSetStepDown), as an operator would,
 * authenticated with the upstream URI's credentials when it has any (the command needs a user
 * with the replSetStateChange privilege on a deployment with access control).
 */
public final class StepDown {
    private static final int UNAUTHORIZED = 13;

    private StepDown() {
    }

    /**
     * @param primary the address that reaches the current primary
     * @throws IllegalStateException when the server refuses, naming its reason
     */
    public static void stepDown(MemberAddress primary, int timeoutMillis) {
        stepDown(primary, timeoutMillis, Tls.Client.OFF, null);
    }

    /**
     * The same, over TLS when the upstream URI asks for it, authenticated as {@code credential}
     * (null: unauthenticated).
     *
     * @throws IllegalStateException starting "failover: ", naming what failed: the credential before
     *                               anything is sent, the authentication (user, database, mechanism and the
     *                               server's reason), or the stepdown itself
     */
    public static void stepDown(MemberAddress primary, int timeoutMillis, Tls.Client tls, Credential credential) {
        if (credential != null) {
            String unusable = credential.unusableBecause(tls.hasClientCertificate());
            if (unusable != null) {
                throw new IllegalStateException("failover: " + unusable);
            }
        }
        try (BlockingCommandClient client = connect(primary, timeoutMillis + 15_000, tls, credential)) {
            BsonDocument reply;
            try {
                reply = client.run("admin", new BsonDocument("replSetStepDown", new BsonInt32(10))
                        .append("secondaryCatchUpPeriodSecs", new BsonInt32(5)));
            } catch (EOFException | SocketException e) {
                return; // servers before 4.2 close every connection when they step down: that is success too
            }
            if (!isOk(reply)) {
                throw new IllegalStateException("failover: replSetStepDown on " + primary + " failed: " + reason(reply)
                        + (credential == null && code(reply) == UNAUTHORIZED
                        ? " (the upstream URI has no credentials; give it a user allowed to step the primary down,"
                        + " e.g. mongodb://user:password@host/?authSource=admin)" : ""));
            }
        } catch (IOException e) {
            throw new IllegalStateException("failover: replSetStepDown on " + primary + " failed: " + e.getMessage(), e);
        }
    }

    /** A connection to the primary, authenticated when there is a credential; failures here are never a stepdown. */
    private static BlockingCommandClient connect(MemberAddress primary, int timeoutMillis, Tls.Client tls, Credential credential)
            throws IOException {
        BlockingCommandClient client = new BlockingCommandClient(primary.host(), primary.port(), timeoutMillis, tls);
        if (credential == null) {
            return client;
        }
        try {
            Authenticator.authenticate(client, credential);
            return client;
        } catch (AuthenticationException e) {
            client.close();
            throw new IllegalStateException("failover: " + e.getMessage() + " (primary " + primary + ")", e);
        } catch (IOException | RuntimeException e) {
            client.close();
            throw new IllegalStateException("failover: authenticating as " + credential.describe(credential.mechanism())
                    + " with primary " + primary + " failed: " + e.getMessage(), e);
        }
    }

    private static String reason(BsonDocument reply) {
        if (!reply.isString("errmsg")) {
            return reply.toJson();
        }
        String codeName = reply.isString("codeName") ? reply.getString("codeName").getValue() + " " : "";
        return codeName + "(" + code(reply) + "): " + reply.getString("errmsg").getValue();
    }

    private static int code(BsonDocument reply) {
        return reply.isNumber("code") ? reply.getNumber("code").intValue() : 0;
    }

    private static boolean isOk(BsonDocument reply) {
        BsonValue ok = reply.get("ok");
        return ok != null && ok.isNumber() && ok.asNumber().doubleValue() == 1.0;
    }
}
