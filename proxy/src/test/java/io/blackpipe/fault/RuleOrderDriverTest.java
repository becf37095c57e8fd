package io.blackpipe.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoCollection;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * Which rule decides when several match, and that random rules replay with the proxy's seed,
 * proven with the real driver through the proxy (retries off, so one insertOne is one attempt).
 */
class RuleOrderDriverTest {
    private static final String INSERT = "{configureFailPoint: 'failCommand', mode: %s, data: {failCommands: ['insert'], errorCode: %d}}";

    private static String insertRule(String mode, int code) {
        return String.format(INSERT, mode, code);
    }

    /** The error code the driver saw for one insert, or 0 when it went through. */
    private static int insert(MongoCollection<Document> c, int id) {
        try {
            c.insertOne(new Document("_id", id));
            return 0;
        } catch (MongoCommandException e) {
            return e.getErrorCode();
        }
    }

    private static int insertCode(MongoCollection<Document> c, int id) {
        return assertThrows(MongoCommandException.class, () -> c.insertOne(new Document("_id", id))).getErrorCode();
    }

    // ---- precedence: RuleSet.decide takes the first rule, in the order added, that matches and fires ----

    @Test
    void theFirstRuleAddedWinsUntilItIsSpent(TestInfo test) {
        try (DriverRig rig = new DriverRig(test.getTestMethod().orElseThrow().getName())) {
            // 13 Unauthorized and 2 BadValue: neither is retried, so the driver shows exactly the rule that fired.
            rig.putRule("first", insertRule("{times: 2}", 13));
            rig.putRule("second", insertRule("'alwaysOn'", 2));
            MongoCollection<Document> c = rig.collection(rig.client("retryWrites=false"));
            assertEquals(13, insertCode(c, 1));
            assertEquals(13, insertCode(c, 2));
            assertEquals(2, insertCode(c, 3), "the first rule is spent: the second applies");
            assertEquals(2, insertCode(c, 4));
            rig.assertAttempts("insert", 4, 0);
            assertEquals(4, rig.faults("errorReply", "insert"));
            assertEquals(0, rig.serverCount());
        }
    }

    @Test
    void aRuleThatMatchesButDoesNotFireLetsTheNextOneDecide(TestInfo test) {
        try (DriverRig rig = new DriverRig(test.getTestMethod().orElseThrow().getName())) {
            rig.putRule("first", insertRule("{skip: 1}", 13));
            rig.putRule("second", insertRule("{times: 1}", 2));
            MongoCollection<Document> c = rig.collection(rig.client("retryWrites=false"));
            assertEquals(2, insertCode(c, 1), "the first rule skipped this match, so the second decided");
            assertEquals(13, insertCode(c, 2));
            assertEquals(13, insertCode(c, 3));
            rig.proxy.rules().remove("first");
            assertEquals(0, insert(c, 4), "the second rule is spent and nothing else matches");
            assertEquals(1, rig.serverCount());
        }
    }

    /**
     * RuleSet.put replaces a rule with the same id by removing it and appending the new one: a
     * re-sent rule goes behind every rule added since, whatever its place before.
     */
    @Test
    void reSendingARuleWithTheSameIdReplacesItWhereItStands(TestInfo test) {
        try (DriverRig rig = new DriverRig(test.getTestMethod().orElseThrow().getName())) {
            rig.putRule("first", insertRule("'alwaysOn'", 13));
            rig.putRule("second", insertRule("'alwaysOn'", 2));
            MongoCollection<Document> c = rig.collection(rig.client("retryWrites=false"));
            assertEquals(13, insertCode(c, 1));

            rig.putRule("first", insertRule("'alwaysOn'", 20)); // 20 IllegalOperation
            assertEquals(List.of("first", "second"), rig.proxy.rules().rules().stream().map(Rule::id).toList(),
                    "replaced, not added, and not moved: one rule per id, its precedence kept");
            assertEquals(20, insertCode(c, 2), "the replacement decides, still ahead of the second");
            rig.proxy.rules().remove("first");
            assertEquals(2, insertCode(c, 3), "with it removed the second decides");
            rig.assertAttempts("insert", 3, 0);
            assertEquals(0, rig.serverCount());
        }
    }

    // ---- activationProbability draws from the proxy's seed ----

    /**
     * Which of 40 inserts a {activationProbability: 0.5} rule failed: 'x' failed, '.' passed.
     * Also checks the proxy and the server agree with what the driver saw.
     */
    private static String faultedInserts(String name, long seed) {
        try (DriverRig rig = new DriverRig(name, seed)) {
            assertEquals(seed, rig.proxy.seed());
            rig.rule(insertRule("{activationProbability: 0.5}", 13));
            MongoCollection<Document> c = rig.collection(rig.client("retryWrites=false"));
            StringBuilder sequence = new StringBuilder();
            for (int i = 0; i < 40; i++) {
                int code = insert(c, i);
                assertTrue(code == 0 || code == 13, "code " + code);
                sequence.append(code == 0 ? '.' : 'x');
            }
            long faulted = sequence.chars().filter(ch -> ch == 'x').count();
            rig.assertAttempts("insert", 40, 0);
            assertEquals(faulted, rig.faults("errorReply", "insert"));
            assertEquals(40 - faulted, rig.serverCount());
            return sequence.toString();
        }
    }

    @Test
    void theSameSeedFaultsTheSameAttemptsAndAnotherSeedOthers(TestInfo test) {
        String name = test.getTestMethod().orElseThrow().getName();
        String first = faultedInserts(name, 7);
        String replay = faultedInserts(name, 7);
        String other = faultedInserts(name, 8);
        assertTrue(first.contains("x") && first.contains("."), "a random mix, not all or nothing: " + first);
        assertEquals(first, replay, "seed 7 replays the same faults");
        assertNotEquals(first, other, "seed 8 faults other attempts than seed 7: " + first + " vs " + other);
    }
}
