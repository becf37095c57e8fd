package io.blackpipe.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoChangeStreamCursor;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.model.changestream.ChangeStreamDocument;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import io.blackpipe.pipe.ProxyConfig;
import io.blackpipe.pipe.ProxyServer;
import io.blackpipe.testing.Closing;
import io.blackpipe.testing.CommandLog;
import io.blackpipe.testing.Meters;
import io.blackpipe.testing.ScriptedMongod;
import io.blackpipe.testing.UpstreamLane;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The real driver's change stream through the proxy meets errors injected on its getMore: on a
 * resumable code the reply carries ResumableChangeStreamError, as mongod's does, so the driver
 * resumes from its last resume token and the application sees every event exactly once; without
 * the label (a rule's {@code errorLabels: []}), or on a non-resumable code, the application gets
 * the error. Runs against a {@link ScriptedMongod} (jongodb has no $changeStream); {@link
 * ChangeStreamResumeLaneTest} runs the same against a lane that has change streams.
 */
class ChangeStreamResumeDriverTest {
    private static final Duration WAIT = Duration.ofSeconds(15);

    /** Where the change stream's events come from: the proxy dials {@code uri}; the test writes past it with {@code direct}. */
    record Upstream(String uri, MongoClient direct, Runnable stop) implements AutoCloseable {
        @Override
        public void close() {
            direct.close();
            stop.run();
        }
    }

    private Upstream upstream;
    private ProxyServer proxy;
    private MongoClient client;
    private final CommandLog log = new CommandLog();
    /** The aggregates the driver sent, copied as they start (an event's command lives only as long as its buffer). */
    private final List<BsonDocument> aggregates = new CopyOnWriteArrayList<>();
    private String db;

    /** The scripted upstream; {@link ChangeStreamResumeLaneTest} gives the lane's. */
    Upstream startUpstream() throws IOException {
        ScriptedMongod scripted = ScriptedMongod.start();
        return new Upstream(scripted.uri("replicaSet=" + ScriptedMongod.SET_NAME),
                MongoClients.create(scripted.uri("directConnection=true")), scripted::close);
    }

    @BeforeEach
    void start(TestInfo test) throws IOException {
        upstream = startUpstream();
        proxy = ProxyServer.start(ProxyConfig.embedded(upstream.uri()));
        client = MongoClients.create(log.driverOn(CommandLog.withOptions(proxy.connectionString(),
                "socketTimeoutMS=5000&connectTimeoutMS=5000")).addCommandListener(new CommandListener() {
                    @Override
                    public void commandStarted(CommandStartedEvent event) {
                        if (event.getCommandName().equals("aggregate")) {
                            aggregates.add(event.getCommand().clone());
                        }
                    }
                }).build());
        db = UpstreamLane.freshDatabaseName(test.getTestMethod().orElseThrow().getName());
    }

    @AfterEach
    void stop() throws Exception {
        Closing.inTurn(client, proxy, upstream);
    }

    private MongoChangeStreamCursor<ChangeStreamDocument<Document>> watch() {
        return client.getDatabase(db).getCollection("c").watch().maxAwaitTime(100, TimeUnit.MILLISECONDS).cursor();
    }

    private void insertPastTheProxy(int... ids) {
        for (int id : ids) {
            upstream.direct().getDatabase(db).getCollection("c").insertOne(new Document("_id", id));
        }
    }

    /** The next {@code count} events' document ids, read as an application does (tryNext until they come). */
    private static List<Integer> nextIds(MongoChangeStreamCursor<ChangeStreamDocument<Document>> cursor, int count) {
        List<Integer> ids = new ArrayList<>();
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (ids.size() < count) {
            assertTrue(System.nanoTime() < deadline, "events seen in time: " + ids + " of " + count);
            ChangeStreamDocument<Document> event = cursor.tryNext();
            if (event != null) {
                ids.add(event.getDocumentKey().getInt32("_id").getValue());
            }
        }
        return ids;
    }

    private void rule(String data) {
        proxy.rules().put(proxy.ruleParser().parse("r", BsonDocument.parse(
                "{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['getMore'], " + data + "}}")));
    }

    private List<BsonDocument> aggregatesSent() {
        return List.copyOf(aggregates);
    }

    /**
     * Codes whose errors the Java driver resumes on only by the label (it resumes a
     * NotWritablePrimary, a CursorNotFound or a network error whatever the labels):
     * HostUnreachable, ShutdownInProgress, ExceededTimeLimit, RetryChangeStream,
     * FailedToSatisfyReadPreference.
     */
    @ParameterizedTest(name = "errorCode {0}")
    @ValueSource(ints = {6, 91, 262, 234, 133})
    void aResumableErrorOnTheGetMoreIsResumedFromTheLastTokenAndNoEventIsLostOrSeenTwice(int code) {
        try (MongoChangeStreamCursor<ChangeStreamDocument<Document>> cursor = watch()) {
            insertPastTheProxy(1);
            assertEquals(List.of(1), nextIds(cursor, 1));
            BsonDocument token = cursor.getResumeToken();
            assertNotNull(token, "the driver holds a resume token");

            rule("errorCode: " + code);
            insertPastTheProxy(2, 3);
            assertEquals(List.of(2, 3), nextIds(cursor, 2), "the events after the error, once each, in order");

            List<BsonDocument> aggregates = aggregatesSent();
            assertEquals(2, aggregates.size(), "the driver opened the stream again: " + aggregates);
            BsonDocument resumed = aggregates.get(1).getArray("pipeline").get(0).asDocument().getDocument("$changeStream");
            assertEquals(token, resumed.getDocument("resumeAfter"), "resumed after the last token the application saw");
        }
        assertEquals(1, Meters.faults(proxy.registry(), "errorReply", "getMore"), "one error injected");
        assertEquals(2, Meters.attempts(proxy.registry(), "aggregate"), "the proxy counted the resume's aggregate");
    }

    @Test
    void withoutTheLabelTheDriverDoesNotResumeAndTheApplicationGetsTheError() {
        try (MongoChangeStreamCursor<ChangeStreamDocument<Document>> cursor = watch()) {
            insertPastTheProxy(1);
            assertEquals(List.of(1), nextIds(cursor, 1));
            rule("errorCode: 6, errorLabels: []"); // failCommand's errorLabels replace the computed ones
            MongoCommandException error = assertThrows(MongoCommandException.class, () -> nextIds(cursor, 1));
            assertEquals(6, error.getErrorCode());
            assertFalse(error.hasErrorLabel("ResumableChangeStreamError"));
        }
        assertEquals(1, aggregatesSent().size(), "no resume");
    }

    @Test
    void aNonResumableErrorIsLabelledSoAndEndsTheStream() {
        try (MongoChangeStreamCursor<ChangeStreamDocument<Document>> cursor = watch()) {
            insertPastTheProxy(1);
            assertEquals(List.of(1), nextIds(cursor, 1));
            rule("errorCode: 280");
            MongoCommandException error = assertThrows(MongoCommandException.class, () -> nextIds(cursor, 1));
            assertEquals(280, error.getErrorCode());
            assertEquals("ChangeStreamFatalError", error.getErrorCodeName());
            assertTrue(error.hasErrorLabel("NonResumableChangeStreamError"), "labels: " + error.getErrorLabels());
        }
        assertEquals(1, aggregatesSent().size(), "no resume");
    }

    @Test
    void aClosedConnectionIsResumedToo() {
        try (MongoChangeStreamCursor<ChangeStreamDocument<Document>> cursor = watch()) {
            insertPastTheProxy(1);
            assertEquals(List.of(1), nextIds(cursor, 1));
            rule("closeConnection: true");
            insertPastTheProxy(2);
            assertEquals(List.of(2), nextIds(cursor, 1));
        }
        assertEquals(2, aggregatesSent().size(), "resumed once");
        assertEquals(1, Meters.faults(proxy.registry(), "closeConnection", "getMore"));
    }

    @Test
    void aFindCursorsGetMoreIsNotAChangeStreamsAndGetsNoLabel() {
        insertPastTheProxy(1, 2, 3);
        rule("errorCode: 6");
        MongoCommandException error = assertThrows(MongoCommandException.class,
                () -> client.getDatabase(db).getCollection("c").find().batchSize(1).into(new ArrayList<>()));
        assertEquals(6, error.getErrorCode());
        assertFalse(error.hasErrorLabel("ResumableChangeStreamError"), "labels: " + error.getErrorLabels());
    }
}
