package io.blackpipe.bench;

import io.blackpipe.bench.Workloads.Result;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;

/** A {@link Report} as the harness's results.json: every round of every target, the summaries and the checks. */
final class ReportJson {
    private ReportJson() {
    }

    static String of(Report report, Map<String, String> machine, Map<String, String> settings, String upstream) {
        BsonDocument root = new BsonDocument();
        root.append("machine", strings(machine));
        root.append("settings", strings(settings));
        root.append("upstream", new BsonString(upstream));
        root.append("targets", strings(report.targetDescriptions));
        BsonArray results = new BsonArray();
        for (Report.Cell cell : report.cells()) {
            for (String target : report.targets()) {
                Report.Summary s = report.summary(cell, target);
                if (s == null) {
                    continue;
                }
                BsonArray rounds = new BsonArray();
                for (Result r : report.rounds(cell, target)) {
                    rounds.add(new BsonDocument("opsPerSec", num(r.opsPerSec())).append("p50Micros", num(r.p50Micros()))
                            .append("p99Micros", num(r.p99Micros())).append("ops", new BsonInt64(r.ops()))
                            .append("proxyCpuMicrosPerOp", num(r.proxyCpuMicrosPerOp()))
                            .append("proxyAllocBytesPerOp", num(r.proxyAllocBytesPerOp()))
                            .append("machineCpuMicrosPerOp", num(r.machineCpuMicrosPerOp()))
                            .append("machineBusyShare", num(r.machineBusyShare()))
                            .append("errors", new BsonInt64(r.errors())));
                }
                results.add(new BsonDocument("workload", new BsonString(cell.workload().id))
                        .append("threads", new BsonInt32(cell.threads()))
                        .append("target", new BsonString(target))
                        .append("opsPerSec", num(s.opsPerSec()))
                        .append("p50Micros", num(s.p50Micros()))
                        .append("p99Micros", num(s.p99Micros()))
                        .append("ratioToDirect", num(s.ratio()))
                        .append("ratioToDirectMin", num(s.ratioMin()))
                        .append("ratioToDirectMax", num(s.ratioMax()))
                        .append("addedP50Micros", target.equals(Target.DIRECT) ? BsonNull.VALUE : num(s.addedP50Micros()))
                        .append("proxyCpuMicrosPerOp", num(s.cpuMicrosPerOp()))
                        .append("proxyAllocBytesPerOp", num(s.allocBytesPerOp()))
                        .append("machineCpuMicrosPerOp", num(s.machineCpuMicrosPerOp()))
                        .append("machineBusyShare", num(s.machineBusyShare()))
                        .append("errors", new BsonInt64(s.errors()))
                        .append("rounds", rounds));
            }
        }
        root.append("results", results);
        if (report.idle != null) {
            root.append("idleConnections", new BsonDocument("requested", new BsonInt32(report.idle.requested()))
                    .append("held", new BsonInt32(report.idle.held()))
                    .append("heapBeforeBytes", new BsonInt64(report.idle.heapBefore()))
                    .append("heapAfterBytes", new BsonInt64(report.idle.heapAfter()))
                    .append("heapBytesPerConnection", num(report.idle.bytesPerConnection()))
                    .append("directBeforeBytes", new BsonInt64(report.idle.directBefore()))
                    .append("directAfterBytes", new BsonInt64(report.idle.directAfter()))
                    .append("proxyFdLimit", new BsonInt64(report.idle.proxyFdLimit()))
                    .append("note", report.idle.limitNote() == null ? BsonNull.VALUE : new BsonString(report.idle.limitNote())));
        } else if (report.idleError != null) {
            root.append("idleConnections", new BsonDocument("error", new BsonString(report.idleError)));
        }
        if (report.startup != null) {
            BsonArray runsMs = new BsonArray();
            report.startup.runsMillis().forEach(v -> runsMs.add(num(v)));
            BsonArray floorMs = new BsonArray();
            report.startup.jvmFloorMillis().forEach(v -> floorMs.add(num(v)));
            root.append("startup", new BsonDocument("command", new BsonString(report.startup.command()))
                    .append("medianMillis", num(report.startup.medianMillis())).append("runsMillis", runsMs)
                    .append("jvmFloorMedianMillis", num(report.startup.jvmFloorMedianMillis())).append("jvmFloorRunsMillis", floorMs));
        } else if (report.startupError != null) {
            root.append("startup", new BsonDocument("error", new BsonString(report.startupError)));
        }
        BsonArray checks = new BsonArray();
        for (Report.Check c : report.checks()) {
            checks.add(new BsonDocument("cell", new BsonString(c.target())).append("check", new BsonString(c.what()))
                    .append("value", new BsonString(c.value())).append("target", new BsonString(c.limit()))
                    .append("result", new BsonString(c.pass() == null ? "SKIP" : c.pass() ? "PASS" : "MISS")));
        }
        root.append("checks", checks);
        BsonArray notes = new BsonArray();
        report.remarks.forEach(r -> notes.add(new BsonString(r)));
        root.append("remarks", notes);
        return root.toJson(JsonWriterSettings.builder().outputMode(JsonMode.RELAXED).indent(true).build()) + "\n";
    }

    private static BsonValue num(double v) {
        if (Double.isNaN(v) || Double.isInfinite(v)) {
            return BsonNull.VALUE;
        }
        return new BsonDouble(Math.round(v * 1000) / 1000.0);
    }

    private static BsonDocument strings(Map<String, String> map) {
        BsonDocument doc = new BsonDocument();
        map.forEach((k, v) -> doc.append(k, v == null ? BsonNull.VALUE : new BsonString(v)));
        return doc;
    }
}
