package io.blackpipe.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.blackpipe.BlackPipe;
import io.blackpipe.testing.UpstreamLane;
import java.util.ArrayList;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * A rule added without an id gets the id it gets in its test run alone, whichever tests ran before it in the class:
 * generated ids start over as each test's rules are given back. Before, they went on counting across the class, so a
 * test's rule-N, in its output and its fired(id), depended on the tests before it.
 */
class BlackPipeTestRuleIdsTest {
    static final List<List<String>> idsSeen = new ArrayList<>();

    @Test
    void everyTestOfAClassGetsTheIdsItGetsAlone() {
        idsSeen.clear();
        JUnitRun.of(GeneratedIds.class).assertAllPassed(3);
        assertEquals(List.of(List.of("rule-1", "rule-2", "rule-3"), List.of("rule-1", "rule-2", "rule-3"),
                List.of("rule-1", "rule-2", "rule-3")), idsSeen, "the class's, the instance's and the test's own rule, in each test");
    }

    @BlackPipeTest
    @TestMethodOrder(MethodOrderer.OrderAnnotation.class)
    static class GeneratedIds {
        private static String classRule;
        private final String instanceRule;

        GeneratedIds(BlackPipe blackPipe) { // under PER_METHOD, made for each test before its reset
            instanceRule = blackPipe.fail("count").times(1).errorCode(2);
        }

        @BeforeAll
        static void setUp(BlackPipe blackPipe) {
            classRule = blackPipe.fail("distinct").times(1).errorCode(2);
        }

        @Test
        @Order(1)
        void first(BlackPipe blackPipe) {
            addAndFire(blackPipe);
        }

        @Test
        @Order(2)
        void second(BlackPipe blackPipe) {
            addAndFire(blackPipe);
            blackPipe.fail("aggregate").errorCode(2); // a rule more than the others: the next test's ids are not moved on
        }

        @Test
        @Order(3)
        void third(BlackPipe blackPipe) {
            addAndFire(blackPipe);
        }

        /** This test's rule, seen to fire by its id once, the first time in this test whatever an earlier test's rule of that id did. */
        private void addAndFire(BlackPipe blackPipe) {
            String own = blackPipe.fail("find").times(1).errorCode(2);
            try (MongoClient client = MongoClients.create(blackPipe.connectionString())) {
                MongoCommandException refused = assertThrows(MongoCommandException.class, () -> client
                        .getDatabase(UpstreamLane.freshDatabaseName("ruleids")).getCollection("c").find(new Document("_id", 1)).first());
                assertEquals(2, refused.getErrorCode());
            }
            assertEquals(1, blackPipe.fired(own), "fired counts start over with the ids");
            idsSeen.add(List.of(classRule, instanceRule, own));
        }
    }
}
