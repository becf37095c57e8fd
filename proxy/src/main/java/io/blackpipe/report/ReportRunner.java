package io.blackpipe.report;

import static com.mongodb.client.model.Filters.eq;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCredential;
import com.mongodb.MongoTimeoutException;
import com.mongodb.ReadPreference;
import com.mongodb.WriteConcern;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.blackpipe.fault.Scenario;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.bson.Document;

/**
 * Runs the article's table for real: every strategy under every fault, each cell through a fresh
 * blackpipe in front of the upstream, with the real Java driver, counting on the server.
 */
final class ReportRunner {
    /** Operations in a persistent-outage cell at most: each one waits out server selection. */
    private static final int OUTAGE_OPERATIONS = 3;
    private static final long SELECTION_MILLIS = 5000;
    private static final long OUTAGE_SELECTION_MILLIS = 1000;

    private final String upstreamUri;
    private final boolean hasPull;
    private final int iterations;
    private final long seed;
    private final Consumer<String> progress;
    private final ScratchDatabases databases = new ScratchDatabases("report");

    ReportRunner(String upstreamUri, boolean jongodb, int iterations, long seed, Consumer<String> progress) {
        this.upstreamUri = upstreamUri;
        this.hasPull = !jongodb;
        this.iterations = iterations;
        this.seed = seed;
        this.progress = progress;
    }

    List<Cell> run(FaultColumn[] faults, Strategy[] strategies) throws InterruptedException {
        List<Cell> cells = new ArrayList<>();
        int total = faults.length * strategies.length;
        for (FaultColumn fault : faults) {
            for (Strategy strategy : strategies) {
                progress.accept("[" + (cells.size() + 1) + "/" + total + "] " + fault.name() + " x " + strategy.name());
                cells.add(cell(fault, strategy, cells.size()));
            }
        }
        return cells;
    }

    private Cell cell(FaultColumn fault, Strategy strategy, int index) throws InterruptedException {
        int operations = fault.slow() ? Math.min(iterations, OUTAGE_OPERATIONS) : iterations;
        String database = databases.name(index);
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(upstreamUri).withFaultOptions(seed, false));
             MongoClient client = client(withUpstreamCredentials(proxy.connectionString(), upstreamUri), strategy.driverRetries(),
                     selectionMillis(fault));
             MongoClient direct = directClient(upstreamUri, SELECTION_MILLIS)) {
            CounterWorkload counter = new CounterWorkload(client.getDatabase(database).getCollection("counters"), hasPull);
            connect(client);
            String text = fault.text();
            if (!fault.perOperation()) {
                proxy.scenarios().start(loader -> loader.parse(fault.path(), text));
            }
            int errors = 0;
            Map<String, Integer> kinds = new TreeMap<>();
            long start = System.nanoTime();
            for (int i = 0; i < operations; i++) {
                if (fault.perOperation()) { // fresh rules, so each increment meets the fault once
                    Scenario armed = proxy.scenarioLoader().parse(fault.path(), text);
                    proxy.rules().putAll(armed.rules());
                }
                try (ClientSession session = client.startSession()) {
                    strategy.increment(counter.operation(i, session));
                } catch (RuntimeException e) {
                    errors++;
                    kinds.merge(e.getClass().getSimpleName(), 1, Integer::sum);
                }
            }
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            proxy.scenarios().stop();
            proxy.rules().clear();
            Document day = direct.getDatabase(database).getCollection("counters").find(eq("_id", CounterWorkload.DAY)).first();
            long value = day == null ? 0 : day.get("counter", Number.class) == null ? 0 : day.get("counter", Number.class).longValue();
            ScratchDatabases.dropQuietly(direct, database);
            return new Cell(fault.name(), strategy.name(), operations, value, errors, kinds, millis,
                    counted(proxy, "blackpipe.command.attempts"), counted(proxy, "blackpipe.command.retries"));
        }
    }

    /**
     * {@code proxyUri} (blackpipe's connection string) with the credentials of {@code upstreamUri}:
     * the report's app authenticates end to end through the proxy as any app does, as the upstream
     * URI's user (its authSource, authMechanism and authMechanismProperties made explicit, so that a
     * database put in the path later does not move them). Without credentials in the upstream URI, {@code proxyUri} as it is.
     */
    static String withUpstreamCredentials(String proxyUri, String upstreamUri) {
        MongoCredential credential = new ConnectionString(upstreamUri).getCredential();
        if (credential == null) {
            return proxyUri;
        }
        String userInfo = "";
        if (credential.getUserName() != null) {
            userInfo = encode(credential.getUserName())
                    + (credential.getPassword() == null ? "" : ":" + encode(new String(credential.getPassword()))) + "@";
        }
        String options = "authSource=" + encode(credential.getSource())
                + (credential.getMechanism() == null ? "" : "&authMechanism=" + encode(credential.getMechanism()))
                + mechanismProperties(upstreamUri);
        String uri = "mongodb://" + userInfo + proxyUri.substring("mongodb://".length());
        return uri + (uri.contains("?") ? "&" : uri.indexOf('/', "mongodb://".length()) < 0 ? "/?" : "?") + options;
    }

    /**
     * The upstream URI's authMechanismProperties option as written (an AWS session token, a Kerberos
     * service name: part of the credential, the login fails without it), or "".
     */
    private static String mechanismProperties(String upstreamUri) {
        int query = upstreamUri.indexOf('?');
        if (query < 0) {
            return "";
        }
        for (String option : upstreamUri.substring(query + 1).split("[&;]")) {
            if (option.regionMatches(true, 0, "authMechanismProperties=", 0, "authMechanismProperties=".length())) {
                return "&" + option;
            }
        }
        return "";
    }

    private static String encode(String text) {
        return URLEncoder.encode(text, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /**
     * Connects before the fault starts. Server selection is kept short so outages cost the cells
     * little time; on a busy machine the first connection may need a few tries.
     */
    static void connect(MongoClient client) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try {
                client.getDatabase("admin").runCommand(new Document("ping", 1));
                return;
            } catch (MongoTimeoutException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
            }
        }
    }

    private static long counted(ProxyServer proxy, String meter) {
        return counted(proxy, meter, "update");
    }

    /** A per-command counter of the proxy (e.g. blackpipe.command.attempts), summed over members and apps. */
    static long counted(ProxyServer proxy, String meter, String command) {
        return (long) proxy.registry().find(meter).tag("command", command).counters().stream()
                .mapToDouble(c -> c.count()).sum();
    }

    /**
     * How long the driver may look for a server. After a reset it must rediscover the member
     * (a busy machine can take a second or more); in an outage every attempt waits this long,
     * so that column gets a short one.
     */
    private static long selectionMillis(FaultColumn fault) {
        return fault.slow() ? OUTAGE_SELECTION_MILLIS : SELECTION_MILLIS;
    }

    /**
     * The report's own client straight to the upstream, which seeds and counts: on the primary with
     * acknowledged majority writes, whatever the upstream URI says (a readPreference=secondary there
     * read a counter that lagged behind the increments; a w=0 seeded documents a case might not find).
     */
    static MongoClient directClient(String upstreamUri, long selectionMillis) {
        return MongoClients.create(MongoClientSettings.builder(settings(upstreamUri, false, false, selectionMillis))
                .readPreference(ReadPreference.primary())
                .writeConcern(WriteConcern.MAJORITY)
                .build());
    }

    static MongoClient client(String uri, boolean retryWrites, long selectionMillis) {
        return client(uri, retryWrites, false, selectionMillis);
    }

    static MongoClient client(String uri, boolean retryWrites, boolean retryReads, long selectionMillis) {
        return MongoClients.create(settings(uri, retryWrites, retryReads, selectionMillis));
    }

    private static MongoClientSettings settings(String uri, boolean retryWrites, boolean retryReads, long selectionMillis) {
        return MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(uri))
                .applicationName("blackpipe-report")
                .retryWrites(retryWrites)
                .retryReads(retryReads)
                .applyToClusterSettings(b -> b.serverSelectionTimeout(selectionMillis, TimeUnit.MILLISECONDS))
                .applyToSocketSettings(b -> b.connectTimeout(10, TimeUnit.SECONDS).readTimeout(10, TimeUnit.SECONDS))
                .applyToServerSettings(b -> b.heartbeatFrequency(500, TimeUnit.MILLISECONDS))
                .build();
    }
}
