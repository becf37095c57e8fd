package io.blackpipe.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.UpstreamLane;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code report --spec --driver-cmd} with the auditor's program ({@link ResendingSpecDriver}): the
 * driver's retries off and the application re-sending once. It makes as many attempts as a driver
 * that retries, and counting alone judged it 48/48 MATCH; its re-sent write is not the same
 * transaction, and that is now a MISMATCH that says so.
 */
class NonCompliantSpecDriverTest {
    private static final SpecCase WRITE_NOT_WRITABLE_PRIMARY = new SpecCase("retryable write", "insert", "insert", 10107, 1, true);
    private static final SpecCase WRITE_RESET_TWICE = new SpecCase("one retry only", "insert", "insert", null, 2, true);
    private static final SpecCase WRITE_NOT_RETRYABLE = new SpecCase("non-retryable write", "insert", "insert", 2, 1, false);
    private static final SpecCase READ_NOT_WRITABLE_PRIMARY = new SpecCase("retryable read", "find", "find", 10107, 1, true);
    private static final SpecCase W0 = new SpecCase("never retried", "insertW0", "insert", 10107, 1, false);

    @TempDir
    static Path dir;
    private static Map<String, SpecResult> resending;

    /** The program through a shell script, as a user gives it: a JVM on the tests' class path. */
    private static String program(String... leadingArgs) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        Path own = Files.createDirectories(dir.resolve(leadingArgs.length == 0 ? "plain" : "txn-on-w0"));
        Path script = ExternalSpecDriverTest.shellDriver(own, "exec '" + java
                + "' -XX:TieredStopAtLevel=1 -Xshare:auto -cp '" + classPath + "' " + ResendingSpecDriver.class.getName()
                + " " + String.join(" ", leadingArgs) + " \"$@\"\n");
        return script.toString();
    }

    @BeforeAll
    static void run() throws Exception {
        List<SpecCase> cases = SpecCase.all().stream().filter(c -> c.group().equals(SpecCase.BY_LABEL)).collect(Collectors.toList());
        assertEquals(2, cases.size(), "the lane is 4.4 or later: its label cases run");
        cases.addAll(List.of(WRITE_NOT_WRITABLE_PRIMARY, WRITE_RESET_TWICE, WRITE_NOT_RETRYABLE, READ_NOT_WRITABLE_PRIMARY, W0));
        SpecCheck check = SpecCheck.run(UpstreamLane.uri(), UpstreamLane.description(), SpecDriver.external(program()), line -> { },
                cases);
        resending = check.results().stream().collect(Collectors.toMap(r -> r.specCase().name(), Function.identity()));
        assertEquals(cases.size(), resending.size(), check.text());
    }

    private static SpecResult result(SpecCase specCase) {
        return resending.get(specCase.name());
    }

    @Test
    void aReSentWriteHasTheRetrysAttemptsButIsAMismatchThatSaysItIsNotTheSameTransaction() {
        for (SpecCase c : List.of(WRITE_NOT_WRITABLE_PRIMARY, WRITE_RESET_TWICE, labelled("RetryableWriteError"))) {
            SpecResult r = result(c);
            assertEquals(2, r.attempts(), c.name() + ": re-sent once, as many attempts as the spec's retry");
            assertEquals("first attempt without txnNumber: its retry is not the same transaction", r.transactionProblem(), c.name());
            assertEquals("MISMATCH (first attempt without txnNumber: its retry is not the same transaction)", r.verdict(), c.name());
            assertFalse(r.matches(), c.name());
        }
        assertTrue(result(WRITE_NOT_WRITABLE_PRIMARY).raised().endsWith("ok after a re-send"), result(WRITE_NOT_WRITABLE_PRIMARY).raised());
    }

    @Test
    void aWriteSentWithoutTxnNumberIsAMismatchEvenWhenNotRetried() {
        SpecResult r = result(WRITE_NOT_RETRYABLE);
        assertEquals(1, r.attempts());
        assertEquals("MISMATCH (first attempt without txnNumber: not sent as a retryable write)", r.verdict());
    }

    /** 10107 without the label: a 4.4+ driver does not retry it, an application going by the code does. */
    @Test
    void reSendingByCodeWhereTheLabelDecidesIsAMismatch() {
        SpecResult r = result(labelled());
        assertEquals(2, r.attempts());
        assertEquals(1, r.specCase().expectedAttempts());
        assertTrue(r.verdict().startsWith("MISMATCH"), r.verdict());
    }

    /** The retryable reads spec requires nothing of the retry's session: a read re-sent by the application is one. */
    @Test
    void aReSentReadMatches() {
        SpecResult r = result(READ_NOT_WRITABLE_PRIMARY);
        assertEquals(2, r.attempts());
        assertEquals("MATCH", r.verdict());
    }

    @Test
    void aW0InsertWithoutTxnNumberMatchesAndOneWithATxnNumberDoesNot() throws Exception {
        assertEquals("MATCH", result(W0).verdict(), result(W0).toString());
        SpecCheck txnOnW0 = SpecCheck.run(UpstreamLane.uri(), UpstreamLane.description(),
                SpecDriver.external(program("--txn-on-w0")), line -> { }, List.of(W0));
        SpecResult r = txnOnW0.results().get(0);
        assertEquals(1, r.attempts(), txnOnW0.text());
        assertEquals("MISMATCH (first attempt carried txnNumber 1, which the spec forbids here)", r.verdict(), txnOnW0.text());
    }

    private static SpecCase labelled(String... labels) {
        return SpecCase.all().stream().filter(c -> c.group().equals(SpecCase.BY_LABEL) && c.errorLabels().equals(List.of(labels)))
                .findFirst().orElseThrow();
    }
}
