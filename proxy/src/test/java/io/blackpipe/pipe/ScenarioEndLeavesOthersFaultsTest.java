package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.fault.ScenarioRunner;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.ScriptedMongod;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
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

    /** An outage and a blackhole are faults of their own: ending the scenario's ends its own kind, not the operator's. */
    @Test
    void stoppingAScenarioEndsItsOutageButNotTheBlackholeAnOperatorAddedSince() {
        startScenario("timeline:\n  - at: 0s\n    outage: {member: all}\n");
        proxy.blackhole(member, 0);
        proxy.scenarios().stop();
        assertFalse(listener.down(), "the scenario's outage outlived it");
        assertTrue(listener.blackholed(), "stopping the scenario ended the operator's blackhole");
    }

    @Test
    void stoppingAScenarioEndsItsBlackholeButNotTheOutageAnOperatorBeganBefore() {
        proxy.outage(member, 0);
        startScenario("timeline:\n  - at: 0s\n    blackhole: {member: all}\n");
        proxy.scenarios().stop();
        assertFalse(listener.blackholed(), "the scenario's blackhole outlived it");
        assertTrue(listener.down(), "stopping the scenario ended the operator's outage");
    }

    @Test
    void aTimedOutageEndsOnTimeThoughABlackholeBeganMeanwhile() throws Exception {
        proxy.outage(member, 200);
        proxy.blackhole(member, 0);
        Await.until(Duration.ofSeconds(10), "the 200ms outage to end by itself", () -> !listener.down());
        assertTrue(listener.blackholed(), "the blackhole lasts until restored");
    }

    /** A member whose port cannot be bound again: the stop says so, and the scenario is stopped all the same. */
    @Test
    void aScenarioStopThatCannotEndItsOutageSaysSo() throws Exception {
        startScenario("timeline:\n  - at: 0s\n    outage: {member: all}\n");
        int port = ScriptedProxy.member(proxy).advertised().port();
        try (ServerSocket squatter = new ServerSocket()) {
            squatter.bind(new InetSocketAddress("127.0.0.1", port));
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> proxy.scenarios().stop());
            assertTrue(e.getMessage().startsWith("scenario 's' stopped, but could not end its outage of " + member), e.getMessage());
            assertEquals(ScenarioRunner.State.STOPPED, proxy.scenarios().state());
        }
    }

    /** A reset is not cut short by the scenario's fault it cannot end: its rules are cleared all the same. */
    @Test
    void aResetGoesOnWhenTheScenarioCannotEndItsOutage() throws Exception {
        proxy.rules().put(proxy.ruleParser().parse("operator", org.bson.BsonDocument.parse(
                "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: 2}}")));
        startScenario("timeline:\n  - at: 0s\n    outage: {member: all}\n");
        int port = ScriptedProxy.member(proxy).advertised().port();
        try (ServerSocket squatter = new ServerSocket()) {
            squatter.bind(new InetSocketAddress("127.0.0.1", port));
            assertThrows(Exception.class, () -> proxy.reset(), "the member cannot be restored while its port is taken");
            assertTrue(listener.down(), "still down: its port is taken");
            assertTrue(proxy.rules().rules().isEmpty(), "the reset cleared the rules all the same: " + proxy.rules().rules());
            assertEquals(ScenarioRunner.State.STOPPED, proxy.scenarios().state());
        }
        proxy.restore(member);
        assertFalse(listener.down(), "restored once the port is free");
    }

    private static final String FIND_ERROR = "configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['find'], errorCode: %d}";

    private org.bson.BsonDocument operatorsRule(int errorCode) {
        return org.bson.BsonDocument.parse("{" + FIND_ERROR.formatted(errorCode) + "}");
    }

    /**
     * A scenario's rule and an operator's of the same id: the scenario is refused, and nothing changes. Before, it
     * replaced the operator's rule, and its stop then removed that id: the operator's rule was gone.
     */
    @Test
    void aScenarioIsNotStartedOverARuleAnOperatorSet() {
        proxy.rules().put(proxy.ruleParser().parse("mine", operatorsRule(2)));
        startScenario("timeline:\n  - at: 0s\n    outage: {member: all}\n"); // running: the refused one must not stop it
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> startScenario("rules:\n  - {id: mine, " + FIND_ERROR.formatted(91) + "}\ntimeline: []\n"));
        assertEquals("scenario 's' not started: rule id mine in force already, set outside the scenario; remove it first, or give"
                + " the scenario's rule another id", e.getMessage());
        assertEquals(2, ((io.blackpipe.fault.action.ErrorReply) proxy.rules().rules().get(0).action()).code(), "the operator's rule stays");
        assertTrue(listener.down(), "the running scenario goes on");
    }

    /** An operator who sets a rule of the scenario's id while it runs keeps it when the scenario ends. */
    @Test
    void stoppingAScenarioLeavesTheRuleAnOperatorSetSinceUnderItsId() {
        startScenario("rules:\n  - {id: blip, " + FIND_ERROR.formatted(91) + "}\ntimeline: []\n");
        proxy.rules().put(proxy.ruleParser().parse("blip", operatorsRule(2)));
        proxy.scenarios().stop();
        assertEquals(1, proxy.rules().rules().size(), "the operator's blip stays: " + proxy.rules().rules());
        assertEquals(2, ((io.blackpipe.fault.action.ErrorReply) proxy.rules().rules().get(0).action()).code());
    }

    /** A remove step meeting the rule an operator set under its id since the start leaves it, and says so. */
    @Test
    void aRemoveStepLeavesTheRuleAnOperatorSetSinceUnderItsId() throws Exception {
        startScenario("rules:\n  - {id: blip, " + FIND_ERROR.formatted(91) + "}\ntimeline:\n  - at: 300ms\n    remove: blip\n");
        proxy.rules().put(proxy.ruleParser().parse("blip", operatorsRule(2)));
        Await.until(Duration.ofSeconds(10), "the remove step to run", () -> proxy.scenarios().status().getInt32("stepsLeft").getValue() == 0);
        assertEquals(2, ((io.blackpipe.fault.action.ErrorReply) proxy.rules().rules().get(0).action()).code(), "the operator's blip stays");
        assertTrue(proxy.scenarios().status().getArray("stepsDone").get(0).asString().getValue()
                .endsWith("FAILED: rule blip in force was set outside the scenario: left as it is"), proxy.scenarios().status()::toJson);
    }

    /** A remove step whose rule an operator removed since removes nothing, and says so, where it was noted done. */
    @Test
    void aRemoveStepWhoseRuleAnOperatorRemovedSaysSo() throws Exception {
        startScenario("rules:\n  - {id: blip, " + FIND_ERROR.formatted(91) + "}\ntimeline:\n  - at: 300ms\n    remove: blip\n");
        assertTrue(proxy.rules().remove("blip"));
        Await.until(Duration.ofSeconds(10), "the remove step to run", () -> proxy.scenarios().status().getInt32("stepsLeft").getValue() == 0);
        assertTrue(proxy.scenarios().status().getArray("stepsDone").get(0).asString().getValue()
                .endsWith("FAILED: rule blip was not in force (removed outside the scenario, or its add step met an operator's rule)"), proxy.scenarios().status()::toJson);
    }

    @Test
    void aScenarioThatEndedStopsItsClock() throws Exception {
        startScenario("timeline:\n  - at: 0s\n    end: true\n");
        long elapsed = proxy.scenarios().status().getInt64("elapsedMillis").getValue();
        Thread.sleep(50);
        assertEquals(elapsed, proxy.scenarios().status().getInt64("elapsedMillis").getValue(), "elapsed until it finished, no longer");
    }

    private void startScenario(String timeline) {
        proxy.scenarios().start(proxy.scenarioLoader().parse("test", "name: s\ndescription: d\n" + timeline));
    }
}
