package io.blackpipe.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.testing.CommandLog;
import io.blackpipe.testing.Readme;
import io.blackpipe.testing.UpstreamLane;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * /metrics as the README's table says ("these names are the contract"), and the start time a CI query tells a proxy
 * started again by: its counts began anew, and a counter that comes back at the value it had shows Prometheus no reset.
 */
class MetricFamiliesTest {

    @Test
    void everyFamilyTheScrapeShowsIsInTheReadmesTableAndTheStartTimeIsTheProxys() {
        double before = System.currentTimeMillis() / 1000.0;
        String db = UpstreamLane.freshDatabaseName("families");
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            double after = System.currentTimeMillis() / 1000.0;
            proxy.rules().put(proxy.ruleParser().parse("once", BsonDocument.parse("{configureFailPoint: 'failCommand',"
                    + " mode: {times: 1}, data: {failCommands: ['insert'], closeConnection: true}}")));
            try (MongoClient client = MongoClients.create(CommandLog.withOptions(proxy.connectionString(), "retryWrites=true"))) {
                client.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1)); // closed, then retried
            }
            String scrape = proxy.registry().scrape();
            Set<String> families = scrape.lines().filter(line -> line.startsWith("# TYPE blackpipe_"))
                    .map(line -> line.split(" ")[2]).collect(Collectors.toCollection(TreeSet::new));
            Set<String> documented = new TreeSet<>();
            for (Readme.Paragraph row : Readme.read().tableRows("Counters, metrics, history")) {
                documented.addAll(Readme.spans(Readme.cells(row.text()).get(0)));
            }
            for (String family : families) {
                String named = family.replaceAll("_max$", "");
                // the table names a counter as it is scraped (_total), a histogram by its family
                assertTrue(documented.contains(named) || documented.contains(named + "_total"),
                        () -> family + " is in the README's metrics table: " + documented);
            }
            List<String> start = scrape.lines().filter(line -> line.startsWith("blackpipe_start_time_seconds ")).toList();
            assertEquals(1, start.size(), scrape);
            double started = Double.parseDouble(start.get(0).split(" ")[1]);
            assertTrue(started >= before - 1 && started <= after + 1, () -> "started at " + started + ", between " + before + " and " + after);
            assertTrue(families.contains("blackpipe_faults_injected_total"), "a family that appears with a fault: " + families);
        }
    }
}
