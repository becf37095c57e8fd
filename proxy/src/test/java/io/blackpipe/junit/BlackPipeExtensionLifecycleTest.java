package io.blackpipe.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;
import io.blackpipe.BlackPipe;
import io.blackpipe.Fault;
import java.net.ConnectException;
import java.net.Socket;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.bson.Document;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.ClassOrderer;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.RepetitionInfo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestClassOrder;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * How @BlackPipeTest classes behave inside a real JUnit run (nested classes, parallel execution,
 * class-level setup): each fixture class below is run by {@link JUnitRun} as a build would run it,
 * and its own assertions must all pass. The fixtures are static nested classes, which neither
 * Surefire nor JUnit picks up on its own.
 */
class BlackPipeExtensionLifecycleTest {

    @Test
    void aNestedClassThatDeclaresItsOwnOptionsGetsItsOwnProxyAndAPlainNestedClassSharesItsOuters() {
        NestedClasses.SEEN.clear();
        JUnitRun.of(NestedClasses.class).assertAllPassed(3);
        assertSame(NestedClasses.SEEN.get("outer"), NestedClasses.SEEN.get("plain nested"));
        assertNotSame(NestedClasses.SEEN.get("outer"), NestedClasses.SEEN.get("simulated nested"));
        assertClosed(NestedClasses.SEEN.get("outer"));
        assertClosed(NestedClasses.SEEN.get("simulated nested"));
    }

    @Test
    void underParallelExecutionTheTestsOfAClassTakeTurnsWhileClassesStillRunSideBySide() {
        ConcurrentA.BOTH_CLASSES_RUNNING.set(new CountDownLatch(2));
        JUnitRun.of(ConcurrentA.class, ConcurrentB.class).parallel(4).assertAllPassed(10);
    }

    @BlackPipeTest
    static class ConcurrentA {
        static final AtomicReference<CountDownLatch> BOTH_CLASSES_RUNNING = new AtomicReference<>();

        @RepeatedTest(4)
        void theRulesAreThisTestsOwnUntilItEnds(BlackPipe blackPipe, RepetitionInfo repetition) throws InterruptedException {
            String mine = blackPipe.fail("insert").with(Fault.RESET);
            Thread.sleep(50 + 100L * repetition.getCurrentRepetition()); // another test's reset would land in here
            assertEquals(1, blackPipe.rules().size(), () -> "only " + mine + ": " + blackPipe.rules());
            assertTrue(blackPipe.rules().get(0).contains("\"" + mine + "\""), () -> "only " + mine + ": " + blackPipe.rules());
        }

        @Test
        void meetsTheOtherClass() throws InterruptedException {
            CountDownLatch both = BOTH_CLASSES_RUNNING.get();
            both.countDown();
            assertTrue(both.await(20, TimeUnit.SECONDS), "the two classes, each with its own proxy, ran at the same time");
        }
    }

    static class ConcurrentB extends ConcurrentA { // @BlackPipeTest is inherited: a proxy of its own
    }

    @Test
    void rulesSetUpInBeforeAllHoldFreshInEveryTestOfTheirClass() {
        JUnitRun.of(ClassLevelRules.class).assertAllPassed(3);
    }

    @BlackPipeTest
    @TestMethodOrder(MethodOrderer.OrderAnnotation.class)
    static class ClassLevelRules {
        @BeforeAll
        static void everyTestsFirstPingFails(BlackPipe blackPipe) {
            blackPipe.fail("ping").times(1).errorCode(2);
        }

        @Test
        @Order(1)
        void firstTest(BlackPipe blackPipe) {
            assertPingFailsOnceThenPasses(blackPipe);
            blackPipe.fail("count").with(Fault.HANG); // this test's own: gone after it
        }

        @Test
        @Order(2)
        void secondTest(BlackPipe blackPipe) {
            assertEquals(1, blackPipe.rules().size(), () -> "the class's rule, not the first test's: " + blackPipe.rules());
            assertPingFailsOnceThenPasses(blackPipe); // times(1) again: the rule is fresh
            blackPipe.fail("count").with(Fault.HANG);
        }

        @Nested
        @TestInstance(TestInstance.Lifecycle.PER_CLASS)
        class Inner {
            @BeforeAll
            void findsFailToo(BlackPipe blackPipe) {
                blackPipe.fail("find").times(1).errorCode(2);
            }

            @Test
            void innerTest(BlackPipe blackPipe) {
                assertEquals(2, blackPipe.rules().size(), () -> "the outer class's and this class's, not the last test's: "
                        + blackPipe.rules());
                assertPingFailsOnceThenPasses(blackPipe);
            }
        }

        private static void assertPingFailsOnceThenPasses(BlackPipe blackPipe) {
            try (MongoClient client = MongoClients.create(blackPipe.connectionString())) {
                MongoDatabase admin = client.getDatabase("admin");
                assertEquals(2, assertThrows(MongoCommandException.class, () -> admin.runCommand(new Document("ping", 1))).getErrorCode());
                admin.runCommand(new Document("ping", 1));
            }
        }
    }

    @Test
    void aNestedClassesBeforeAllRulesDoNotLeakIntoTheNextNestedClass() {
        JUnitRun.of(SiblingNestedClasses.class).assertAllPassed(2);
    }

    @BlackPipeTest
    @TestClassOrder(ClassOrderer.OrderAnnotation.class)
    static class SiblingNestedClasses {
        @BeforeAll
        static void theOuterClassesRule(BlackPipe blackPipe) {
            blackPipe.fail("ping").times(1).errorCode(2);
        }

        @Nested
        @Order(1)
        @TestInstance(TestInstance.Lifecycle.PER_CLASS)
        class First {
            @BeforeAll
            void findsFail(BlackPipe blackPipe) {
                blackPipe.fail("find").with(Fault.HANG);
            }

            @Test
            void firstTest(BlackPipe blackPipe) {
                assertEquals(2, blackPipe.rules().size(), () -> "the outer class's and this class's: " + blackPipe.rules());
            }
        }

        @Nested
        @Order(2)
        class Second {
            @Test
            void secondTest(BlackPipe blackPipe) {
                assertEquals(1, blackPipe.rules().size(), () -> "the outer class's only, not the class before's: " + blackPipe.rules());
                assertTrue(blackPipe.rules().get(0).contains("\"ping\""), () -> blackPipe.rules().toString());
            }
        }
    }

    /**
     * The same, for a rule a PER_CLASS nested class adds in its constructor: JUnit makes that instance before any
     * before-all callback. Before, the rule was taken for one in force before the class, and stayed for the next.
     */
    @Test
    void aNestedClassesConstructorRulesDoNotLeakIntoTheNextNestedClass() {
        JUnitRun.of(SiblingNestedClassesRulesInConstructor.class).assertAllPassed(2);
    }

    @BlackPipeTest
    @TestClassOrder(ClassOrderer.OrderAnnotation.class)
    static class SiblingNestedClassesRulesInConstructor {
        @BeforeAll
        static void theOuterClassesRule(BlackPipe blackPipe) {
            blackPipe.fail("ping").times(1).errorCode(2);
        }

        @Nested
        @Order(1)
        @TestInstance(TestInstance.Lifecycle.PER_CLASS)
        class First {
            First(BlackPipe blackPipe) {
                blackPipe.fail("find").with(Fault.HANG);
            }

            @Test
            void firstTest(BlackPipe blackPipe) {
                assertEquals(2, blackPipe.rules().size(), () -> "the outer class's and this class's: " + blackPipe.rules());
            }
        }

        @Nested
        @Order(2)
        class Second {
            @Test
            void secondTest(BlackPipe blackPipe) {
                assertEquals(1, blackPipe.rules().size(), () -> "the outer class's only, not the class before's: " + blackPipe.rules());
                assertTrue(blackPipe.rules().get(0).contains("\"ping\""), () -> blackPipe.rules().toString());
            }
        }
    }

    /**
     * Under the default PER_METHOD lifecycle each test has its own instance: a rule its constructor adds is that test's
     * own, by the id the constructor kept. Before, the first test's was taken for a class rule and given back to every
     * later test, whose own constructor's rule the reset removed: the field's id named a rule no longer there.
     */
    @Test
    void aConstructorsRuleIsEachTestsOwnUnderThePerMethodLifecycle() {
        JUnitRun.of(RulesInAPerMethodConstructor.class).assertAllPassed(2);
    }

    @BlackPipeTest
    @TestMethodOrder(MethodOrderer.OrderAnnotation.class)
    static class RulesInAPerMethodConstructor {
        private final String pingFails;

        RulesInAPerMethodConstructor(BlackPipe blackPipe) {
            pingFails = blackPipe.fail("ping").times(1).errorCode(2);
        }

        @Test
        @Order(1)
        void firstTest(BlackPipe blackPipe) {
            assertOnlyThisRuleFires(blackPipe, pingFails);
        }

        @Test
        @Order(2)
        void secondTest(BlackPipe blackPipe) {
            assertOnlyThisRuleFires(blackPipe, pingFails);
        }

        static void assertOnlyThisRuleFires(BlackPipe blackPipe, String pingFails) {
            assertEquals(1, blackPipe.rules().size(), () -> "this instance's rule only: " + blackPipe.rules());
            assertTrue(blackPipe.rules().get(0).contains("\"" + pingFails + "\""), () -> pingFails + " in " + blackPipe.rules());
            try (MongoClient client = MongoClients.create(blackPipe.connectionString())) {
                assertThrows(MongoCommandException.class, () -> client.getDatabase("admin").runCommand(new Document("ping", 1)));
            }
            assertEquals(1, blackPipe.fired(pingFails));
        }
    }

    /**
     * The same for a @Nested class's tests: JUnit makes an instance of each enclosing class for each of them, and the
     * enclosing constructor's rule is that test's own too. Before, the first test's was taken for a class rule.
     */
    @Test
    void anEnclosingConstructorsRuleIsEachNestedTestsOwnUnderThePerMethodLifecycle() {
        JUnitRun.of(RulesInAnEnclosingPerMethodConstructor.class).assertAllPassed(2);
    }

    @BlackPipeTest
    static class RulesInAnEnclosingPerMethodConstructor {
        private final String pingFails;

        RulesInAnEnclosingPerMethodConstructor(BlackPipe blackPipe) {
            pingFails = blackPipe.fail("ping").times(1).errorCode(2);
        }

        @Nested
        @TestMethodOrder(MethodOrderer.OrderAnnotation.class)
        class Inner {
            @Test
            @Order(1)
            void firstTest(BlackPipe blackPipe) {
                RulesInAPerMethodConstructor.assertOnlyThisRuleFires(blackPipe, pingFails);
            }

            @Test
            @Order(2)
            void secondTest(BlackPipe blackPipe) {
                RulesInAPerMethodConstructor.assertOnlyThisRuleFires(blackPipe, pingFails);
            }
        }
    }

    /**
     * A @Nested class annotated for options of its own takes its enclosing class's upstream. Before, it took only the
     * system property's or variable's (set in this build, so it started in front of another upstream than its outer's).
     */
    @Test
    void aNestedClassWithOptionsOfItsOwnTakesItsEnclosingClasssUpstream() {
        List<Throwable> failures = JUnitRun.of(NestedWithOptionsOfItsOwn.class).failures();
        assertEquals(1, failures.size(), failures::toString);
        assertTrue(failures.get(0).getMessage().contains("blackpipe could not start in front of mongodb://127.0.0.1:1/: "),
                failures.get(0).getMessage());
    }

    @BlackPipeTest(upstream = "mongodb://127.0.0.1:1/") // nothing listens: the failure shows which upstream the nested class took
    static class NestedWithOptionsOfItsOwn {
        @Nested
        @BlackPipeTest(simulateMembers = 3)
        class Simulated {
            @Test
            void simulated(BlackPipe blackPipe) {
                throw new AssertionError("started in front of another upstream than its enclosing class's: " + blackPipe.connectionString());
            }
        }
    }

    @Test
    void anUpstreamThatDoesNotAnswerFailsTheTestNamingItWithoutItsPassword() {
        List<Throwable> failures = JUnitRun.of(UnreachableUpstream.class).failures();
        assertEquals(2, failures.size(), () -> "each test once, the class not again: " + failures);
        for (Throwable failure : failures) {
            String message = failure.getMessage(); // JUnit's "Failed to resolve parameter ...: " and the extension's
            assertTrue(message.contains("blackpipe could not start in front of mongodb://app:****@127.0.0.1:1/?authSource=admin: "
                    + "no upstream seed answered"), message);
            assertFalse(message.contains("s3cret"), message);
            assertEquals(0, failure.getSuppressed().length, () -> "the same failure again: " + List.of(failure.getSuppressed()));
        }
    }

    @BlackPipeTest(upstream = "mongodb://app:s3cret@127.0.0.1:1/?authSource=admin") // port 1: nothing listens
    static class UnreachableUpstream {
        @Test
        void neverRuns(BlackPipe blackPipe) {
            throw new AssertionError("started in front of nothing: " + blackPipe.connectionString());
        }

        @Test
        void neitherDoesThisOne(BlackPipe blackPipe) {
            throw new AssertionError("started in front of nothing: " + blackPipe.connectionString());
        }
    }

    /** Nothing listens where the proxy did: the extension closed it after its class. */
    private static void assertClosed(BlackPipe blackPipe) {
        for (String host : new ConnectionString(blackPipe.connectionString()).getHosts()) {
            int colon = host.lastIndexOf(':');
            assertThrows(ConnectException.class, () -> new Socket(host.substring(0, colon), Integer.parseInt(host.substring(colon + 1))).close(),
                    "closed after its class: nothing listens on " + host);
        }
    }

    @BlackPipeTest
    @TestMethodOrder(MethodOrderer.OrderAnnotation.class)
    static class NestedClasses {
        static final Map<String, BlackPipe> SEEN = new ConcurrentHashMap<>();

        @Test
        @Order(1)
        void outer(BlackPipe blackPipe) {
            SEEN.put("outer", blackPipe);
            assertEquals(1, new ConnectionString(blackPipe.connectionString()).getHosts().size(), "the lane's one node");
        }

        @Nested
        class Plain {
            @Test
            void plain(BlackPipe blackPipe) {
                SEEN.put("plain nested", blackPipe);
            }
        }

        @Nested
        @BlackPipeTest(simulateMembers = 3)
        class Simulated {
            @Test
            void simulated(BlackPipe blackPipe) {
                SEEN.put("simulated nested", blackPipe);
                assertEquals(3, new ConnectionString(blackPipe.connectionString()).getHosts().size(),
                        "this class's own annotation asks for 3 simulated members");
                blackPipe.failover(); // refused by a proxy without simulated members
            }
        }
    }
}
