package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.UpstreamLane;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * `blackpipe report` as a user runs it, against the lane's deployment: its flags (--spec, --json,
 * --markdown, -n, --upstream) reach the runs, and what it prints is the real outcome of
 * each cell and case, with the bundled Java driver through a real proxy each. ResilienceReportTest
 * and SpecReportTest judge the verdicts themselves, in-process.
 */
class ReportOutputCliTest {
    private static final String NO_RETRY = "no retry";
    private static final String ALWAYS = "always retry (5x)";
    private static final String TOKENS = "retry once, idempotent ops";

    private static CliRun report(String... flags) {
        String[] args = new String[flags.length + 3];
        args[0] = "report";
        System.arraycopy(flags, 0, args, 1, flags.length);
        args[flags.length + 1] = "--upstream";
        args[flags.length + 2] = UpstreamLane.uri();
        return CliRun.of(args);
    }

    @Test
    void specAsJsonMatchesEveryCaseByTheAttemptsCounted() {
        CliRun run = report("--spec", "--json");
        assertEquals(0, run.exitCode(), run::toString);
        Document report = Document.parse(run.out());
        List<Document> cases = report.getList("cases", Document.class);
        assertEquals(50, cases.size(), run::toString);
        assertEquals(50, report.getInteger("matched"));
        assertEquals(50, report.getInteger("total"));
        for (Document c : cases) {
            assertEquals(c.getInteger("expectedAttempts"), c.getInteger("attempts"), c::toJson);
            assertTrue(c.getString("verdict").startsWith("MATCH"), c::toJson);
        }
    }

    @Test
    void specAsMarkdownIsATableOfEveryCase() {
        CliRun run = report("--spec", "--markdown");
        assertEquals(0, run.exitCode(), run::toString);
        List<String> rows = run.out().lines().filter(line -> line.startsWith("| ") && !line.startsWith("| group |")).toList();
        assertEquals(50, rows.size(), run::toString);
        assertTrue(rows.stream().allMatch(row -> row.endsWith("| MATCH |")), run::toString);
        assertTrue(run.out().contains("| group | case | expected per spec | attempts | retried | driver raised | verdict |"), run::toString);
    }

    @Test
    void theReportAsJsonHasEveryCellOfOneIncrementEach() {
        CliRun run = report("-n", "1", "--json");
        assertEquals(0, run.exitCode(), run::toString);
        Document report = Document.parse(run.out());
        assertEquals(1, report.getInteger("iterations"));
        List<Document> cells = report.getList("cells", Document.class);
        assertEquals(30, cells.size(), "6 strategies by 5 faults: " + run);
        Map<String, Document> byCell = cells.stream().collect(Collectors.toMap(
                c -> c.getString("strategy") + " / " + c.getString("fault"), Function.identity()));
        for (Document c : cells) {
            assertEquals(1, c.getInteger("expected"), c::toJson);
        }
        // the cells whose verdict no upstream changes: the fault applies on every attempt it is meant for
        Document blind = byCell.get(NO_RETRY + " / reset before apply");
        assertEquals("undercount by 1", blind.getString("verdict"), blind::toJson);
        assertEquals(0, blind.getInteger("counter"), blind::toJson);
        assertEquals(1, blind.getInteger("attempts"), blind::toJson);
        Document overcount = byCell.get(ALWAYS + " / reply lost after apply");
        assertEquals("overcount by 1", overcount.getString("verdict"), overcount::toJson);
        assertEquals(2, overcount.getInteger("counter"), "the lost reply's write happened, and so did its retry");
        assertEquals(1, overcount.getInteger("retries"), overcount::toJson);
        Document tokens = byCell.get(TOKENS + " / reply lost after apply");
        assertEquals("correct", tokens.getString("verdict"), tokens::toJson);
        assertEquals(1, tokens.getInteger("counter"), tokens::toJson);
    }
}
