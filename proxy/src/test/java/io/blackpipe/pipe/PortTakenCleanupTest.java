package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.Await;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.topology.Member;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A member that cannot listen again (its port taken by another process meanwhile) stops no clean-up of the others:
 * a restore of all restores every other member and names that one, and a proxy that closes closes everything. Before,
 * the first such member ended the restore, leaving the members after it down, and a close threw before any listener
 * or thread was closed.
 */
class PortTakenCleanupTest {
    @Test
    void aRestoreOfAllRestoresEveryOtherMemberAndNamesTheOneItCouldNot() throws Exception {
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.singleNodeUri()).withSimulatedMembers(3))) {
            List<Member> members = proxy.members();
            proxy.outage("all", 0);
            Member taken = members.get(0);
            try (ServerSocket squatter = new ServerSocket()) {
                squatter.bind(new InetSocketAddress(taken.advertised().host(), taken.advertised().port()));
                IllegalStateException refused = assertThrows(IllegalStateException.class, () -> proxy.restore("all"));
                assertTrue(refused.getMessage().startsWith("could not restore " + taken.upstream() + " ("), refused.getMessage());
                assertTrue(refused.getMessage().endsWith("; every other member was restored"), refused.getMessage());
                assertTrue(proxy.listener(taken.upstream()).down());
                assertFalse(proxy.listener(members.get(1).upstream()).down(), "the members after it were restored");
                assertFalse(proxy.listener(members.get(2).upstream()).down());
            }
            proxy.restore("all");
            assertFalse(proxy.listener(taken.upstream()).down(), "restored once its port is free");
        }
    }

    /**
     * A blackhole begun on a member already down accepts its clients' connections again, as a partition hides a down
     * member; where another process took the port meanwhile it cannot, and the blackhole begins all the same (and
     * ends on time). Before, the bind's BindException, which Netty passes on unchecked, escaped the blackhole's start
     * after it was marked in force and before its end was scheduled: the member stayed blackholed until a restore.
     */
    @Test
    void aBlackholeOnADownMemberWhosePortIsTakenBeginsAndEndsOnTime() throws Exception {
        try (ScriptedMongod upstream = ScriptedMongod.start(); ProxyServer proxy = ScriptedProxy.start(upstream)) {
            Member member = ScriptedProxy.member(proxy);
            MemberListener listener = proxy.listener(member.upstream());
            proxy.outage("all", 0);
            try (ServerSocket squatter = new ServerSocket()) {
                squatter.bind(new InetSocketAddress("127.0.0.1", member.advertised().port()));
                assertDoesNotThrow(() -> proxy.blackhole("all", 300));
                assertTrue(listener.blackholed());
                Await.until(Duration.ofSeconds(10), "the blackhole to end on time", () -> !listener.blackholed());
                assertTrue(listener.down(), "the outage goes on");
            }
            proxy.restore("all");
            assertFalse(listener.down());
        }
    }

    @Test
    void aCloseGoesOnPastAScenarioOutageItCannotEnd() throws Exception {
        try (ScriptedMongod upstream = ScriptedMongod.start()) {
            ProxyServer proxy = ScriptedProxy.start(upstream);
            proxy.scenarios().start(proxy.scenarioLoader().parse("test", "name: s\ntimeline:\n  - at: 0s\n    outage: {member: all}\n"));
            Member member = ScriptedProxy.member(proxy);
            try (ServerSocket squatter = new ServerSocket()) {
                squatter.bind(new InetSocketAddress("127.0.0.1", member.advertised().port()));
                assertDoesNotThrow(proxy::close, "the scenario's outage cannot end, and the proxy closes all the same");
            }
        }
    }
}
