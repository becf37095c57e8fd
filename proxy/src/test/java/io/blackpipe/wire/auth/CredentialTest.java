package io.blackpipe.wire.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The credential a URI asks for, with the Authentication spec's defaults, and what the control client can do with it. */
class CredentialTest {
    private static Credential of(String user, String password, String database, Map<String, String> options) {
        return Credential.fromUri(user, password, database, options);
    }

    @Test
    void noUserAndNoMechanismMeansNoAuthentication() {
        assertNull(of(null, null, null, Map.of()));
        assertNull(of(null, null, "app", Map.of("authsource", "admin")), "authSource alone does not ask for authentication");
    }

    @Test
    void theSourceIsAuthSourceElseTheDatabaseElseAdmin() {
        assertEquals(new Credential("alice", "pw", "admin", null), of("alice", "pw", null, Map.of()));
        assertEquals(new Credential("alice", "pw", "app", null), of("alice", "pw", "app", Map.of()));
        assertEquals(new Credential("alice", "pw", "users", null), of("alice", "pw", "app", Map.of("authsource", "users")));
        assertEquals(new Credential("alice", "pw", "app", Mechanism.SCRAM_SHA_1),
                of("alice", "pw", "app", Map.of("authmechanism", "SCRAM-SHA-1")));
    }

    @Test
    void externalMechanismsDefaultToExternal() {
        assertEquals(new Credential(null, null, "$external", Mechanism.MONGODB_X509),
                of(null, null, "app", Map.of("authmechanism", "MONGODB-X509")), "the URI's database is not an X.509 source");
        assertEquals("$external", of("bob", "pw", null, Map.of("authmechanism", "PLAIN")).source());
        assertEquals("ldapusers", of("bob", "pw", "ldapusers", Map.of("authmechanism", "PLAIN")).source());
    }

    @Test
    void anUnknownMechanismOrAnEmptyAuthSourceIsRefusedAtOnce() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> of("alice", "pw", null, Map.of("authmechanism", "SCRAM-SHA-512")));
        assertTrue(e.getMessage().contains("authMechanism=SCRAM-SHA-512 is not a MongoDB authentication mechanism"), e.getMessage());
        assertTrue(e.getMessage().contains("SCRAM-SHA-256, SCRAM-SHA-1, MONGODB-X509, GSSAPI"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> of("alice", "pw", null, Map.of("authsource", "")));
        assertTrue(e.getMessage().contains("authSource= is empty"), e.getMessage());
    }

    @Test
    void mechanismNamesAreMatchedWithoutCase() {
        assertEquals(Mechanism.SCRAM_SHA_256, of("a", "p", null, Map.of("authmechanism", "scram-sha-256")).mechanism());
    }

    @Test
    void unsupportedMechanismsAreNamedWithWhatIsSupported() {
        for (String name : new String[] {"GSSAPI", "PLAIN", "MONGODB-AWS", "MONGODB-OIDC", "MONGODB-CR"}) {
            String why = of("bob", "pw", null, Map.of("authmechanism", name)).unusableBecause(false);
            assertEquals("authMechanism=" + name + " is not supported by blackpipe's control client (used for failover);"
                    + " it speaks SCRAM-SHA-256, SCRAM-SHA-1, MONGODB-X509. Apps authenticate through the proxy as before", why);
        }
    }

    @Test
    void whatTheControlClientNeeds() {
        assertNull(of("alice", "pw", null, Map.of()).unusableBecause(false));
        assertEquals("the upstream URI names user 'alice' but no password", of("alice", null, null, Map.of()).unusableBecause(false));
        assertEquals("the upstream URI names user 'alice' but an empty password", of("alice", "", null, Map.of()).unusableBecause(false));
        assertEquals("needs a user name in the upstream URI (mongodb://user:password@host/)", of("", "pw", null, Map.of()).unusableBecause(false));
        assertTrue(of(null, null, null, Map.of("authmechanism", "SCRAM-SHA-256")).unusableBecause(false)
                .startsWith("authMechanism=SCRAM-SHA-256 needs a user name"));

        Credential x509 = of(null, null, null, Map.of("authmechanism", "MONGODB-X509"));
        assertEquals("authMechanism=MONGODB-X509 needs a client certificate: set tlsCertificateKeyFile in the upstream URI",
                x509.unusableBecause(false));
        assertNull(x509.unusableBecause(true));
        assertTrue(of("CN=client", "pw", null, Map.of("authmechanism", "MONGODB-X509")).unusableBecause(true).contains("takes no password"));
        assertTrue(of(null, null, null, Map.of("authmechanism", "MONGODB-X509", "authsource", "admin")).unusableBecause(true)
                .contains("authenticates on $external, not on authSource=admin"));
    }

    @Test
    void printingNeverShowsThePassword() {
        Credential credential = of("alice", "s3cret!", "app", Map.of());
        assertEquals("Credential['alice' on app (mechanism negotiated), password ****]", credential.toString());
        assertFalse(String.valueOf(credential).contains("s3cret"));
        assertEquals("'alice' on app (SCRAM-SHA-256)", credential.describe(Mechanism.SCRAM_SHA_256));
        assertEquals("the client certificate's subject on $external (MONGODB-X509)",
                of(null, null, null, Map.of("authmechanism", "MONGODB-X509")).describe(Mechanism.MONGODB_X509));
    }
}
