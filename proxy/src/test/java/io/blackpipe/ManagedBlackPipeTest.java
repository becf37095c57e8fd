package io.blackpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.blackpipe.testing.UpstreamLane;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * What a test framework does between tests with the handle that closes a shared proxy: {@code giveBackRules} leaves
 * the class's rules, fresh, and starts generated ids over. A reused id's fired count was the earlier rule's: fired(id)
 * added two rules together.
 */
class ManagedBlackPipeTest {
    @Test
    void givenBackRulesAreFreshAndAReusedIdCountsOnlyItsOwnFiring() {
        try (ManagedBlackPipe managed = BlackPipe.builder().upstream(UpstreamLane.uri()).startManaged("this test, at its end")) {
            BlackPipe blackPipe = managed.blackPipe();
            String classRule = blackPipe.fail("distinct").times(1).errorCode(2);
            List<String> kept = blackPipe.rules();
            String testsRule = blackPipe.fail("find").times(1).errorCode(2);
            assertEquals(List.of("rule-1", "rule-2"), List.of(classRule, testsRule));
            findFails(blackPipe);
            assertEquals(1, blackPipe.fired(testsRule));

            managed.giveBackRules(kept);
            assertEquals(kept, blackPipe.rules(), "the class's rule alone");
            assertEquals(0, blackPipe.fired(testsRule), "fired counts zeroed, as at reset()");
            String next = blackPipe.fail("find").times(1).errorCode(2);
            assertEquals("rule-2", next, "ids start over, past the class's rule-1");
            findFails(blackPipe);
            assertEquals(1, blackPipe.fired(next), "its own firing only, not the earlier rule-2's too");
        }
    }

    private static void findFails(BlackPipe blackPipe) {
        try (MongoClient client = MongoClients.create(blackPipe.connectionString())) {
            assertEquals(2, assertThrows(MongoCommandException.class, () -> client.getDatabase(UpstreamLane.freshDatabaseName("managed"))
                    .getCollection("c").find(new Document("_id", 1)).first()).getErrorCode());
        }
    }
}
