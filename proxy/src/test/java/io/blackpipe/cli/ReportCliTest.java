package io.blackpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.testing.UpstreamLane;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * `report` run where its output is no terminal (a CI log, a file, this test's writer): progress is one
 * line per case, without the carriage returns and erase-line escapes that redraw it on a terminal.
 */
class ReportCliTest {
    @Test
    void progressOffATerminalIsOneLinePerCaseWithoutEscapes() {
        // `true` as the driver: every case is quick (and a MISMATCH, exit 3), through a real proxy each
        CliRun run = CliRun.of("report", "--spec", "--driver-cmd", "true", "--upstream", UpstreamLane.uri());
        assertEquals(3, run.exitCode(), run::toString);
        assertFalse(run.err().contains("\u001b") || run.err().contains("\r"), () -> "escapes in: " + run.err());
        List<String> progress = run.err().lines().filter(line -> line.matches("\\[\\d+/\\d+] .*")).toList();
        assertTrue(progress.size() > 10, run::toString);
        assertTrue(progress.get(0).startsWith("[1/"), progress::toString);
        assertTrue(run.out().contains("MISMATCH"), run::toString);
    }
}
