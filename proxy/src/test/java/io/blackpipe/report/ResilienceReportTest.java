package io.blackpipe.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.UpstreamLane;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A small report on the local lane, asserting the verdicts that do not depend on what the
 * upstream does with retried writes (the persistent-outage column is left out: it only waits).
 */
class ResilienceReportTest {
    private static final String RESET = "reset before apply";
    private static final String LOST = "reply lost after apply";
    private static final String ERROR = "command error";
    private static final int ITERATIONS = 2;
    private static ResilienceReport report;

    @BeforeAll
    static void run() throws InterruptedException {
        report = ResilienceReport.run(UpstreamLane.uri(), UpstreamLane.description(), ITERATIONS, 42, line -> { },
                List.of(RESET, LOST, ERROR));
    }

    @Test
    void noRetryUndercountsWhenTheServerNeverSawTheWrite() {
        assertEquals("undercount by " + ITERATIONS, report.verdict(RESET, "no retry"));
        assertEquals(0, report.counter(RESET, "no retry"));
        assertEquals(0, report.retries(RESET, "no retry"));
    }

    @Test
    void alwaysRetryOvercountsWhenTheReplyWasLostAfterTheWrite() {
        assertEquals("overcount by " + ITERATIONS, report.verdict(LOST, "always retry (5x)"));
        assertEquals(ITERATIONS, report.retries(LOST, "always retry (5x)"));
    }

    @Test
    void theTwoStepIdempotentStrategyIsCorrectUnderBoth() {
        assertEquals("correct", report.verdict(RESET, "retry once, idempotent ops"));
        assertEquals("correct", report.verdict(LOST, "retry once, idempotent ops"));
        assertEquals(ITERATIONS, report.retries(RESET, "retry once, idempotent ops"));
    }

    @Test
    void onlyAlwaysRetryRetriesACommandError() {
        for (String strategy : ResilienceReport.strategies()) {
            long expected = strategy.equals("always retry (5x)") ? ITERATIONS * 4L : 0;
            assertEquals(expected, report.retries(ERROR, strategy), strategy);
            assertEquals(ITERATIONS + expected, report.attempts(ERROR, strategy), strategy);
            assertEquals("undercount by " + ITERATIONS, report.verdict(ERROR, strategy), strategy);
        }
    }

    @Test
    void driverRetryableWritesAreCorrectUnderAResetAndWhenTheReplyIsLost() {
        assertEquals("correct", report.verdict(RESET, "driver retryable writes"));
        assertEquals(ITERATIONS, report.retries(RESET, "driver retryable writes"));
        // mongod answers a retried write from its first run, and blackpipe does in the place of a member that would not
        assertEquals("correct", report.verdict(LOST, "driver retryable writes"));
        assertEquals(ITERATIONS, report.counter(LOST, "driver retryable writes"));
    }

    @Test
    void theRenderingsCarryEveryCell() {
        String text = report.text();
        String markdown = report.markdown();
        Document json = Document.parse(report.json());
        assertTrue(text.contains("always retry (5x)") && text.contains(LOST));
        assertTrue(markdown.startsWith("Upstream: ") && markdown.contains("| strategy |"));
        assertEquals(3 * ResilienceReport.strategies().size(), json.getList("cells", Document.class).size());
    }
}
