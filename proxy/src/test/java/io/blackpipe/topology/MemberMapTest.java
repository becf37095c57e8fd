package io.blackpipe.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.BindException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MemberMapTest {
    private static final MemberAddress A = MemberAddress.parse("a.example:27017");
    private static final MemberAddress B = MemberAddress.parse("b.example:27017");
    private static final MemberAddress C = MemberAddress.parse("c.example:27017");
    private static final MemberAddress D = MemberAddress.parse("d.example:27018");

    /** Every call the fake opener received, as "member@requestedPort". */
    private final List<String> opened = new ArrayList<>();

    private MemberMap.ListenerOpener recordingOpener() {
        return (upstream, port) -> {
            opened.add(upstream + "@" + port);
            return port;
        };
    }

    @Test
    void basePortThenPlusOnePlusTwo() {
        MemberMap map = new MemberMap("proxy.local", 40000, Map.of(), recordingOpener());
        assertEquals(new MemberAddress("proxy.local", 40000), map.ensure(A).advertised());
        assertEquals(new MemberAddress("proxy.local", 40001), map.ensure(B).advertised());
        assertEquals(new MemberAddress("proxy.local", 40002), map.ensure(C).advertised());
        assertEquals(List.of("a.example:27017@40000", "b.example:27017@40001", "c.example:27017@40002"), opened);
        assertEquals(A, map.ensure(A).upstream());
    }

    @Test
    void sameMemberKeepsItsPortAndEnsureIsIdempotent() {
        MemberMap map = new MemberMap("proxy.local", 40000, Map.of(), recordingOpener());
        Member first = map.ensure(A);
        map.ensure(B);
        Member again = map.ensure(A);
        Member differentCase = map.ensure(MemberAddress.parse("A.EXAMPLE:27017"));
        assertSame(first, again);
        assertSame(first, differentCase);
        assertEquals(2, opened.size(), "the listener of a known member is not opened again: " + opened);
        assertEquals(List.of(first, map.ensure(B)), map.members());
    }

    @Test
    void pinnedPortsAreUsedAndSkippedByTheSequence() {
        MemberMap map = new MemberMap("proxy.local", 40000, Map.of(B, 40001, D, 40003), recordingOpener());
        assertEquals(40000, map.ensure(A).advertised().port());
        assertEquals(40002, map.ensure(C).advertised().port(), "40001 is pinned to b");
        assertEquals(40001, map.ensure(B).advertised().port());
        assertEquals(40003, map.ensure(D).advertised().port());
        MemberAddress e = MemberAddress.parse("e.example");
        assertEquals(40004, map.ensure(e).advertised().port(), "40003 is pinned to d");
        assertEquals(List.of("a.example:27017@40000", "c.example:27017@40002", "b.example:27017@40001",
                "d.example:27018@40003", "e.example:27017@40004"), opened);
    }

    @Test
    void pinnedPortsApplyWithBasePortZeroToo() {
        MemberMap map = new MemberMap("proxy.local", 0, Map.of(B, 41000), recordingOpener());
        assertEquals(41000, map.ensure(B).advertised().port());
        assertEquals(List.of("b.example:27017@41000"), opened);
    }

    @Test
    void basePortZeroAsksForAnyPortAndAdvertisesWhatTheOpenerBound() {
        int[] next = {53000};
        MemberMap map = new MemberMap("127.0.0.1", 0, Map.of(), (upstream, port) -> {
            opened.add(upstream + "@" + port);
            return next[0]++;
        });
        assertEquals(new MemberAddress("127.0.0.1", 53000), map.ensure(A).advertised());
        assertEquals(new MemberAddress("127.0.0.1", 53001), map.ensure(B).advertised());
        assertEquals(List.of("a.example:27017@0", "b.example:27017@0"), opened);
        assertEquals(53000, map.ensure(A).advertised().port(), "kept, not re-opened");
        assertEquals(2, opened.size());
    }

    @Test
    void openerFailureNamesThePortAndTheMember() {
        MemberMap map = new MemberMap("proxy.local", 40000, Map.of(), (upstream, port) -> {
            if (port == 40001) {
                throw new BindException("Address already in use");
            }
            return port;
        });
        map.ensure(A);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> map.ensure(B));
        assertEquals("cannot listen on port 40001 for member b.example:27017: Address already in use", e.getMessage());
        assertInstanceOf(BindException.class, e.getCause());
        assertNull(map.byUpstream(B), "a member without a listener is not registered");
        assertEquals(List.of(A), List.copyOf(map.upstreams()));
        assertEquals(40002, map.ensure(C).advertised().port(), "the failed port is not handed to the next member");
    }

    @Test
    void pinnedPortFailureIsAnErrorNotAnotherPort() {
        MemberMap map = new MemberMap("proxy.local", 40000, Map.of(A, 27017), (upstream, port) -> {
            throw new BindException("Permission denied");
        });
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> map.ensure(A));
        assertTrue(e.getMessage().contains("port 27017") && e.getMessage().contains("a.example:27017"), e.getMessage());
    }

    @Test
    void lookupsReflectWhatWasEnsured() {
        MemberMap map = new MemberMap("proxy.local", 40000, Map.of(), recordingOpener());
        assertTrue(map.members().isEmpty());
        assertNull(map.byUpstream(A));
        Member a = map.ensure(A);
        Member c = map.ensure(C);
        assertSame(a, map.byUpstream(A));
        assertSame(c, map.byUpstream(MemberAddress.parse("C.Example")));
        assertEquals(List.of(a, c), map.members());
        assertEquals(List.of(A, C), List.copyOf(map.upstreams()));
        map.members().clear();
        assertEquals(2, map.members().size(), "members() returns a copy");
    }

    @Test
    void dialAddressIsTheUpstreamUnlessAliased() {
        MemberAddress seed = MemberAddress.parse("localhost:32768");
        MemberMap map = new MemberMap("proxy.local", 40000, Map.of(), Map.of(B, seed), recordingOpener());
        Member a = map.ensure(A);
        Member b = map.ensure(B);
        assertEquals(A, a.dial());
        assertEquals(B, b.upstream(), "the member keeps its set name");
        assertEquals(seed, b.dial(), "but is dialled through its alias");
        assertEquals(new MemberAddress("proxy.local", 40001), b.advertised());
        assertEquals(List.of("a.example:27017@40000", "b.example:27017@40001"), opened, "the listener is keyed by set name");
    }
}
