package io.blackpipe.report;

import io.blackpipe.topology.MemberAddress;
import io.blackpipe.topology.UpstreamUri;
import io.blackpipe.wire.BlockingCommandClient;
import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;
import org.bson.BsonDocument;
import org.bson.BsonInt32;

/** The resilience report: the article's strategy tables, run against a real upstream. */
public final class ResilienceReport {
    private final String upstreamUri;
    private final String upstreamDescription;
    private final boolean jongodb;
    private final int iterations;
    private final List<Cell> cells;

    private ResilienceReport(String upstreamUri, String upstreamDescription, boolean jongodb, int iterations, List<Cell> cells) {
        this.upstreamUri = upstreamUri;
        this.upstreamDescription = upstreamDescription;
        this.jongodb = jongodb;
        this.iterations = iterations;
        this.cells = cells;
    }

    /** Runs every strategy under every fault, {@code iterations} increments per cell. */
    public static ResilienceReport run(String upstreamUri, String upstreamDescription, int iterations, long seed,
                                       Consumer<String> progress) throws InterruptedException {
        return run(upstreamUri, upstreamDescription, iterations, seed, progress, FAULTS);
    }

    /** The fault columns, in order. */
    public static final List<String> FAULTS = Arrays.stream(FaultColumn.all()).map(FaultColumn::name).toList();

    /** Runs every strategy under the named faults only. */
    public static ResilienceReport run(String upstreamUri, String upstreamDescription, int iterations, long seed,
                                       Consumer<String> progress, List<String> faults) throws InterruptedException {
        FaultColumn[] columns = Arrays.stream(FaultColumn.all()).filter(f -> faults.contains(f.name())).toArray(FaultColumn[]::new);
        if (columns.length != faults.size()) {
            throw new IllegalArgumentException("unknown fault in " + faults + "; the report knows " + FAULTS);
        }
        boolean jongodb = isJongodb(upstreamUri);
        RetryableWritesSupport writeRetries = RetryableWritesSupport.of(upstreamUri);
        // on a standalone the driver's row is its real outcome there (no retries): the line says why
        String description = writeRetries.describe(
                upstreamDescription + (jongodb ? " (jongodb: blackpipe answers a retried write from its first run, as mongod does)" : ""));
        List<Cell> cells = new ReportRunner(upstreamUri, jongodb, iterations, seed, progress).run(columns, Strategy.all(seed));
        return new ResilienceReport(upstreamUri, description, jongodb, iterations, cells);
    }

    /** jongodb answers buildInfo with a version that names it. */
    static boolean isJongodb(String uri) {
        MemberAddress seed = UpstreamUri.parse(uri).seeds().get(0);
        try (BlockingCommandClient client = new BlockingCommandClient(seed.host(), seed.port(), 5000)) {
            BsonDocument info = client.run("admin", new BsonDocument("buildInfo", new BsonInt32(1)));
            return info.toJson().contains("jongodb");
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    public String text() {
        return ReportRenderer.text(upstreamDescription, cells);
    }

    public String markdown() {
        return ReportRenderer.markdown(upstreamDescription, cells);
    }

    public String json() {
        return ReportRenderer.json(upstreamDescription, iterations, cells);
    }

    /** The verdict of one cell, e.g. verdict("reply lost after apply", "always retry (5x)"). */
    public String verdict(String fault, String strategy) {
        return cell(fault, strategy).verdict();
    }

    /** Retries the proxy counted for the update commands of one cell. */
    public long retries(String fault, String strategy) {
        return cell(fault, strategy).retries();
    }

    public long attempts(String fault, String strategy) {
        return cell(fault, strategy).attempts();
    }

    public long counter(String fault, String strategy) {
        return cell(fault, strategy).counter();
    }

    /** The strategy rows, in order. */
    public static List<String> strategies() {
        return Arrays.stream(Strategy.all(0)).map(Strategy::name).toList();
    }

    public boolean ranOnJongodb() {
        return jongodb;
    }

    public String upstreamUri() {
        return upstreamUri;
    }

    private Cell cell(String fault, String strategy) {
        return cells.stream().filter(c -> c.fault().equals(fault) && c.strategy().equals(strategy)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no cell " + fault + " x " + strategy));
    }
}
