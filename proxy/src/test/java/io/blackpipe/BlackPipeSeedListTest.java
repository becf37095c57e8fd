package io.blackpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoTimeoutException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.blackpipe.testing.HeldPort;
import io.blackpipe.testing.LogCapture;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.topology.MemberAddress;
import io.blackpipe.topology.UpstreamUri;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * Which seed blackpipe proxies when the URI names several and no replicaSet, as a driver chooses
 * (the Server Discovery and Monitoring spec): a standalone among several seeds is passed over, as
 * a seed that does not answer is, and each seed passed over before the one used is logged; a lone
 * standalone seed is still proxied (see {@link BlackPipeReplicaSetNameTest}).
 */
class BlackPipeSeedListTest {

    /** The lane's seeds, "host:port,host:port"; skips a lane that is dialled directly (one seed only). */
    private static String laneSeeds() {
        UpstreamUri lane = UpstreamUri.parse(UpstreamLane.uri());
        assumeFalse(lane.directConnection(), () -> "the " + UpstreamLane.name() + " lane is dialled directly: one seed only");
        return lane.seeds().stream().map(MemberAddress::toString).collect(Collectors.joining(","));
    }

    private static MemberAddress firstLaneSeed() {
        return UpstreamUri.parse(UpstreamLane.uri()).seeds().get(0);
    }

    @Test
    void aStandaloneAmongSeveralSeedsIsPassedOverForTheSetTheNextSeedIsInAndSaidSo() throws Exception {
        String seeds = laneSeeds();
        String reported = UpstreamLane.setName();
        try (ScriptedMongod standalone = ScriptedMongod.builder().standalone().start();
             LogCapture log = LogCapture.start();
             BlackPipe proxied = BlackPipe.start("mongodb://" + standalone.address() + "," + seeds + "/");
             MongoClient client = MongoClients.create(MongoClientSettings.builder()
                     .applyConnectionString(new ConnectionString(proxied.connectionString()))
                     .applyToClusterSettings(b -> b.serverSelectionTimeout(15, TimeUnit.SECONDS)).build())) {
            assertTrue(proxied.connectionString().endsWith("?replicaSet=" + reported), proxied.connectionString());
            client.getDatabase(UpstreamLane.freshDatabaseName("seeds")).getCollection("c").insertOne(new Document("_id", 1));
            assertEquals(1, proxied.attempts("insert"), "the insert went through blackpipe to the set");
            assertEquals(0, standalone.commandsReceived("insert").size(), "nothing reached the standalone");
            log.await(m -> m.equals("upstream seed " + standalone.address() + " passed over: it is a standalone (its hello has no"
                    + " setName), which a driver given several seeds does not use; using " + firstLaneSeed()),
                    Duration.ZERO, "saying the standalone was passed over for the set");
        }
    }

    @Test
    void aSeedThatDoesNotAnswerIsLoggedOnceALaterSeedIsUsed() throws Exception {
        String seeds = laneSeeds();
        HeldPort refusing = HeldPort.any(); // bound, not listening: refused, and given to no process that would answer
        String silent = "127.0.0.1:" + refusing.port();
        try (refusing; LogCapture log = LogCapture.start();
             BlackPipe proxied = BlackPipe.start("mongodb://" + silent + "," + seeds + "/")) {
            assertTrue(proxied.connectionString().endsWith("?replicaSet=" + UpstreamLane.setName()), proxied.connectionString());
            String line = log.await(m -> m.startsWith("upstream seed " + silent + " passed over: no answer to hello ("),
                    Duration.ZERO, "saying the silent seed was passed over");
            assertTrue(line.endsWith("); using " + firstLaneSeed()), line);
        }
    }

    @Test
    void severalSeedsThatAreAllStandalonesFailTheStartAsADriverWouldUseNone() throws Exception {
        HeldPort refusing = HeldPort.any();
        String silent = "127.0.0.1:" + refusing.port();
        try (refusing; ScriptedMongod one = ScriptedMongod.builder().standalone().start();
             ScriptedMongod two = ScriptedMongod.builder().standalone().start();
             LogCapture log = LogCapture.start()) {
            String uri = "mongodb://" + one.address() + "," + silent + "," + two.address() + "/";
            IllegalStateException refused = assertThrows(IllegalStateException.class, () -> BlackPipe.start(uri).close());
            assertTrue(refused.getMessage().startsWith("no upstream seed can be proxied: " + one.address() + " is a standalone"
                    + " (its hello has no setName); " + two.address() + " is a standalone (its hello has no setName); no answer from "
                    + silent + " ("), refused::getMessage);
            assertTrue(refused.getMessage().endsWith(". A driver given several seeds uses no standalone (the Server Discovery and"
                    + " Monitoring spec removes it from the topology): give a standalone's address alone to proxy it"), refused::getMessage);
            assertTrue(log.messages().stream().noneMatch(m -> m.contains(" passed over")),
                    () -> "the failure says it all; no seed was used after those passed over: " + log.messages());

            // what the real driver makes of the same seeds: no server it may use
            try (MongoClient driver = MongoClients.create(MongoClientSettings.builder()
                    .applyConnectionString(new ConnectionString(uri))
                    .applyToClusterSettings(b -> b.serverSelectionTimeout(1, TimeUnit.SECONDS)).build())) {
                assertThrows(MongoTimeoutException.class, () -> driver.getDatabase("admin").runCommand(new Document("ping", 1)));
            }

            try (BlackPipe alone = BlackPipe.start(one.uri(""))) { // the standalone named alone is proxied, as a driver uses it
                assertEquals(List.of(MemberAddress.parse(one.address())), alone.server().deployment().members());
                assertEquals("standalone", alone.server().deployment().kind());
            }
        }
    }
}
