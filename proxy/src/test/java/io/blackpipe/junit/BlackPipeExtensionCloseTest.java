package io.blackpipe.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;
import io.blackpipe.BlackPipe;
import io.blackpipe.testing.UpstreamLane;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * A test that closes the proxy its class shares (try-with-resources out of habit) is told who closes it, and
 * the tests after it still have it: closed, it broke every later test of the class with "this BlackPipe is closed".
 */
class BlackPipeExtensionCloseTest {
    private static volatile BlackPipe shared;

    @Test
    void closingTheClassProxyFailsThatTestAloneSayingTheExtensionClosesIt() {
        List<Throwable> failures = JUnitRun.of(ClosesIt.class).failures();
        assertEquals(1, failures.size(), failures::toString);
        assertEquals(IllegalStateException.class, failures.get(0).getClass(), failures::toString);
        assertEquals("close(): this BlackPipe is closed by the @BlackPipeTest extension after the tests of "
                + ClosesIt.class.getName() + ", which share it: leave it open (a test that needs a proxy of its own starts"
                + " one, BlackPipe.start(uri))", failures.get(0).getMessage());

        assertNotNull(shared);
        assertEquals("this BlackPipe is closed (its listeners are gone): start a new one",
                assertThrows(IllegalStateException.class, () -> shared.fail("ping").times(1).errorCode(2)).getMessage(),
                "the extension closed it after the class, as before");
    }

    @Test
    void aBlackPipeStartedByATestIsClosedByIt() {
        BlackPipe own = BlackPipe.start(UpstreamLane.uri());
        own.close();
        assertThrows(IllegalStateException.class, own::clearRules);
    }

    @BlackPipeTest
    @TestMethodOrder(MethodOrderer.OrderAnnotation.class)
    static class ClosesIt {
        @Test
        @Order(1)
        void closesTheProxyItIsGiven(BlackPipe blackPipe) {
            shared = blackPipe;
            try (BlackPipe closing = blackPipe) {
                closing.fail("ping").times(1).errorCode(2);
            }
        }

        @Test
        @Order(2)
        void stillHasAWorkingProxy(BlackPipe blackPipe) {
            failsOnePing(blackPipe);
        }

        @Nested
        class Inner {
            @Test
            void sharesItToo(BlackPipe blackPipe) {
                failsOnePing(blackPipe);
            }
        }

        private static void failsOnePing(BlackPipe blackPipe) {
            blackPipe.fail("ping").times(1).errorCode(2);
            try (MongoClient client = MongoClients.create(blackPipe.connectionString() + "&serverSelectionTimeoutMS=5000")) {
                MongoDatabase admin = client.getDatabase("admin");
                assertEquals(2, assertThrows(MongoCommandException.class, () -> admin.runCommand(new Document("ping", 1))).getErrorCode());
                admin.runCommand(new Document("ping", 1));
            }
        }
    }
}
