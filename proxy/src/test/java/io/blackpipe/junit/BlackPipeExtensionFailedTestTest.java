package io.blackpipe.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;
import io.blackpipe.BlackPipe;
import io.blackpipe.Fault;
import java.time.Duration;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/** A test that fails half-way, its faults still in place, leaves the next test (and a @Nested one) the class's rules only. */
class BlackPipeExtensionFailedTestTest {

    @Test
    void aFailedTestsRulesOutageAndRemovedClassRuleAreAllUndone() {
        List<Throwable> failures = JUnitRun.of(FailsHalfWay.class).failures();
        assertEquals(1, failures.size(), failures::toString);
        assertEquals("deliberately, with its faults in place", failures.get(0).getMessage());
    }

    @BlackPipeTest
    @TestMethodOrder(MethodOrderer.OrderAnnotation.class)
    static class FailsHalfWay {
        private final BlackPipe fromConstructor;

        FailsHalfWay(BlackPipe blackPipe) {
            this.fromConstructor = blackPipe;
        }

        @BeforeAll
        static void classRule(BlackPipe blackPipe) {
            blackPipe.fail("ping").id("class-rule").times(1).errorCode(2);
        }

        @Test
        @Order(1)
        void failsHalfWay(BlackPipe blackPipe) {
            blackPipe.fail("insert").id("mine").with(Fault.RESET);
            blackPipe.removeRule("class-rule");
            blackPipe.outage("all", Duration.ZERO);
            throw new AssertionError("deliberately, with its faults in place");
        }

        @Test
        @Order(2)
        void findsTheClassRuleOnlyAndEveryMemberUp(BlackPipe blackPipe) {
            assertSame(fromConstructor, blackPipe, "one proxy per class, for constructor and method parameters");
            assertEquals(1, blackPipe.rules().size(), blackPipe.rules()::toString);
            assertTrue(blackPipe.rules().get(0).contains("\"id\": \"class-rule\""), blackPipe.rules()::toString);
            assertEquals(List.of(), blackPipe.history());
            try (MongoClient client = MongoClients.create(blackPipe.connectionString() + "&serverSelectionTimeoutMS=5000")) {
                MongoDatabase admin = client.getDatabase("admin"); // reachable: the outage is over; the class rule fresh
                assertEquals(2, assertThrows(MongoCommandException.class, () -> admin.runCommand(new Document("ping", 1))).getErrorCode());
                admin.runCommand(new Document("ping", 1));
            }
            assertEquals(1, blackPipe.fired("class-rule"));
        }

        @Nested
        class Inner {
            @Test
            void findsTheClassRuleToo(BlackPipe blackPipe) {
                assertEquals(1, blackPipe.rules().size(), blackPipe.rules()::toString);
            }
        }
    }
}
