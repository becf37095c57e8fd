package io.blackpipe.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import java.lang.reflect.Field;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The upstream URI's options as drivers take them: conflicts and an empty replicaSet refused, an
 * option no driver knows warned of, those blackpipe passes by named.
 */
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

    @Test
    void eachOptionNoDriverKnowsGetsAWarningNamingItAsWrittenOnceWhateverItsCase() {
        UpstreamUri uri = UpstreamUri.parse("mongodb://h1/?replSet=rs0&ReadPreference=secondary&readPref=x&REPLSET=rs1");
        assertEquals(List.of(
                "the upstream URI option replSet is no MongoDB connection string option (misspelt? names are case-insensitive): ignored",
                "the upstream URI option readPref is no MongoDB connection string option (misspelt? names are case-insensitive): ignored"),
                uri.unknownOptionWarnings());
        assertEquals(List.of(), UpstreamUri.parse("mongodb://h1/?REPLICASET=rs0&TLS=false&authSource=admin&w=1")
                .unknownOptionWarnings(), "known in any case, whether blackpipe uses them or passes them by");
    }

    @Test
    void optionsValidForDriversThatBlackpipePassesByAreNamedInOneNote() {
        assertEquals("the upstream URI options ReadPreference, w, retryWrites, appName, compressors, connectTimeoutMS shape a"
                + " driver's client, not blackpipe's connections to the deployment: give them in the application's connection string",
                UpstreamUri.parse("mongodb://h1/?replicaSet=rs0&ReadPreference=secondary&w=majority&retryWrites=true&appName=shop"
                        + "&compressors=zlib&connectTimeoutMS=2000&tls=false").passedByOptionsNote());
        assertEquals("the upstream URI option timeoutMS shapes a driver's client, not blackpipe's connections to the deployment:"
                + " give it in the application's connection string", UpstreamUri.parse("mongodb://h1/?timeoutMS=5").passedByOptionsNote());
        assertNull(UpstreamUri.parse("mongodb://h1/?replicaSet=rs0&authSource=admin&directConnection=false").passedByOptionsNote(),
                "every option blackpipe uses itself");
        assertNull(UpstreamUri.parse("mongodb://h1/").passedByOptionsNote());
    }

    @Test
    void everyOptionTheJavaDriverKnowsIsKnown() throws ReflectiveOperationException {
        // the driver's own list, read where it keeps it: what it accepts without "unsupported option" must not be called unknown here
        Field allKeys = ConnectionString.class.getDeclaredField("ALL_KEYS");
        allKeys.setAccessible(true);
        Set<?> driverKeys = (Set<?>) allKeys.get(null);
        assertTrue(driverKeys.size() > 40, () -> "the driver's list looks wrong: " + driverKeys);
        for (Object key : driverKeys) {
            assertTrue(UpstreamUriOptions.known((String) key), () -> key + " is a Java driver option");
        }
        for (String specOnly : List.of("tlsCAFile", "tlsCertificateKeyFile", "tlsAllowInvalidCertificates", "serverSelectionTryOnce",
                "tlsDisableOCSPEndpointCheck", "tlsDisableCertificateRevocationCheck")) {
            assertTrue(UpstreamUriOptions.known(specOnly.toLowerCase(Locale.ROOT)), () -> specOnly + " is in the URI Options spec");
        }
    }

    @Test
    void anOptionNameThatMayBePasswordIsNotQuoted() {
        // an '@' in a later value: all before it may be password, the names there too
        UpstreamUri uri = UpstreamUri.parse("mongodb://u:pw@db1/?Kq3vX=1&appName=a@b");
        assertEquals(1, uri.unknownOptionWarnings().size());
        assertTrue(uri.unknownOptionWarnings().get(0).startsWith("the upstream URI option **** is no MongoDB"), uri::toString);
        assertFalse(String.join(" ", uri.unknownOptionWarnings()).contains("Kq3v"));
    }
}
