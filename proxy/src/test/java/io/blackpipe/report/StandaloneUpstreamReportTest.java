package io.blackpipe.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.StandaloneUpstream;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The report and {@code --spec} on a standalone, where drivers retry no write (retryable writes
 * spec: standalones do not support them) but still retry reads: the spec check expects one attempt
 * for every write, and both say why on their upstream line. The same for a server without sessions.
 */
class StandaloneUpstreamReportTest {
    private static final String RESET = "reset before apply";
    private static final String WHY = "a standalone: drivers do not retry writes on it";
    private static final int ITERATIONS = 2;
    private static StandaloneUpstream standalone;

    @BeforeAll
    static void start() throws Exception {
        standalone = StandaloneUpstream.start();
    }

    @AfterAll
    static void stop() throws Exception {
        standalone.close();
    }

    @Test
    void theSpecCheckExpectsOneAttemptForEveryWriteAndStillARetryForReads() throws InterruptedException {
        assertWritesNotRetriedAndReadsRetried(SpecCheck.run(standalone.uri(), standalone.lane(), SpecDriver.bundledJava(), line -> { }),
                WHY);
    }

    /** A replica-set member whose hello has no logicalSessionTimeoutMinutes: no sessions, so no retryable writes either. */
    @Test
    void aServerWithoutSessionsIsJudgedAsAStandaloneIs() throws Exception {
        try (ScriptedMongod sessionless = ScriptedMongod.builder().withoutSessions().start()) {
            String uri = sessionless.uri("replicaSet=" + ScriptedMongod.SET_NAME);
            assertWritesNotRetriedAndReadsRetried(SpecCheck.run(uri, "scripted primary without sessions", SpecDriver.bundledJava(),
                    line -> { }), "no sessions (its hello has no logicalSessionTimeoutMinutes): drivers do not retry writes on it");
        }
    }

    private static void assertWritesNotRetriedAndReadsRetried(SpecCheck check, String why) {
        String mismatches = check.results().stream().filter(r -> !r.matches())
                .map(r -> r.specCase().name() + " -> " + r.attempts()).collect(Collectors.joining("\n"));
        assertTrue(check.allMatch(), "mismatches:\n" + mismatches + "\n" + check.text());
        for (SpecResult result : check.results()) {
            SpecCase c = result.specCase();
            boolean retryableRead = c.command().equals("find") && c.retryable(); // reads are retried on any deployment
            assertEquals(retryableRead, result.retried(), c.group() + " / " + c.name() + ": " + result.attempts());
            if (c.isWrite()) { // the spec: no transaction ID where the server does not support retryable writes
                assertEquals(TransactionId.NONE, c.transactionId(), c.name());
            }
            if (c.command().equals("insert") && c.errorCode() != null && c.errorCode() == 10107 && !c.operation().equals("insertW0")) {
                assertTrue(result.raised().startsWith("MongoNotPrimaryException"), c.name() + " raised " + result.raised());
            }
        }
        long retryableWritesOnAReplicaSet = SpecCase.all().stream().filter(c -> c.retryable() && c.command().equals("insert")).count();
        assertEquals(16, retryableWritesOnAReplicaSet,
                "12 retryable codes and a reset once, a reset and 10107 twice, 2 BadValue with the RetryableWriteError label");
        assertEquals(retryableWritesOnAReplicaSet,
                check.results().stream().filter(r -> r.specCase().group().equals(SpecCase.WRITE_NOT_RETRIED_HERE)).count());
        assertTrue(check.text().contains(why), check.text());
    }

    @Test
    void theDriversRowUndercountsAfterAResetAndTheReportSaysWhy() throws InterruptedException {
        ResilienceReport report = ResilienceReport.run(standalone.uri(), standalone.lane(), ITERATIONS, 7, line -> { }, List.of(RESET));
        assertEquals("undercount by " + ITERATIONS, report.verdict(RESET, "driver retryable writes"), report.text());
        assertEquals(0, report.retries(RESET, "driver retryable writes"));
        assertEquals(ITERATIONS, report.attempts(RESET, "driver retryable writes"));
        assertEquals("correct", report.verdict(RESET, "retry once, idempotent ops"), report.text());
        assertEquals("correct", report.verdict(RESET, "always retry (5x)"), report.text());
        assertTrue(report.text().contains(WHY), report.text());
    }
}
