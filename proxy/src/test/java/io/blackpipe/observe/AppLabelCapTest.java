package io.blackpipe.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.ScriptedMongod;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * The metrics' app label is bounded: real Java driver clients, each with its own appName, go through
 * the proxy; the first {@link CappedLabels#MAX_APPS} apps are labelled as themselves, the later ones
 * share app="other", the proxy says so once, and the history still names every app.
 */
class AppLabelCapTest {
    private static final int EXTRA_APPS = 5;

    private static void pingAs(ProxyServer proxy, String appName) {
        try (MongoClient client = MongoClients.create(proxy.connectionString() + "&appName=" + appName
                + "&serverMonitoringMode=poll&heartbeatFrequencyMS=60000")) {
            client.getDatabase("admin").runCommand(new Document("ping", 1));
        }
    }

    private static Set<String> appLabels(ProxyServer proxy) {
        return proxy.registry().find("blackpipe.command.attempts").counters().stream()
                .map(c -> c.getId().getTag("app")).collect(Collectors.toSet());
    }

    private static long pings(ProxyServer proxy, String app) {
        return (long) Meters.sum(proxy.registry(), "blackpipe.command.attempts", "command", "ping", "app", app);
    }

    @Test
    void appsBeyondTheCapAreCountedAsOtherAndTheProxySaysSoOnce() throws Exception {
        try (ScriptedMongod server = ScriptedMongod.start();
             ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(server.uri("replicaSet=" + ScriptedMongod.SET_NAME)));
             LogCapture log = LogCapture.start()) {
            int apps = CappedLabels.MAX_APPS + EXTRA_APPS;
            for (int i = 0; i < apps; i++) {
                pingAs(proxy, "app-" + i);
            }
            pingAs(proxy, "app-0"); // an app labelled before the cap keeps its label

            Set<String> labels = appLabels(proxy);
            assertEquals(CappedLabels.MAX_APPS + 1, labels.size(), "the first apps, and other: " + labels);
            for (int i = 0; i < CappedLabels.MAX_APPS; i++) {
                assertTrue(labels.contains("app-" + i), "app-" + i + " has its own label: " + labels);
            }
            assertEquals(EXTRA_APPS, pings(proxy, "other"), "one ping from each app beyond the cap");
            assertEquals(2, pings(proxy, "app-0"));
            assertEquals(apps + 1, (long) Meters.sum(proxy.registry(), "blackpipe.command.attempts", "command", "ping"),
                    "every ping is counted, under some app");
            String scrape = proxy.registry().scrape();
            assertTrue(scrape.contains("app=\"other\""), "the Prometheus exposition has the other app");
            assertFalse(scrape.contains("app=\"app-" + CappedLabels.MAX_APPS + "\""), "nor any app beyond the cap");

            List<String> said = log.messages().stream().filter(m -> m.contains("own metrics label")).toList();
            assertEquals(List.of(CappedLabels.MAX_APPS + " distinct apps (appName) have their own metrics label: the commands of"
                    + " further apps are counted as app=\"other\" (the history keeps their names)"), said);

            assertTrue(proxy.history().recent().stream().anyMatch(e -> e.app().equals("app-" + (apps - 1))),
                    "the history names the last app itself");
            assertEquals(labels, proxy.registry().find("blackpipe.command.retries").counters().stream()
                    .map(c -> c.getId().getTag("app")).collect(Collectors.toSet()), "the retries meter is labelled the same way");
        }
    }
}
