package io.blackpipe.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.junit.jupiter.api.Test;

/**
 * A failover step waits for the election to be told: a real set's stepdown takes seconds, a simulated set's
 * announcements up to two. The scenario's status answers meanwhile, where it waited for it before; a stop (a reset's,
 * a close's) waits for it, so that no step acts once the stop has returned.
 */
class ScenarioFailoverStepTest {
    private final RuleParser parser = new RuleParser(0);
    private final ScenarioLoader loader = ScenarioLoader.offline(parser);

    @Test
    void theScenarioAnswersWhileItsFailoverIsUnderWayAndAStopWaitsForIt() throws Exception {
        CountDownLatch failingOver = new CountDownLatch(1);
        CountDownLatch electionTold = new CountDownLatch(1);
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
        try {
            ScenarioRunner runner = new ScenarioRunner(new RuleSet(), slowFailover(failingOver, electionTold), timer, line -> { },
                    parser, () -> loader);
            runner.start(loader.parse("elect.yaml", """
                    name: elect
                    timeline:
                      - {at: 10ms, failover: {}}
                      - {at: 60s, end: true}
                    """));
            assertTrue(failingOver.await(10, TimeUnit.SECONDS), "the failover step fired");

            BsonDocument during = CompletableFuture.supplyAsync(runner::status).get(5, TimeUnit.SECONDS);
            assertEquals(List.of(), steps(during), "the failover is noted once it is done");
            assertEquals(2, during.getInt32("stepsLeft").getValue());
            CompletableFuture<Void> stopped = CompletableFuture.runAsync(runner::stop);
            Thread.sleep(200);
            assertFalse(stopped.isDone(), "a stop (a reset's) returns once no step of the scenario acts any more");
            assertEquals(ScenarioRunner.State.RUNNING, CompletableFuture.supplyAsync(runner::state).get(5, TimeUnit.SECONDS),
                    "and answers meanwhile");

            electionTold.countDown();
            stopped.get(10, TimeUnit.SECONDS);
            assertEquals(ScenarioRunner.State.STOPPED, runner.state());
            assertEquals(List.of("10ms fail over"), steps(runner.status()));
        } finally {
            electionTold.countDown();
            timer.shutdownNow();
        }
    }

    private static List<String> steps(BsonDocument status) {
        return status.getArray("stepsDone").stream().map(BsonValue::asString).map(BsonString::getValue).toList();
    }

    /** A deployment whose failover says it began, then waits to be let go, as one waiting for its election to be told. */
    private static DeploymentFaults slowFailover(CountDownLatch failingOver, CountDownLatch electionTold) {
        return (DeploymentFaults) Proxy.newProxyInstance(DeploymentFaults.class.getClassLoader(), new Class<?>[] {DeploymentFaults.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("failover") && args != null && args.length == 1) {
                        failingOver.countDown();
                        electionTold.await();
                        return 0L;
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
    }
}
