package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.Await;
import io.blackpipe.testing.ScriptedMongod;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A scenario that ends (stopped, replaced by another, or at its end step) restores the members it
 * faulted: what it began and is still in force. A member whose fault from the scenario already ended
 * (restored by an operator, or by itself) and that someone else took down since is not the
 * scenario's to restore.
 */
class ScenarioEndLeavesOthersFaultsTest {
    private ScriptedMongod upstream;
    private ProxyServer proxy;
    private MemberListener listener;
    private String member;

    @BeforeEach
    void start() throws Exception {
        upstream = ScriptedMongod.start();
        proxy = ScriptedProxy.start(upstream);
        member = ScriptedProxy.member(proxy).upstream().toString();
        listener = proxy.listener(ScriptedProxy.member(proxy).upstream());
    }

    @AfterEach
    void stop() {
        proxy.close();
        upstream.close();
    }

    @Test
    void stoppingAScenarioLeavesAnOutageItDidNotBegin() {
        startScenario("timeline:\n  - at: 0s\n    blackhole: {member: all}\n");
        assertTrue(listener.blackholed());
        proxy.restore(member); // an operator ends the scenario's blackhole early...
        proxy.outage(member, 0); // ...and takes the member down, until they restore it
        proxy.scenarios().stop();
        assertTrue(listener.down(), "stopping the scenario ended an outage it did not begin");
    }

    @Test
    void aScenarioWhoseTimedFaultEndedLeavesTheBlackholeThatCameAfter() throws Exception {
        startScenario("timeline:\n  - at: 0s\n    outage: {member: all, duration: 50ms}\n  - at: 10m\n    end: true\n");
        Await.until(Duration.ofSeconds(10), "the scenario's outage to end by itself", () -> !listener.down());
        proxy.blackhole(member, 0);
        proxy.scenarios().stop();
        assertTrue(listener.blackholed(), "stopping the scenario ended a blackhole it did not begin");
    }

    @Test
    void stoppingAScenarioStillEndsTheFaultItBeganAndIsInForce() {
        startScenario("timeline:\n  - at: 0s\n    outage: {member: all}\n  - at: 0s\n    blackhole: {member: all}\n");
        proxy.scenarios().stop();
        assertFalse(listener.down() || listener.blackholed(), "the scenario's own faults outlived it");
    }

    private void startScenario(String timeline) {
        proxy.scenarios().start(proxy.scenarioLoader().parse("test", "name: s\ndescription: d\n" + timeline));
    }
}
