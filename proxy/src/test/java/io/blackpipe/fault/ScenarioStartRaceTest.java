package io.blackpipe.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.reflect.Proxy;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

/**
 * A scenario starting checks that no rule set outside it (an operator's, an app's configureFailPoint) has one of its
 * rules' ids, then stops the running one, then puts its rules. A rule set in between was replaced by the scenario's,
 * and removed at its end. The ids are now checked again as the rules go in, under the rule set's lock.
 */
class ScenarioStartRaceTest {
    private final RuleParser parser = new RuleParser(0);
    private final ScenarioLoader loader = ScenarioLoader.offline(parser);

    @Test
    void anOperatorsRuleSetWhileTheRunningScenarioStopsIsNotReplaced() {
        RuleSet rules = new RuleSet();
        Rule operators = parser.parse("x", BsonDocument.parse(
                "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['insert'], errorCode: 1}}"));
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
        try {
            // the operator's request lands just as the running scenario stops: between the check and the put
            ScenarioRunner runner = new ScenarioRunner(rules, noDeployment(), timer, line -> {
                if (line.equals("scenario 'first' stopped")) {
                    rules.put(operators);
                }
            }, parser, () -> loader);
            runner.start(loader.parse("first.yaml", """
                    name: first
                    rules:
                      - {id: a, configureFailPoint: failCommand, mode: alwaysOn, data: {failCommands: [find], errorCode: 2}}
                    timeline:
                      - {at: 60s, clear: true}
                    """));

            IllegalStateException refused = assertThrows(IllegalStateException.class, () -> runner.start(loader.parse("second.yaml", """
                    name: second
                    rules:
                      - {id: x, configureFailPoint: failCommand, mode: alwaysOn, data: {failCommands: [insert], errorCode: 3}}
                    """)));
            assertEquals("scenario 'second' not started: rule id x in force already, set outside the scenario; remove it first,"
                    + " or give the scenario's rule another id", refused.getMessage());
            assertEquals(List.of("x"), rules.rules().stream().map(Rule::id).toList(), "the first's rule is gone with it");
            assertSame(operators, rules.rules().get(0), "the operator's rule is in force, not the scenario's");
            assertEquals(ScenarioRunner.State.STOPPED, runner.state());
        } finally {
            timer.shutdownNow();
        }
    }

    /** A deployment the scenarios here never touch: they have rules and rule steps only. */
    private static DeploymentFaults noDeployment() {
        return (DeploymentFaults) Proxy.newProxyInstance(DeploymentFaults.class.getClassLoader(), new Class<?>[] {DeploymentFaults.class},
                (proxy, method, args) -> {
                    throw new UnsupportedOperationException(method.getName());
                });
    }
}
