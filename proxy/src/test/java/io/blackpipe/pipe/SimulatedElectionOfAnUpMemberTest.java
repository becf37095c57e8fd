package io.blackpipe.pipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.blackpipe.fault.Failover;
import io.blackpipe.testing.Await;
import io.blackpipe.testing.UpstreamLane;
import io.blackpipe.topology.MemberAddress;
import io.blackpipe.topology.MemberState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.bson.BsonArray;
import org.bson.BsonValue;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A simulated set elects only a member that could win a real set's election: one neither down (an outage, a
 * restart's exit) nor quiescing. A scenario author's failover elected the next member while it was restarting, and
 * the driver had no primary it could reach for 14 s, the other secondary up all along.
 */
class SimulatedElectionOfAnUpMemberTest {
    private static final Duration WAIT = Duration.ofSeconds(20);

    @RegisterExtension
    final SimulatedSetOverTheLane set = new SimulatedSetOverTheLane();

    private MemberState.Role role(int index) {
        return set.proxy().memberState(MemberAddress.parse(set.upstream(index))).role();
    }

    @Test
    void aFailoverPassesOverAMemberThatIsDownAndTheDriverWritesToTheOneElected() throws Exception {
        set.proxy().outage(set.upstream(1), 0); // the next in order, down until restored
        set.proxy().failover(Failover.AT_ONCE);
        assertEquals(MemberState.Role.PRIMARY, role(2), "the member after the one down");
        String db = UpstreamLane.freshDatabaseName("electUp");
        try (MongoClient client = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(set.proxy().connectionString() + "&heartbeatFrequencyMS=500"))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(10, TimeUnit.SECONDS)).build());
             MongoClient direct = UpstreamLane.directClient()) {
            client.getDatabase(db).getCollection("c").insertOne(new Document("_id", 1)); // no primary it can reach: a timeout
            Await.until(WAIT, "the driver to see the elected member as primary", () -> client.getClusterDescription()
                    .getServerDescriptions().stream().anyMatch(d -> d.isPrimary() && d.getAddress().toString()
                            .equals(set.proxy().members().get(2).advertised().toString())));
            assertEquals(1, direct.getDatabase(db).getCollection("c").countDocuments(), "the node holds the write");
        }
    }

    /** The member chosen as an election began, and down when it ends, is not elected: the next one up is. */
    @Test
    void anElectionEndsOnAMemberThatIsUpThen() throws Exception {
        set.proxy().failover(new Failover(1_000, 0)); // no primary for 1 s, the second member to be elected
        set.proxy().outage(set.upstream(1), 0);
        Await.until(WAIT, "the election to end", () -> role(0) == MemberState.Role.PRIMARY || role(1) == MemberState.Role.PRIMARY
                || role(2) == MemberState.Role.PRIMARY);
        assertEquals(MemberState.Role.PRIMARY, role(2), "the member after the one down");
    }

    /** With every other member down, the next in order, as before: a restart's or an app's stepdown goes on as it did. */
    @Test
    void aFailoverWithEveryOtherMemberDownElectsTheNextAllTheSame() {
        set.proxy().outage(set.upstream(1), 0);
        set.proxy().outage(set.upstream(2), 0);
        set.proxy().failover(Failover.AT_ONCE);
        assertEquals(MemberState.Role.PRIMARY, role(1));
    }

    /**
     * A failover during a rolling restart: each member restarts once, the turn of each asked as it comes. The order was
     * taken at the step (secondaries, then "primary"), so the member elected meanwhile (the first restarted, back at
     * 600 ms) restarted twice and the old primary never.
     */
    @Test
    void aRollingRestartWithAFailoverInItRestartsEachMemberOnce() throws Exception {
        set.proxy().scenarios().start(set.proxy().scenarioLoader().parse("rolling.yaml", """
                name: rolling
                timeline:
                  - at: 0s
                    rollingRestart: {quiesce: 300ms, down: 300ms, between: 400ms}
                  - at: 700ms
                    failover: {}
                """));
        List<String> restarted = new ArrayList<>();
        Await.until(WAIT, "three turns of the rolling restart", () -> {
            restarted.clear();
            for (BsonValue step : set.proxy().scenarios().status().getArray("stepsDone", new BsonArray())) {
                Matcher turn = Pattern.compile("\\d+ms rolling restart: (primary )?(\\S+)").matcher(step.asString().getValue());
                if (turn.matches()) {
                    restarted.add(turn.group(2));
                }
            }
            return restarted.size() == 3;
        });
        String status = set.proxy().scenarios().status().toJson();
        assertEquals(List.of(set.upstream(0), set.upstream(1), set.upstream(2)), restarted.stream().sorted().toList(),
                "each member once: " + status);
        assertTrue(status.contains("700ms fail over\"") && !status.contains("FAILED"), "the failover took place: " + status);
        Await.until(WAIT, "every member back", () -> set.proxy().members().stream()
                .allMatch(m -> !set.proxy().listener(m.upstream()).down() && set.proxy().listener(m.upstream()).quiesce() == null));
    }
}
