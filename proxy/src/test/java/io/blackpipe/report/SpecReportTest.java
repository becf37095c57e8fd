package io.blackpipe.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.UpstreamLane;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import org.bson.Document;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code report --spec} on the local lane: the bundled Java driver follows the retryable reads/writes specs. */
class SpecReportTest {
    private static SpecCheck check;

    @BeforeAll
    static void run() throws InterruptedException {
        check = SpecCheck.run(UpstreamLane.uri(), UpstreamLane.description(), SpecDriver.bundledJava(), line -> { });
    }

    @Test
    void everyCaseMatchesTheSpecsWithTheJavaDriver() {
        String mismatches = check.results().stream().filter(r -> !r.matches())
                .map(r -> r.specCase().name() + " -> " + r.attempts() + " attempts, raised " + r.raised())
                .collect(Collectors.joining("\n"));
        assertTrue(check.allMatch(), "mismatches:\n" + mismatches + "\n" + check.text());
        assertEquals(SpecCase.all().size(), check.results().size());
    }

    @Test
    void theCasesCoverEveryListedCodeAndTheNeverRetriedOperations() {
        List<SpecCase> cases = SpecCase.all();
        for (int code : io.blackpipe.fault.ErrorCodes.RETRYABLE_WRITE) {
            assertTrue(cases.contains(new SpecCase("retryable write", "insert", "insert", code, 1, true)), "write " + code);
        }
        for (int code : io.blackpipe.fault.ErrorCodes.RETRYABLE_READ) {
            assertTrue(cases.contains(new SpecCase("retryable read", "find", "find", code, 1, true)), "read " + code);
        }
        for (String operation : List.of("getMore", "updateMany", "deleteMany", "insertW0")) {
            assertTrue(cases.stream().anyMatch(c -> c.operation().equals(operation) && !c.retryable()), operation);
        }
    }

    @Test
    void retriesAreVisibleAndTheDriverSaysWhatItRaised() {
        for (SpecResult r : check.results()) {
            SpecCase c = r.specCase();
            assertEquals(c.retryable(), r.retried(), c.name());
            if (c.retryable() && c.times() == 1) {
                assertEquals("ok", r.raised(), c.name()); // the retry succeeded
            } else if (!c.operation().equals("insertW0")) {
                assertFalse(r.raised().equals("ok"), c.name() + " should surface the fault"); // gave up
            }
        }
    }

    /**
     * The Java driver's retries are the same transaction, its w:0 and multi-document writes carry none; and on
     * this 4.4+ lane it retries a write by the label: 10107 without it is not retried, 2 BadValue with it is.
     */
    @Test
    void writesCarryTheTransactionIdTheSpecRequiresAndTheLabelDecides() {
        for (SpecResult r : check.results()) {
            assertEquals(null, r.transactionProblem(), r.specCase().name());
        }
        List<SpecResult> byLabel = check.results().stream().filter(r -> r.specCase().group().equals(SpecCase.BY_LABEL)).toList();
        assertEquals(2, byLabel.size(), check.text());
        assertEquals(1, byLabel.get(0).attempts(), byLabel.get(0).specCase().name());
        assertTrue(byLabel.get(0).raised().startsWith("MongoNotPrimaryException"), byLabel.get(0).raised());
        assertEquals(2, byLabel.get(1).attempts(), byLabel.get(1).specCase().name());
        assertEquals("ok", byLabel.get(1).raised());
        Document w0 = Document.parse(check.json()).getList("cases", Document.class).stream()
                .filter(c -> c.getString("operation").equals("insertW0")).findFirst().orElseThrow();
        assertEquals("NONE", w0.getString("transactionId"));
        assertEquals("never retry (1), no txnNumber", w0.getString("expected"));
        assertEquals("MATCH", w0.getString("verdict"));
    }

    @Test
    void theRenderingsCarryEveryCase() {
        assertTrue(check.text().contains("MATCH") && check.text().contains("insert: 10107 NotWritablePrimary x1"));
        assertTrue(check.markdown().contains("| group | case |"));
        Document json = Document.parse(check.json());
        assertEquals(SpecCase.all().size(), json.getList("cases", Document.class).size());
    }

    @Test
    void anExternalProgramIsRunWithTheConnectionStringAndTheOperation(@TempDir Path dir) throws Exception {
        Path log = dir.resolve("calls.txt");
        Path script = ExternalSpecDriverTest.shellDriver(dir, "echo \"$1 $2\" >> '" + log + "'\necho did nothing\nexit 0\n");
        List<SpecCase> cases = List.of(SpecCase.all().get(0), new SpecCase("never retried", "getMore", "getMore", null, 1, false));
        SpecCheck external = SpecCheck.run(UpstreamLane.uri(), UpstreamLane.description(), SpecDriver.external(script.toString()),
                line -> { }, cases);
        List<String> calls = Files.readAllLines(log);
        assertEquals(2, calls.size(), calls.toString());
        for (int i = 0; i < 2; i++) {
            String[] args = calls.get(i).split(" ");
            assertTrue(args[0].startsWith("mongodb://127.0.0.1:") && args[0].contains("/blackpipe_spec_")
                    && args[0].contains("retryWrites=true&retryReads=true"), args[0]);
            assertEquals(cases.get(i).operation(), args[1]);
            SpecResult result = external.results().get(i);
            assertEquals(0, result.attempts());
            assertEquals("MISMATCH (not attempted)", result.verdict());
            assertEquals("exit 0: did nothing", result.raised());
        }
        assertTrue(external.text().contains("external: " + script));
    }

    @Test
    void theConnectionStringGetsTheDatabaseAndBothRetryOptions() {
        assertEquals("mongodb://127.0.0.1:1/db?replicaSet=rs0&retryWrites=true&retryReads=true",
                SpecCheck.uri("mongodb://127.0.0.1:1/?replicaSet=rs0", "db"));
        assertEquals("mongodb://127.0.0.1:1,127.0.0.1:2/db?retryWrites=true&retryReads=true",
                SpecCheck.uri("mongodb://127.0.0.1:1,127.0.0.1:2/", "db"));
    }
}
