package io.blackpipe.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoSocketException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.blackpipe.BlackPipe;
import io.blackpipe.Fault;
import io.blackpipe.observe.HistoryEntry;
import io.blackpipe.testing.UpstreamLane;
import java.net.ConnectException;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * {@code @BlackPipeTest} as a user writes it: the upstream comes from the system property
 * blackpipe.upstream (set here from the test lane, as a build would set it), and BlackPipe is a
 * parameter of the constructor, lifecycle methods and tests. The tests run in order so that the
 * second can see what the first left behind: nothing.
 */
@ExtendWith(BlackPipeExtensionTest.LaneAsUpstream.class) // registered first: its afterAll runs after the extension's
@BlackPipeTest
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class BlackPipeExtensionTest {
    private static final String DB = UpstreamLane.freshDatabaseName("junit-ext");
    private static BlackPipe fromBeforeAll;

    private final BlackPipe fromConstructor;
    private BlackPipe fromBeforeEach;

    BlackPipeExtensionTest(BlackPipe blackPipe) {
        this.fromConstructor = blackPipe;
    }

    @BeforeAll
    static void beforeAll(BlackPipe blackPipe) {
        fromBeforeAll = blackPipe;
    }

    @BeforeEach
    void beforeEach(BlackPipe blackPipe) {
        fromBeforeEach = blackPipe;
        assertTrue(blackPipe.rules().isEmpty(), "rules are cleared before user @BeforeEach methods run");
    }

    @Test
    @Order(1)
    void firstTestBreaksInsertsAndLeavesTheRuleBehind(BlackPipe blackPipe) {
        assertSame(fromBeforeAll, blackPipe, "one BlackPipe per test class");
        assertSame(fromConstructor, blackPipe);
        assertSame(fromBeforeEach, blackPipe);
        blackPipe.fail("insert").with(Fault.CLOSE); // alwaysOn, never removed by this test
        try (MongoClient client = client(blackPipe, "retryWrites=false")) {
            assertThrows(MongoSocketException.class, () -> orders(client).insertOne(new Document("n", 1)));
        }
        assertEquals(1, blackPipe.attempts("insert"));
        assertEquals(1, blackPipe.faultsInjected(Fault.CLOSE));
        assertEquals(1, blackPipe.rules().size());
    }

    @Test
    @Order(2)
    void secondTestStartsWithNoRulesAndZeroCounters(BlackPipe blackPipe) {
        assertSame(fromBeforeAll, blackPipe);
        assertTrue(blackPipe.rules().isEmpty(), "the first test's rule is gone");
        assertEquals(0, blackPipe.attempts("insert"), "counters start at zero in every test");
        assertEquals(0, blackPipe.faultsInjected(Fault.CLOSE));
        try (MongoClient client = client(blackPipe, "retryWrites=false")) {
            orders(client).insertOne(new Document("n", 2));
        }
        assertEquals(1, blackPipe.attempts("insert"));
        assertEquals(0, blackPipe.retries("insert"));
        List<HistoryEntry> inserts = blackPipe.history().stream().filter(e -> e.command().equals("insert")).toList();
        assertEquals(1, inserts.size(), () -> "the history holds this test's insert, not the first test's: " + inserts);
        assertEquals("ok", inserts.get(0).outcome());
        try (MongoClient direct = UpstreamLane.directClient()) {
            assertEquals(1, direct.getDatabase(DB).getCollection("orders").countDocuments());
        }
    }

    @Test
    @Order(3)
    void resolvingTheUpstreamPrefersTheAnnotationThenThePropertyAndSaysWhatIsMissing() {
        assertEquals("mongodb://annotated:1", BlackPipeExtension.upstream("mongodb://annotated:1"));
        assertEquals(System.getProperty(BlackPipeExtension.UPSTREAM_PROPERTY), BlackPipeExtension.upstream(""));
        String saved = System.clearProperty(BlackPipeExtension.UPSTREAM_PROPERTY);
        try {
            if (System.getenv(BlackPipeExtension.UPSTREAM_ENV) == null) {
                Exception missing = assertThrows(Exception.class, () -> BlackPipeExtension.upstream(""));
                assertTrue(missing.getMessage().contains("blackpipe.upstream") && missing.getMessage().contains("BLACKPIPE_UPSTREAM"),
                        missing.getMessage());
            }
        } finally {
            System.setProperty(BlackPipeExtension.UPSTREAM_PROPERTY, saved);
        }
    }

    private static MongoCollection<Document> orders(MongoClient client) {
        return client.getDatabase(DB).getCollection("orders");
    }

    private static MongoClient client(BlackPipe blackPipe, String options) {
        String uri = blackPipe.connectionString();
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(uri + (uri.contains("?") ? "&" : "?") + options))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(10, TimeUnit.SECONDS))
                .applyToSocketSettings(b -> b.connectTimeout(5, TimeUnit.SECONDS).readTimeout(5, TimeUnit.SECONDS))
                .build());
    }

    /**
     * What a build does with -Dblackpipe.upstream=..., done here from the test lane; and, after the
     * whole class (after BlackPipeExtension's own afterAll), a check that the proxy was closed.
     */
    static final class LaneAsUpstream implements BeforeAllCallback, AfterAllCallback {
        private String previous;

        @Override
        public void beforeAll(ExtensionContext context) {
            previous = System.setProperty(BlackPipeExtension.UPSTREAM_PROPERTY, UpstreamLane.uri());
        }

        @Override
        public void afterAll(ExtensionContext context) throws Exception {
            if (previous == null) {
                System.clearProperty(BlackPipeExtension.UPSTREAM_PROPERTY);
            } else {
                System.setProperty(BlackPipeExtension.UPSTREAM_PROPERTY, previous);
            }
            assertNotNull(fromBeforeAll);
            for (String host : new ConnectionString(fromBeforeAll.connectionString()).getHosts()) {
                int colon = host.lastIndexOf(':');
                assertThrows(ConnectException.class,
                        () -> new Socket(host.substring(0, colon), Integer.parseInt(host.substring(colon + 1))).close(),
                        "the extension closed the proxy after the class: nothing listens on " + host);
            }
        }
    }
}
