package io.blackpipe.report;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.blackpipe.observe.HistoryEntry;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.IntStream;
import org.bson.Document;

/**
 * {@code report --spec}: does a driver follow the retryable reads/writes specs? Each case runs
 * through a fresh blackpipe in front of the upstream, with one failCommand rule armed, and is
 * judged by the attempts the proxy saw for the case's command.
 */
public final class SpecCheck {
    private static final long SELECTION_MILLIS = 10_000;
    /** A w:0 insert gets no reply: how long to wait for it (and for a retry that should not come). */
    private static final long UNACKNOWLEDGED_WAIT_MILLIS = 3000;
    private static final long SETTLE_MILLIS = 300;
    /** How long an attempt counted may take to reach the history (it is recorded when it ends). */
    private static final long HISTORY_WAIT_MILLIS = 2000;

    private final String upstreamDescription;
    private final String driverName;
    private final List<SpecResult> results;

    private SpecCheck(String upstreamDescription, String driverName, List<SpecResult> results) {
        this.upstreamDescription = upstreamDescription;
        this.driverName = driverName;
        this.results = List.copyOf(results);
    }

    /** Runs every case of {@link SpecCase#all()}. */
    public static SpecCheck run(String upstreamUri, String upstreamDescription, SpecDriver driver, Consumer<String> progress)
            throws InterruptedException {
        return run(upstreamUri, upstreamDescription, driver, progress, SpecCase.all());
    }

    public static SpecCheck run(String upstreamUri, String upstreamDescription, SpecDriver driver, Consumer<String> progress,
                                List<SpecCase> cases) throws InterruptedException {
        ScratchDatabases databases = new ScratchDatabases("spec");
        List<SpecResult> results = new ArrayList<>();
        RetryableWritesSupport writeRetries = RetryableWritesSupport.of(upstreamUri);
        String description = writeRetries.describeForSpec(upstreamDescription);
        // before 4.4 a driver labels a listed code itself: a case that tells label from code has no single right answer
        List<SpecCase> run = cases.stream().filter(c -> writeRetries.labelsDecide() || !c.byLabel()).toList();
        try (MongoClient direct = ReportRunner.directClient(upstreamUri, SELECTION_MILLIS)) {
            for (SpecCase planned : run) {
                SpecCase specCase = writeRetries.supported() ? planned : planned.withoutWriteRetries();
                progress.accept("[" + (results.size() + 1) + "/" + run.size() + "] " + specCase.name());
                String database = databases.name(results.size());
                seed(direct.getDatabase(database).getCollection(SpecDriver.COLLECTION));
                results.add(runCase(upstreamUri, database, specCase, driver));
                ScratchDatabases.dropQuietly(direct, database);
            }
        }
        return new SpecCheck(description, driver.name(), results);
    }

    /** Five documents, _id 1 to 5: enough for a find, a getMore after a batch of 2, and multi-document writes. */
    private static void seed(MongoCollection<Document> items) {
        items.insertMany(IntStream.rangeClosed(1, 5).mapToObj(i -> new Document("_id", i).append("n", i)).toList());
    }

    private static SpecResult runCase(String upstreamUri, String database, SpecCase specCase, SpecDriver driver)
            throws InterruptedException {
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(upstreamUri))) {
            proxy.rules().put(proxy.ruleParser().parse("spec", specCase.rule()));
            String raised = driver.run(uri(ReportRunner.withUpstreamCredentials(proxy.connectionString(), upstreamUri), database),
                    specCase.operation());
            long attempts = settle(proxy, specCase);
            String transactionProblem = specCase.transactionId().problem(attemptsRecorded(proxy, specCase, database, attempts),
                    attempts);
            return new SpecResult(specCase, attempts, transactionProblem, raised);
        }
    }

    /** The history's entries of the case's command, first attempt first, once there are as many as attempts were counted. */
    private static List<HistoryEntry> attemptsRecorded(ProxyServer proxy, SpecCase specCase, String database, long attempts)
            throws InterruptedException {
        long deadline = System.currentTimeMillis() + HISTORY_WAIT_MILLIS;
        List<HistoryEntry> entries = ofCase(proxy, specCase, database);
        while (entries.size() < attempts && System.currentTimeMillis() < deadline) {
            Thread.sleep(20);
            entries = ofCase(proxy, specCase, database);
        }
        return entries;
    }

    private static List<HistoryEntry> ofCase(ProxyServer proxy, SpecCase specCase, String database) {
        return proxy.history().recent().stream()
                .filter(e -> e.command().equals(specCase.command()) && e.database().equals(database))
                .sorted(Comparator.comparingLong(HistoryEntry::invokedAtMicros)).toList();
    }

    /** Attempts once they stop changing; a w:0 insert may still be on its way when the driver returns. */
    private static long settle(ProxyServer proxy, SpecCase specCase) throws InterruptedException {
        long deadline = System.currentTimeMillis() + (specCase.operation().equals("insertW0") ? UNACKNOWLEDGED_WAIT_MILLIS : 0);
        long attempts = attempts(proxy, specCase);
        while (attempts == 0 && System.currentTimeMillis() < deadline) {
            Thread.sleep(50);
            attempts = attempts(proxy, specCase);
        }
        if (specCase.operation().equals("insertW0")) {
            Thread.sleep(SETTLE_MILLIS); // room for a retry that should not come
            attempts = attempts(proxy, specCase);
        }
        return attempts;
    }

    private static long attempts(ProxyServer proxy, SpecCase specCase) {
        return ReportRunner.counted(proxy, "blackpipe.command.attempts", specCase.command());
    }

    /** The proxy's connection string with the case's database and both retry options on. */
    static String uri(String connectionString, String database) {
        String withDatabase = connectionString.replaceFirst("/(\\?|$)", "/" + database + "$1");
        return withDatabase + (withDatabase.contains("?") ? "&" : "?") + "retryWrites=true&retryReads=true";
    }

    public List<SpecResult> results() {
        return results;
    }

    public boolean allMatch() {
        return results.stream().allMatch(SpecResult::matches);
    }

    public String text() {
        return SpecRenderer.text(upstreamDescription, driverName, results);
    }

    public String markdown() {
        return SpecRenderer.markdown(upstreamDescription, driverName, results);
    }

    public String json() {
        return SpecRenderer.json(upstreamDescription, driverName, results);
    }
}
