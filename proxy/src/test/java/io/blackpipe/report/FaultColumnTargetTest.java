package io.blackpipe.report;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.blackpipe.testing.UpstreamLane;
import java.util.Arrays;
import java.util.List;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;

/**
 * A fault column breaks the counter's increment (the update that carries $inc), not merely the
 * first update of an operation: a strategy of several writes is judged by what happens when its
 * increment meets the fault, or a non-idempotent increment hides behind an idempotent first step.
 */
class FaultColumnTargetTest {
    private static final int ITERATIONS = 2;

    /** The article's token step, then the plain $inc retried once on a network error: not idempotent. */
    private static final class TokenThenBlindIncrement extends Strategy {
        String name() {
            return "token, then blind increment retried once";
        }

        void increment(CounterWorkload counter) {
            counter.addToken(new ObjectId());
            new Strategy.RetryNetworkOnce().increment(counter); // the increment, retried once after a network error
        }
    }

    @Test
    void aLostReplyReachesTheIncrementOfATwoStepStrategy() throws InterruptedException {
        List<Cell> cells = run("reply lost after apply", new TokenThenBlindIncrement());
        assertEquals("overcount by " + ITERATIONS, cells.get(0).verdict(), cells.toString());
    }

    @Test
    void theArticlesTwoStepsStayCorrectWhenTheirIncrementLosesItsReply() throws InterruptedException {
        List<Cell> cells = run("reply lost after apply", new Strategy.IdempotentTwoStep());
        assertEquals("correct", cells.get(0).verdict(), cells.toString());
        assertEquals(ITERATIONS, cells.get(0).retries(), "one retry per increment: " + cells);
    }

    @Test
    void theCounterIsReadFromThePrimaryWhateverReadPreferenceTheUpstreamUriNames() throws InterruptedException {
        // A secondary may not hold the last increments yet: read there, a correct cell shows an undercount.
        // On a single node there is no secondary at all, and the read fails instead.
        String upstream = UpstreamLane.uri() + (UpstreamLane.uri().contains("?") ? "&" : "/?") + "readPreference=secondary";
        List<Cell> cells = run(upstream, "reset before apply", new Strategy.DriverRetryableWrites());
        assertEquals("correct", cells.get(0).verdict(), cells.toString());
    }

    private static List<Cell> run(String fault, Strategy strategy) throws InterruptedException {
        return run(UpstreamLane.uri(), fault, strategy);
    }

    private static List<Cell> run(String upstream, String fault, Strategy strategy) throws InterruptedException {
        FaultColumn[] column = Arrays.stream(FaultColumn.all()).filter(f -> f.name().equals(fault)).toArray(FaultColumn[]::new);
        return new ReportRunner(upstream, UpstreamLane.isJongodb(), ITERATIONS, 42, line -> { })
                .run(column, new Strategy[] {strategy});
    }
}
