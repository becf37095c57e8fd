package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.blackpipe.fault.DeploymentFaults;
import io.blackpipe.testing.Await;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;

/**
 * How a fault of a member's link (a latency, a bandwidth, an idle timeout) ends, the same for each kind: on time, at
 * a reset (every member), with the scenario that began it (and only that one: an operator's on another member stays),
 * and never by the end of one it replaced. Checked on the proxy's state, over a {@link SimulatedSetOverTheLane}.
 */
final class LinkFaultEnds {
    private static final Duration WAIT = Duration.ofSeconds(30);

    /** Begins a fault of the kind on {@code member} for {@code millis} (0: until restored), as ProxyServer does. */
    interface Begin<T> {
        List<DeploymentFaults.Begun> begin(String member, T fault, long millis) throws Exception;
    }

    private LinkFaultEnds() {
    }

    /**
     * @param kind         what the messages call it ("latency")
     * @param inForce      the listener's fault of the kind, or null
     * @param faults       three faults of the kind, each different
     * @param scenarioStep a timeline step that begins one on member %s (formatted with the first member)
     * @param fromScenario what that step puts in force
     */
    static <T> void check(SimulatedSetOverTheLane set, String kind, Begin<T> begin, Function<MemberListener, T> inForce,
                          List<T> faults, String scenarioStep, T fromScenario) throws Exception {
        MemberListener first = set.proxy().listener(set.proxy().members().get(0).upstream());
        MemberListener second = set.proxy().listener(set.proxy().members().get(1).upstream());
        T one = faults.get(0);
        begin.begin(set.upstream(0), one, 200);
        assertEquals(one, inForce.apply(first));
        Await.until(WAIT, "the 200 ms " + kind + " to end", () -> inForce.apply(first) == null);

        begin.begin("all", one, 0);
        set.proxy().reset();
        assertNull(inForce.apply(first), "a reset restores every member");
        assertNull(inForce.apply(second));

        set.proxy().scenarios().start(set.proxy().scenarioLoader().parse("link.yaml", """
                name: link
                timeline:
                  - at: 0s
                    %s
                  - at: 60m
                    end: true
                """.formatted(scenarioStep.formatted(set.upstream(0)))));
        Await.until(WAIT, "the scenario's " + kind, () -> inForce.apply(first) != null);
        assertEquals(fromScenario, inForce.apply(first));
        T operators = faults.get(1);
        begin.begin(set.upstream(1), operators, 0); // an operator's, on another member
        set.proxy().scenarios().stop();
        assertNull(inForce.apply(first), "the scenario's " + kind + " ends with it");
        assertEquals(operators, inForce.apply(second), "the operator's stays");

        List<DeploymentFaults.Begun> begun = begin.begin(set.upstream(1), one, 0);
        T replacing = faults.get(2);
        begin.begin(set.upstream(1), replacing, 0);
        set.proxy().endIfStill(begun.get(0));
        assertEquals(replacing, inForce.apply(second), "a " + kind + " that replaced another is not the other's to end");
    }
}
