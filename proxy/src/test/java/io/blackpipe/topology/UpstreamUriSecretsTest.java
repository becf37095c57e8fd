package io.blackpipe.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * No message about an upstream URI shows its password, in whole or in part, whatever the URI's shape:
 * a password with an unescaped '/', '?', '@', '%' leaves a URI that drivers reject, and the part of it
 * that the parser then misreads as a host, a database or an option must not be quoted either. Each
 * password here is made of the tokens Kq3v and Zw8p around the character that breaks the URI.
 */
public class UpstreamUriSecretsTest {
    /** The pieces of the passwords below; no two of their characters in a row may appear in a message. */
    private static final List<String> SECRET_TOKENS = List.of("Kq3v", "Zw8p");

    public static void assertShowsNoSecret(String shown) {
        for (String token : SECRET_TOKENS) {
            for (int i = 0; i + 2 <= token.length(); i++) {
                String piece = token.substring(i, i + 2);
                assertFalse(shown.contains(piece), () -> "'" + piece + "' of the password shows in: " + shown);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "mongodb://user:Kq3v/Zw8p@db1:27017/?replicaSet=rs0",   // '/': the password's start reads as a host with a bad port
            "mongodb://user:Kq3v/Zw8p@db1:27017/admin",             // and its end as a database with '/'
            "mongodb://user:Kq3v/Zw8p@db1",                         // no path after the host
            "mongodb://user:27/Zw8p@db1",                           // a password that starts with digits reads as a port
            "mongodb://user:27/Zw8p@db1/admin?replicaSet=rs0",
            "mongodb://user:Kq3v?Zw8p@db1/",                        // '?': the rest reads as options
            "mongodb://user:27?Zw8p@db1/",                          // and as an option without '='
            "mongodb://user:27?authMechanism=Zw8p@db1/",            // or as an option's value
            "mongodb://user:27?tls=Zw8p@db1/",
            "mongodb://user:27/x?authSource=&Zw8p@db1/",
            "mongodb://user:Kq3v%Zw8p@db1/",                        // '%' that is no escape
            "mongodb://user:Kq3v%@db1/",
            "mongodb://user:Kq3v%zZw8p@db1/",
            "mongodb://user:Kq3v/Zw8p@db1,,db2/",                   // and something else wrong besides
            "mongodb://user:Kq3v/Zw8p@[::1/",
            "mongodb://user:Kq3v/Zw8p@/db",
            "mongodb://user:Kq3v/%zz@db1/",
            "mongodb://user:27/Zw8p%@db1/",
            "mongodb:/user:Kq3v/Zw8p@db1/",                         // not even the scheme is right
            "mongodb:user:Kq3v@Zw8p@db1/",
            "user:Kq3v/Zw8p@db1:27017",
            "http://user:Kq3v/Zw8p@db1/",
            "mongodb+srv://user:Kq3v/Zw8p@cluster0.example.net/"})
    void aMalformedUriIsRejectedWithoutShowingItsPassword(String uri) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> UpstreamUri.parse(uri),
                () -> "accepted: " + uri);
        List<String> said = new ArrayList<>();
        for (Throwable t = e; t != null; t = t.getCause()) { // a cause is printed with a stack trace: it must be clean too
            said.add(String.valueOf(t.getMessage()));
        }
        said.forEach(UpstreamUriSecretsTest::assertShowsNoSecret);
        assertTrue(e.getMessage().startsWith("the upstream URI") || e.getMessage().startsWith("mongodb+srv://"), e::getMessage);
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "mongodb://user:Kq3v@Zw8p@db1/",               // an unescaped '@': the last one of the host part ends the user info
            "mongodb://user:Kq3v#Zw8p@db1:27017/?replicaSet=rs0",
            "mongodb://user:Kq3v&Zw8p@db1/",
            "mongodb://user:Kq3v%2FZw8p@db1/?tlsCertificateKeyFilePassword=Kq3vZw8p&tlsCertificateKeyFile=/k.pem",
            "mongodb://user:Kq3v@db1/?authMechanism=MONGODB-AWS&authSource=$external&authMechanismProperties=AWS_SESSION_TOKEN:Zw8pKq3v"})
    void anAcceptedUriIsShownWithoutItsPassword(String uri) {
        UpstreamUri parsed = UpstreamUri.parse(uri);
        assertShowsNoSecret(parsed.toString());
        assertShowsNoSecret(String.valueOf(parsed.credential()));
        assertTrue(parsed.toString().startsWith("mongodb://user:****@db1"), parsed::toString);
    }

    /** The widest reading of where a password may end also covers an '@' in an option: shown masked, never in clear. */
    @ParameterizedTest
    @ValueSource(strings = {"mongodb://user:27?appName=Zw8p@db1/", "mongodb://db1:27?appName=Zw8p@corp"})
    void anAtInAnOptionValueMasksUpToIt(String uri) {
        assertShowsNoSecret(UpstreamUri.parse(uri).toString());
        assertEquals(List.of(new MemberAddress(uri.contains("user") ? "user" : "db1", 27)), UpstreamUri.parse(uri).seeds());
    }
}
