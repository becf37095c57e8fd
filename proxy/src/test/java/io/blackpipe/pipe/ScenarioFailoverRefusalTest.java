package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.fault.Scenario;
import io.blackpipe.fault.ScenarioException;
import io.blackpipe.fault.ScenarioRunner;
import io.blackpipe.testing.UpstreamLane;
import org.junit.jupiter.api.Test;

/**
 * A scenario whose failover the deployment cannot run is rejected whole as it loads, naming the field, as every other
 * error in a scenario is: before, it started, and only its failover step failed when it came.
 */
class ScenarioFailoverRefusalTest {
    private static String failoverAt1s(String failover) {
        return "name: f\ntimeline:\n  - at: 1s\n    failover: " + failover + "\n";
    }

    @Test
    void aFailoverOnASingleNodeIsRejectedAsTheScenarioLoads() {
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.singleNodeUri()))) {
            ScenarioException any = assertThrows(ScenarioException.class, () -> proxy.scenarioLoader().parse("f.yaml", failoverAt1s("{}")));
            assertTrue(any.getMessage().startsWith("f.yaml:4: timeline[0].failover: failover needs a replica set with more than one"
                    + " member; this upstream is a"), any.getMessage());
            ScenarioException election = assertThrows(ScenarioException.class,
                    () -> proxy.scenarioLoader().parse("f.yaml", failoverAt1s("{election: 2s}")));
            assertTrue(election.getMessage().startsWith("f.yaml:4: timeline[0].failover.election: an election's length and a rollback"
                    + " apply to a simulated set"), election.getMessage());
            assertEquals(ScenarioRunner.State.IDLE, proxy.scenarios().state(), "nothing started");
        }
    }

    @Test
    void aSimulatedSetTakesEveryFailover() {
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.singleNodeUri()).withSimulatedMembers(3))) {
            Scenario scenario = proxy.scenarioLoader().parse("f.yaml", failoverAt1s("{election: 2s, rollback: 1s}"));
            assertEquals(1, scenario.timeline().size());
        }
    }
}
