package io.blackpipe.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blackpipe.bench.Report.Cell;
import io.blackpipe.bench.Workloads.Result;
import io.blackpipe.bench.Workloads.Workload;
import java.util.List;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

/** results.json: every target's summary with its rounds, and the verdicts, from results made up here. */
class ReportJsonTest {
    @Test
    void writesEachTargetsSummaryItsRoundsAndTheChecks() {
        Cell find16 = new Cell(Workload.FIND, 16);
        Report report = new Report(List.of(Target.DIRECT, Target.BLACKPIPE));
        report.add(find16, Target.DIRECT, new Result(50_000, 300, 900, 150_000, 0, null, 0.1, 0, 40, 0.99));
        report.add(find16, Target.BLACKPIPE, new Result(40_000, 320, 950, 120_000, 0, null, 12, 500, 50, 0.99));
        report.add(find16, Target.DIRECT, new Result(60_000, 280, 880, 180_000, 0, null, 0.1, 0, 38, 0.99));
        report.add(find16, Target.BLACKPIPE, new Result(45_000, 310, 940, 135_000, 0, null, 12, 500, 48, 0.99));

        BsonDocument json = BsonDocument.parse(ReportJson.of(report, Map.of("nproc", "2"), Map.of("rounds", "2"), "fast: responder"));

        assertEquals("2", json.getDocument("machine").getString("nproc").getValue());
        assertEquals("fast: responder", json.getString("upstream").getValue());
        BsonArray results = json.getArray("results");
        assertEquals(2, results.size(), "one entry per target in the cell");
        BsonDocument blackpipe = results.get(1).asDocument();
        assertEquals(Target.BLACKPIPE, blackpipe.getString("target").getValue());
        assertEquals(16, blackpipe.getInt32("threads").getValue());
        assertEquals(0.775, blackpipe.getDouble("ratioToDirect").getValue(), 1e-9, "median of 0.8 and 0.75");
        assertEquals(2, blackpipe.getArray("rounds").size());
        assertEquals(45_000, blackpipe.getArray("rounds").get(1).asDocument().getDouble("opsPerSec").getValue(), 1e-9);
        assertTrue(results.get(0).asDocument().isNull("addedP50Micros"), "direct adds nothing to itself");
        assertTrue(json.getArray("checks").size() > 0, "the verdicts are in the JSON as in the text");
    }
}
