package io.blackpipe.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The upstream URI's options taken together, as drivers take them: conflicts refused, an empty replicaSet refused. */
class UpstreamUriOptionsTest {
    private static String refused(String uri) {
        return assertThrows(IllegalArgumentException.class, () -> UpstreamUri.parse(uri), uri).getMessage();
    }

    @Test
    void tlsAndSslThatDifferAreRefusedNamingBothAsWritten() {
        assertEquals("the upstream URI options tls=true and SSL=false conflict (ssl is another name for tls, and drivers"
                + " refuse a URI whose tls and ssl differ): give one value", refused("mongodb://h1/?tls=true&SSL=false"));
        assertTrue(refused("mongodb://h1/?tls=true&replicaSet=rs0&tls=false").startsWith(
                "the upstream URI options tls=true and tls=false conflict"), "a repeated tls is one of 'all instances' too");
        assertTrue(refused("mongodb+srv://cluster0.example.com/?ssl=false&tls=true").startsWith(
                "the upstream URI options ssl=false and tls=true conflict"), "refused before any DNS lookup");
    }

    @Test
    void tlsAndSslThatAgreeAreOneSwitch() {
        assertTrue(UpstreamUri.parse("mongodb://h1/?tls=true&ssl=TRUE").tls().enabled());
        assertFalse(UpstreamUri.parse("mongodb://h1/?ssl=false&tls=false").tls().enabled());
        assertTrue(UpstreamUri.parse("mongodb://h1/?ssl=true").tls().enabled(), "ssl alone is tls");
    }

    @ParameterizedTest(name = "{0} and {1}")
    @CsvSource({
            "tlsInsecure, tlsAllowInvalidCertificates", "tlsInsecure, tlsAllowInvalidHostnames",
            "tlsInsecure, tlsDisableOCSPEndpointCheck", "tlsInsecure, tlsDisableCertificateRevocationCheck",
            "tlsAllowInvalidCertificates, tlsDisableOCSPEndpointCheck",
            "tlsAllowInvalidCertificates, tlsDisableCertificateRevocationCheck",
            "tlsDisableOCSPEndpointCheck, tlsDisableCertificateRevocationCheck", "tlsInsecure, sslInvalidHostNameAllowed"})
    void optionsTheSpecSaysConflictAreRefusedTogetherWhateverTheirValues(String one, String other) {
        String expected = "the upstream URI sets both " + one + " and " + other + ", which conflict whatever their values"
                + " (drivers refuse them together, as the URI Options spec says): give one of them";
        assertEquals(expected, refused("mongodb://h1/?" + one + "=true&" + other + "=true"));
        assertEquals(expected, refused("mongodb://h1/?" + other.toUpperCase() + "=false&" + one.toLowerCase() + "=false"),
                "names are case-insensitive, and a false one conflicts too");
    }

    @Test
    void optionsThatDoNotConflictAreTakenTogether() {
        assertTrue(UpstreamUri.parse("mongodb://h1/?tlsAllowInvalidCertificates=true&tlsAllowInvalidHostnames=true").tls().enabled());
        assertTrue(UpstreamUri.parse("mongodb://h1/?tls=true&tlsInsecure=true").tls().enabled());
    }

    @Test
    void anEmptyReplicaSetIsRefusedRatherThanRequiredOfTheSeeds() {
        String expected = "the upstream URI's replicaSet= is empty: name the replica set the seeds must belong to,"
                + " or leave replicaSet out to proxy whatever they report";
        assertEquals(expected, refused("mongodb://h1/?replicaSet="));
        assertEquals(expected, refused("mongodb://h1,h2/?replicaSet=&w=1"));
        assertEquals(expected, refused("mongodb+srv://cluster0.example.com/?replicaSet="), "refused before any DNS lookup");
    }
}
