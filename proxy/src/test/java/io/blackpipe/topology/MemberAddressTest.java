package io.blackpipe.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class MemberAddressTest {
    private static void assertRejected(String text, String reason) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> MemberAddress.parse(text));
        assertTrue(e.getMessage().contains(reason), () -> "expected '" + reason + "' in: " + e.getMessage());
    }

    @Test
    void hostAloneGetsTheDefaultPort() {
        MemberAddress a = MemberAddress.parse("db1.example.com");
        assertEquals("db1.example.com", a.host());
        assertEquals(27017, a.port());
        assertEquals(MemberAddress.DEFAULT_PORT, a.port());
        assertEquals("db1.example.com:27017", a.toString());
    }

    @Test
    void hostAndPort() {
        MemberAddress a = MemberAddress.parse("db2.example.com:27018");
        assertEquals("db2.example.com", a.host());
        assertEquals(27018, a.port());
    }

    @Test
    void hostNamesCompareCaseInsensitively() {
        MemberAddress upper = MemberAddress.parse("DB1.Example.COM:27018");
        assertEquals("db1.example.com", upper.host());
        assertEquals(MemberAddress.parse("db1.example.com:27018"), upper);
        assertEquals(MemberAddress.parse("db1.example.com:27018").hashCode(), upper.hashCode());
    }

    @Test
    void ipv6InBracketsWithAndWithoutPort() {
        MemberAddress withPort = MemberAddress.parse("[::1]:27018");
        assertEquals("::1", withPort.host());
        assertEquals(27018, withPort.port());
        assertEquals("[::1]:27018", withPort.toString());
        MemberAddress without = MemberAddress.parse("[FE80::1]");
        assertEquals("fe80::1", without.host());
        assertEquals(27017, without.port());
        assertEquals("[fe80::1]:27017", without.toString());
    }

    @Test
    void surroundingWhitespaceIsIgnored() {
        assertEquals(new MemberAddress("h", 1), MemberAddress.parse("  h:1 \t"));
    }

    @Test
    void toStringRoundTrips() {
        for (String text : new String[] {"a:1", "[::1]:2", "host.example:65535"}) {
            assertEquals(text, MemberAddress.parse(text).toString());
            assertEquals(MemberAddress.parse(text), MemberAddress.parse(MemberAddress.parse(text).toString()));
        }
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "host:abc     | 'host:abc': port 'abc' is not a number",
        "host:        | 'host:': port '' is not a number",
        "[::1]:x1     | '[::1]:x1': port 'x1' is not a number",
        "host:70000   | 'host:70000': port 70000 is out of range",
        "[::1]:99999  | '[::1]:99999': port 99999 is out of range",
        "host:-1      | 'host:-1': port -1 is out of range",
        "[::1         | '[::1': unterminated IPv6 address",
        "[::1]27017   | '[::1]27017': expected ':' after ']'",
        ":27017       | ':27017': empty host name",
        "mongo:27017:1 | 'mongo:27017:1': a host has no ':' (an IPv6 address goes in brackets: [::1]:27017)",
    })
    void badAddressesNameTheProblem(String text, String reason) {
        assertRejected(text, reason);
    }

    @Test
    void emptyTextIsRejected() {
        assertRejected("", "empty host name");
        assertRejected("   ", "empty host name");
    }

    @Test
    void constructorChecksItsArguments() {
        assertThrows(IllegalArgumentException.class, () -> new MemberAddress(null, 1));
        assertThrows(IllegalArgumentException.class, () -> new MemberAddress("h", 65536));
        assertEquals(0, new MemberAddress("h", 0).port(), "port 0 (any port) is representable");
    }
}
