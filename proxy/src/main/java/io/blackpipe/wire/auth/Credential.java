package io.blackpipe.wire.auth;

import java.util.Map;

/**
 * Who the proxy's control client authenticates as, taken from the upstream URI as drivers take
 * it (the MongoDB Authentication spec): the user and password before the '@', authSource (else
 * the URI's database, else the mechanism's default: admin, or $external), and authMechanism
 * (null: negotiated with the server). {@link #toString()} never shows the password.
 *
 * @param user     null only for MONGODB-X509, where the certificate names the user
 * @param password null when the URI has none
 */
public record Credential(String user, String password, String source, Mechanism mechanism) {

    /**
     * The credential a URI asks for, or null when it asks for none (no user and no authMechanism:
     * an authSource or a database alone does not ask for authentication).
     *
     * @param database the URI's path database, or null
     * @param options  the URI options, names lower-cased
     * @throws IllegalArgumentException when authMechanism names no MongoDB mechanism or authSource is empty,
     *                                  which a driver would refuse too
     */
    public static Credential fromUri(String user, String password, String database, Map<String, String> options) {
        String mechanismName = options.get("authmechanism");
        Mechanism mechanism = mechanismName == null ? null : Mechanism.named(mechanismName);
        String authSource = options.get("authsource");
        if (authSource != null && authSource.isBlank()) {
            throw new IllegalArgumentException("the upstream URI's authSource= is empty; name the database that holds the user");
        }
        if (user == null && mechanism == null) {
            return null;
        }
        String source;
        if (authSource != null) {
            source = authSource;
        } else if (mechanism != null && mechanism.external()) {
            source = "$external";
        } else if (database != null && !database.isEmpty()) {
            source = database;
        } else {
            source = mechanism == null ? "admin" : mechanism.defaultSource();
        }
        return new Credential(user, password, source, mechanism);
    }

    /**
     * Why the control client cannot authenticate with this credential, or null if it can. Asked
     * at start (a warning) and before a failover (the error), never of the server.
     *
     * @param clientCertificate whether the upstream URI gives a TLS client certificate (tlsCertificateKeyFile)
     */
    public String unusableBecause(boolean clientCertificate) {
        if (mechanism != null && !mechanism.supported()) {
            return "authMechanism=" + mechanism + " is not supported by blackpipe's control client (used for failover);"
                    + " it speaks " + Mechanism.supportedNames() + ". Apps authenticate through the proxy as before";
        }
        if (mechanism == Mechanism.MONGODB_X509) {
            if (!clientCertificate) {
                return "authMechanism=MONGODB-X509 needs a client certificate: set tlsCertificateKeyFile in the upstream URI";
            }
            if (password != null) {
                return "authMechanism=MONGODB-X509 takes no password (the certificate proves who the user is)";
            }
            if (!source.equals("$external")) {
                return "authMechanism=MONGODB-X509 authenticates on $external, not on authSource=" + source;
            }
            return null;
        }
        String named = mechanism == null ? "" : "authMechanism=" + mechanism + " ";
        if (user == null || user.isEmpty()) {
            return named + "needs a user name in the upstream URI (mongodb://user:password@host/)";
        }
        if (password == null || password.isEmpty()) {
            return "the upstream URI names user '" + user + "' but " + (password == null ? "no" : "an empty") + " password";
        }
        return null;
    }

    /** Who authenticates where and how, for messages: 'alice' on admin (SCRAM-SHA-256). */
    public String describe(Mechanism used) {
        String who = user == null ? "the client certificate's subject" : "'" + user + "'";
        return who + " on " + source + " (" + (used == null ? "mechanism negotiated" : used.wireName()) + ")";
    }

    @Override
    public String toString() {
        return "Credential[" + describe(mechanism) + (password == null ? "" : ", password ****") + "]";
    }
}
