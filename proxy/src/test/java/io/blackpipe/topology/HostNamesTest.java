package io.blackpipe.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** One address, one spelling: "[::1]" given as a host was advertised "[[::1]]", and a client shown as "[0:0:0:0:0:0:0:1]". */
class HostNamesTest {

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({
            "::1, [::1]:27017",
            "[::1], [::1]:27017",
            "0:0:0:0:0:0:0:1, [::1]:27017",
            "[0:0:0:0:0:0:0:1], [::1]:27017",
            "2001:DB8:0:0:0:0:0:99, [2001:db8::99]:27017",
            "::ffff:127.0.0.1, [::ffff:127.0.0.1]:27017",
            "fe80::1%lo, [fe80::1%lo]:27017",
            "127.0.0.1, 127.0.0.1:27017",
            "Mongo-1.Example, mongo-1.example:27017",
    })
    void anAddressIsWrittenOneWay(String host, String written) {
        assertEquals(written, HostNames.withPort(host, 27017));
        assertEquals(written, new MemberAddress(host, 27017).toString(), "a member's address too");
    }

    @ParameterizedTest
    @ValueSource(strings = {"0.0.0.0", "::", "[::]", "::0", "0:0:0:0:0:0:0:0"})
    void aWildcardIsKnownHoweverItIsSpelt(String host) {
        assertTrue(HostNames.isWildcard(host));
    }

    @ParameterizedTest
    @ValueSource(strings = {"127.0.0.1", "::1", "localhost", "0.0.0.1"})
    void anAddressOfOneInterfaceIsNoWildcard(String host) {
        assertFalse(HostNames.isWildcard(host));
    }

    @ParameterizedTest
    @ValueSource(strings = {"localhost", "mongo1", "db_primary.svc.cluster.local", "mongo-1.example.", "10.0.0.7", "::1", "[::1]",
            "fe80::1%eth0", "::ffff:10.0.0.7"})
    void aHostAppsCanDialIsTaken(String host) {
        assertNull(HostNames.whyNotAHostName(host));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "bad name|is not a host name (letters, digits, '-' and '_' in dot-separated labels) or an IP address",
            "-mongo|is not a host name (letters, digits, '-' and '_' in dot-separated labels) or an IP address",
            "a..b|is not a host name (letters, digits, '-' and '_' in dot-separated labels) or an IP address",
            "::g|is not an IPv6 address (give a host name or an IP address, without a port)",
            "::1:27017|gives a port: give the host alone (each listener's port goes with it)",
            "[::1]:5|gives a port: give the host alone (each listener's port goes with it)",
            "mongo:27017|gives a port: give the host alone (each listener's port goes with it)",
            "10.0.0.7:27017|gives a port: give the host alone (each listener's port goes with it)",
            "[mongo]|is not an IPv6 address (brackets hold one, and nothing else)",
            "0.0.0.0|is a wildcard address, which apps cannot dial: give the name or address they reach this machine by",
            "::|is a wildcard address, which apps cannot dial: give the name or address they reach this machine by",
            "[::]|is a wildcard address, which apps cannot dial: give the name or address they reach this machine by",
            "999.1.1.1|is not an IPv4 address",
            "0.0.0.0:27017|gives a port: give the host alone (each listener's port goes with it)",
            "999.1.1.1:27017|gives a port: give the host alone (each listener's port goes with it)",
            "fe80::1%eth0:27017|gives a port: give the host alone (each listener's port goes with it)",
            "[10.0.0.1]|is not an IPv6 address (brackets hold one, and nothing else)",
            "::ffff:0.0.0.0|is a wildcard address, which apps cannot dial: give the name or address they reach this machine by",
    })
    void aHostAppsCannotDialIsSaidWhy(String host, String why) {
        assertEquals(why, HostNames.whyNotAHostName(host));
    }
}
