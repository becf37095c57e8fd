package io.blackpipe.observe;

import static io.blackpipe.observe.CountersMatchDriverTest.awaitEveryAttemptEnded;
import static io.blackpipe.observe.CountersMatchDriverTest.client;
import static io.blackpipe.observe.CountersMatchDriverTest.rule;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.UpstreamLane;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * NamespaceNotFound where the Java driver makes it an answer (CommandOperationHelper.isNamespaceError):
 * estimatedDocumentCount's count gives 0, dropSearchIndex is done and listSearchIndexes (an aggregate
 * whose first stage is $listSearchIndexes) an empty list, as listIndexes, drop and dropIndexes are
 * (CountersMatchDriverTest). Nothing failed for the app, so the same command next is
 * new work, not a retry. The rule gives the server's answer (jongodb has neither case).
 */
class NamespaceNotFoundDriverTest {
    @Test
    void countingAMissingCollectionTwiceIsNotARetry() throws Exception {
        assertNoRetryAfterNamespaceNotFound("count", c -> assertEquals(0, c.estimatedDocumentCount()));
    }

    @Test
    void droppingASearchIndexOfAMissingCollectionTwiceIsNotARetry() throws Exception {
        assertNoRetryAfterNamespaceNotFound("dropSearchIndex", c -> c.dropSearchIndex("none"));
    }

    @Test
    void listingTheSearchIndexesOfAMissingCollectionTwiceIsNotARetry() throws Exception {
        assertNoRetryAfterNamespaceNotFound("aggregate", c -> assertEquals(0, c.listSearchIndexes().into(new ArrayList<>()).size()));
    }

    /**
     * estimatedDocumentCount as drivers that followed the CRUD spec of 2021 send it to a 4.9+ server (the Go driver 1.8,
     * Debian's): an aggregate whose first stage is $collStats {count: {}}, whose NamespaceNotFound they make a count of
     * 0. The Java driver 5 sends count instead, so the app here sends that aggregate itself and takes the error for 0,
     * as those drivers do; a Go service doing so was counted as retrying.
     */
    @Test
    void aCollStatsCountOfAMissingCollectionTwiceIsNotARetry() throws Exception {
        assertNoRetryAfterNamespaceNotFound("aggregate", c -> assertEquals(26, assertThrows(MongoCommandException.class,
                () -> c.aggregate(List.of(new Document("$collStats", new Document("count", new Document())))).first()).getCode()));
    }

    /**
     * Where the driver does not answer it, the app got the error: the same command it sends next in that
     * session is counted as a re-send (a retry), as after any other error (the README's counting rule).
     */
    @Test
    void aNamespaceNotFoundTheAppSawMakesItsSameCommandNextARetry() throws Exception {
        assertRetriesAfterNamespaceNotFound("find", 1,
                c -> assertEquals(26, assertThrows(MongoCommandException.class, () -> c.find().first()).getCode()));
        assertRetriesAfterNamespaceNotFound("aggregate", 1, c -> assertEquals(26, assertThrows(MongoCommandException.class,
                () -> c.aggregate(List.of(new Document("$match", new Document()))).first()).getCode()));
    }

    private static void assertNoRetryAfterNamespaceNotFound(String command,
                                                            java.util.function.Consumer<MongoCollection<Document>> operation) throws Exception {
        assertRetriesAfterNamespaceNotFound(command, 0, operation);
    }

    private static void assertRetriesAfterNamespaceNotFound(String command, int retries,
                                                            java.util.function.Consumer<MongoCollection<Document>> operation) throws Exception {
        String db = UpstreamLane.freshDatabaseName("nnf_" + command.toLowerCase());
        DriverEvents driver = new DriverEvents();
        try (ProxyServer proxy = ProxyServer.start(ProxyConfig.embedded(UpstreamLane.uri()))) {
            rule(proxy, "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['" + command + "'], errorCode: 26}}");
            try (MongoClient client = client(proxy, "bp-nnf-" + command.toLowerCase(), driver, "retryReads=true")) {
                MongoCollection<Document> missing = client.getDatabase(db).getCollection("missing");
                operation.accept(missing); // the driver's answer: no exception
                operation.accept(missing); // the next request's same command, in the same pooled session
            }
            MeterRegistry registry = proxy.registry();
            awaitEveryAttemptEnded(registry);
            String context = "driver events:" + driver.describe();
            assertEquals(0, driver.retries(command), context);
            assertEquals(2, Meters.attempts(registry, CommandNames.label(command)), context);
            assertEquals(retries, Meters.retries(registry, CommandNames.label(command)), context);
        }
    }
}
