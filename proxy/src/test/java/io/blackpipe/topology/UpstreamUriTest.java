package io.blackpipe.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.wire.auth.Credential;
import io.blackpipe.wire.auth.Mechanism;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class UpstreamUriTest {
    private static void assertRejected(String uri, String reason) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> UpstreamUri.parse(uri));
        assertTrue(e.getMessage().contains(reason), () -> "expected '" + reason + "' in: " + e.getMessage());
    }

    @Test
    void multipleHostsWithAndWithoutPorts() {
        UpstreamUri uri = UpstreamUri.parse("mongodb://db1.example.com:27017,DB2.example.com,[::1]:27019/app?replicaSet=rs0");
        assertEquals(List.of(new MemberAddress("db1.example.com", 27017), new MemberAddress("db2.example.com", 27017),
                new MemberAddress("::1", 27019)), uri.seeds());
        assertNull(uri.username());
        assertNull(uri.password());
        assertEquals("rs0", uri.replicaSet());
        assertFalse(uri.directConnection());
    }

    @Test
    void singleHostWithoutPathOrOptions() {
        UpstreamUri uri = UpstreamUri.parse("mongodb://localhost");
        assertEquals(List.of(new MemberAddress("localhost", 27017)), uri.seeds());
        assertEquals(Map.of(), uri.options());
        assertNull(uri.replicaSet());
        assertEquals("mongodb://localhost", uri.toString());
    }

    @Test
    void credentialsAreUrlDecoded() {
        UpstreamUri uri = UpstreamUri.parse("mongodb://us%40er:p%40ss%3Aw%2Fd%25@h1:27017,h2/?authSource=admin");
        assertEquals("us@er", uri.username());
        assertEquals("p@ss:w/d%", uri.password());
        assertEquals(List.of(new MemberAddress("h1", 27017), new MemberAddress("h2", 27017)), uri.seeds());
        assertEquals("admin", uri.options().get("authsource"));
    }

    @Test
    void thePathDatabaseIsKeptDecoded() {
        assertEquals("app", UpstreamUri.parse("mongodb://h1/app?replicaSet=rs0").database());
        assertEquals("my db", UpstreamUri.parse("mongodb://h1,h2/my%20db").database());
        assertNull(UpstreamUri.parse("mongodb://h1/?replicaSet=rs0").database());
        assertNull(UpstreamUri.parse("mongodb://h1?replicaSet=rs0").database());
        assertNull(UpstreamUri.parse("mongodb://h1").database());
    }

    @Test
    void theCredentialComesFromUserInfoDatabaseAndOptions() {
        Credential credential = UpstreamUri.parse("mongodb://al%40ice:p%40ss%3Aword@h1/app?authSource=users&authMechanism=SCRAM-SHA-1")
                .credential();
        assertEquals(new Credential("al@ice", "p@ss:word", "users", Mechanism.SCRAM_SHA_1), credential);
        assertEquals(new Credential("bob", "pw", "app", null), UpstreamUri.parse("mongodb://bob:pw@h1/app").credential());
        assertNull(UpstreamUri.parse("mongodb://h1/app?authSource=admin").credential());
    }

    @Test
    void anUnknownAuthMechanismStopsTheParse() {
        assertRejected("mongodb://u:pw@h1/?authMechanism=SCRAM-SHA-512", "authMechanism=SCRAM-SHA-512 is not a MongoDB authentication mechanism");
        assertRejected("mongodb://u:pw@h1/?authSource=", "authSource= is empty");
        // Known mechanisms the control client cannot speak are no parse error: only failover needs them.
        assertEquals(Mechanism.GSSAPI, UpstreamUri.parse("mongodb://u%40REALM@h1/?authMechanism=GSSAPI").credential().mechanism());
    }

    @Test
    void errorMessagesMaskThePassword() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> UpstreamUri.parse("mongodb://u:s3cret@/db"));
        assertFalse(e.getMessage().contains("s3cret"), e.getMessage());
        assertTrue(e.getMessage().contains("mongodb://u:****@/db"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> UpstreamUri.parse("http://u:s3cret@h1/"));
        assertFalse(e.getMessage().contains("s3cret"), e.getMessage());
        assertFalse(String.valueOf(UpstreamUri.parse("mongodb://u:s3cret@h1/").credential()).contains("s3cret"));
    }

    @Test
    void theClientKeysPasswordIsMaskedToo() {
        UpstreamUri uri = UpstreamUri.parse("mongodb://h1/?tls=true&tlsCertificateKeyFile=/c.pem&tlsCertificateKeyFilePassword=k3ysecret&appName=a");
        assertEquals("mongodb://h1/?tls=true&tlsCertificateKeyFile=/c.pem&tlsCertificateKeyFilePassword=****&appName=a", uri.toString());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> UpstreamUri.parse("mongodb://u:s3cret@h1,/?tlscertificatekeyfilepassword=k3ysecret"));
        assertFalse(e.getMessage().contains("k3ysecret"), e.getMessage());
        assertFalse(e.getMessage().contains("s3cret"), e.getMessage());
    }

    @Test
    void aPlusInTheUserInfoIsAPlusAsTheJavaDriverReadsIt() {
        String text = "mongodb://u+1:a+b%2Bc@h1/?appName=x+y";
        UpstreamUri uri = UpstreamUri.parse(text);
        com.mongodb.ConnectionString driver = new com.mongodb.ConnectionString(text);
        assertEquals("u+1", uri.username());
        assertEquals("a+b+c", uri.password());
        assertEquals(driver.getUsername(), uri.username());
        assertEquals(new String(driver.getPassword()), uri.password());
        assertEquals(driver.getApplicationName(), uri.options().get("appname"), "in option values '+' is a space, for both");
    }

    @Test
    void usernameWithoutPassword() {
        UpstreamUri uri = UpstreamUri.parse("mongodb://CN%3Dclient@h1/?authMechanism=MONGODB-X509");
        assertEquals("CN=client", uri.username());
        assertNull(uri.password());
        assertEquals("mongodb://CN%3Dclient@h1/?authMechanism=MONGODB-X509", uri.toString(), "nothing to mask");
    }

    @Test
    void toStringMasksAPlainPassword() {
        UpstreamUri uri = UpstreamUri.parse("mongodb://admin:s3cret@h1:27017/?replicaSet=rs0");
        assertEquals("mongodb://admin:****@h1:27017/?replicaSet=rs0", uri.toString());
        assertEquals("mongodb://admin:s3cret@h1:27017/?replicaSet=rs0", uri.text(), "the original text is kept");
    }

    @Test
    void toStringMasksAUrlEscapedPassword() {
        UpstreamUri uri = UpstreamUri.parse("mongodb://admin:p%40ss%3Aword@h1,h2/?replicaSet=rs0");
        String shown = uri.toString();
        assertEquals("mongodb://admin:****@h1,h2/?replicaSet=rs0", shown);
        assertFalse(shown.contains("p%40ss"), shown);
        assertFalse(shown.contains("p@ss"), shown);
    }

    @Test
    void toStringMasksAPasswordContainingAnUnescapedAt() {
        // lenient: the last '@' of the authority ends the user info
        UpstreamUri uri = UpstreamUri.parse("mongodb://u:a@b@h1/");
        assertEquals("a@b", uri.password());
        assertEquals(List.of(new MemberAddress("h1", 27017)), uri.seeds());
        assertEquals("mongodb://u:****@h1/", uri.toString());
    }

    @Test
    void optionNamesAreLowercasedAndValuesDecodedButKeptAsWritten() {
        UpstreamUri uri = UpstreamUri.parse(
                "mongodb://h1/db?replicaSet=RS0&ReadPreference=secondaryPreferred&directConnection=TRUE&appName=my%20app");
        assertEquals(List.of("replicaset", "readpreference", "directconnection", "appname"), List.copyOf(uri.options().keySet()));
        assertEquals("RS0", uri.replicaSet());
        assertEquals("secondaryPreferred", uri.options().get("readpreference"));
        assertEquals("my app", uri.options().get("appname"));
        assertTrue(uri.directConnection());
    }

    @Test
    void emptyOptionPairsAreSkipped() {
        UpstreamUri uri = UpstreamUri.parse("mongodb://h1/?&w=majority&&");
        assertEquals(Map.of("w", "majority"), uri.options());
    }

    @Test
    void optionsWithoutAPathSlash() {
        UpstreamUri uri = UpstreamUri.parse("mongodb://h1:27018?replicaSet=rs1");
        assertEquals(List.of(new MemberAddress("h1", 27018)), uri.seeds());
        assertEquals("rs1", uri.replicaSet());
    }

    @Test
    void optionValueWithASlashDoesNotCutTheHostList() {
        UpstreamUri uri = UpstreamUri.parse("mongodb://h1:27018?tlsCAFile=/etc/ssl/ca.pem");
        assertEquals(List.of(new MemberAddress("h1", 27018)), uri.seeds());
        assertEquals("/etc/ssl/ca.pem", uri.options().get("tlscafile"));
    }

    @Test
    void optionWithoutEqualsIsRejected() {
        assertRejected("mongodb://h1/?replicaSet", "option 'replicaSet' is not name=value");
        assertRejected("mongodb://h1/?=x", "option '=x' is not name=value");
    }

    @Test
    void directConnectionFalseOrAbsent() {
        assertFalse(UpstreamUri.parse("mongodb://h1/?directConnection=false").directConnection());
        assertFalse(UpstreamUri.parse("mongodb://h1/").directConnection());
    }

    @Test
    void directConnectionIsTrueOrFalseAndTrueTakesOneHost() {
        assertTrue(UpstreamUri.parse("mongodb://h1/?directConnection=TRUE").directConnection());
        // the Java driver would read "yes" as true: read as false, it proxied the whole set instead of the one member
        assertRejected("mongodb://h1/?directConnection=yes", "the upstream URI option directConnection=yes must be true or false");
        assertRejected("mongodb://h1,h2:27018/?directConnection=true",
                "the upstream URI option directConnection=true takes one host, the URI names 2: name the one member to proxy,"
                        + " or leave directConnection out to proxy the whole deployment");
        assertEquals(2, UpstreamUri.parse("mongodb://h1,h2:27018/?directConnection=false").seeds().size());
    }

    @Test
    void srvOptionsBelongToSrvUrisOnly() {
        assertRejected("mongodb://h1/?srvServiceName=customname", "the upstream URI option srvServiceName is for mongodb+srv:// URIs only");
        assertRejected("mongodb://h1/?srvMaxHosts=2", "the upstream URI option srvMaxHosts is for mongodb+srv:// URIs only");
    }

    @Test
    void emptyHostsAreRejected() {
        assertRejected("mongodb://h1,,h2/", "has an empty host");
        assertRejected("mongodb:///db", "has an empty host");
        assertRejected("mongodb://", "has an empty host");
        assertRejected("mongodb://user:pw@/db", "has an empty host");
        assertRejected("mongodb://h1,/", "has an empty host");
    }

    @Test
    void emptyOrForeignUrisAreRejected() {
        assertRejected(null, "the upstream URI is empty");
        assertRejected("  ", "the upstream URI is empty");
        assertRejected("http://h1/", "must start with mongodb:// or mongodb+srv://");
        assertRejected("h1:27017", "must start with mongodb:// or mongodb+srv://, got 'h1:27017'");
    }

    @Test
    void badPortInAHostIsRejected() {
        assertRejected("mongodb://h1:notaport/", "port 'notaport' is not a number");
    }

    @Test
    void seedsAndOptionsAreUnmodifiable() {
        UpstreamUri uri = UpstreamUri.parse("mongodb://h1/?w=1");
        assertThrows(UnsupportedOperationException.class, () -> uri.seeds().add(new MemberAddress("x", 1)));
        assertThrows(UnsupportedOperationException.class, () -> uri.options().put("w", "2"));
    }

    @Test
    void anOptionIsDescribedAsGivenUnlessItMayBePassword() {
        assertEquals("replicaSet=rs 0", UpstreamUri.parse("mongodb://u:pw@db1/?replicaSet=rs%200").describeOption("replicaSet"));
        assertEquals("replicaSet=rs0", UpstreamUri.parse("mongodb://db1/?REPLICASET=rs0").describeOption("replicaSet"));
        // an '@' in a later option: everything up to it may be password, so no message quotes what lies there
        UpstreamUri ambiguous = UpstreamUri.parse("mongodb://u:pw@db1/?replicaSet=Kq3v&appName=a@b");
        assertEquals("Kq3v", ambiguous.replicaSet());
        assertEquals("replicaSet=****", ambiguous.describeOption("replicaSet"));
    }

    @Test
    void loadBalancedTrueIsRefusedNamingWhatToGiveInstead() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> UpstreamUri.parse("mongodb://u:pw@lb.example.com:27017/?loadBalanced=TRUE"));
        assertTrue(e.getMessage().startsWith("the upstream URI option loadBalanced=true is not supported: blackpipe has no"
                + " load-balanced mode"), e::getMessage);
        assertTrue(e.getMessage().endsWith("give the address of a mongos, or of the replica set's members, instead:"
                + " a mongodb:// URI without loadBalanced"), e::getMessage);
        assertRejected("mongodb://db1/?loadBalanced=yes", "the upstream URI option loadBalanced=yes must be true or false");
        assertEquals("false", UpstreamUri.parse("mongodb://db1/?loadBalanced=false").options().get("loadbalanced"),
                "false is what blackpipe does anyway");
    }
}
