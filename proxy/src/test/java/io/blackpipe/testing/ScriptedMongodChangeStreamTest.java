package io.blackpipe.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoCommandException;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoChangeStreamCursor;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.changestream.ChangeStreamDocument;
import com.mongodb.client.model.changestream.FullDocument;
import com.mongodb.client.model.changestream.OperationType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * {@link ScriptedMongod}'s change streams with the real MongoDB Java driver talking to it directly
 * (no proxy): what watch() sees, resuming from tokens and times, refusals, cursor lifetimes, and the
 * driver's resume after a getMore error, which is what a proxy test injecting errors there relies on.
 */
class ScriptedMongodChangeStreamTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    @Test
    void watchSeesTheWritesAfterItOpenedInOrderShapedAsMongods() throws Exception {
        try (ScriptedMongod server = ScriptedMongod.start(); MongoClient client = MongoClients.create(server.uri())) {
            MongoCollection<Document> coll = client.getDatabase("test").getCollection("c");
            coll.insertOne(doc(0)); // before the stream opened: never seen
            try (MongoChangeStreamCursor<ChangeStreamDocument<Document>> cursor =
                         coll.watch().maxAwaitTime(200, TimeUnit.MILLISECONDS).cursor()) {
                coll.insertMany(List.of(doc(1), doc(2), doc(3)));
                coll.deleteOne(Filters.eq("_id", 2));

                List<ChangeStreamDocument<Document>> events = next(cursor, 4);
                assertEquals(List.of(OperationType.INSERT, OperationType.INSERT, OperationType.INSERT, OperationType.DELETE),
                        events.stream().map(ChangeStreamDocument::getOperationType).toList());
                assertEquals(List.of(1, 2, 3, 2), events.stream().map(e -> e.getDocumentKey().getInt32("_id").getValue()).toList());
                assertEquals(doc(1), events.get(0).getFullDocument());
                assertEquals(doc(3), events.get(2).getFullDocument());
                assertNull(events.get(3).getFullDocument(), "a delete has no fullDocument");
                for (ChangeStreamDocument<Document> e : events) {
                    assertEquals("test.c", e.getNamespace().getFullName());
                    assertTrue(e.getWallTime() != null, "wallTime");
                }
                for (int i = 1; i < events.size(); i++) {
                    // Cluster times and the tokens, as strings, increase with every event.
                    assertTrue(events.get(i).getClusterTime().compareTo(events.get(i - 1).getClusterTime()) > 0);
                    assertTrue(data(events.get(i).getResumeToken()).compareTo(data(events.get(i - 1).getResumeToken())) > 0);
                }
                client.getDatabase("test").getCollection("other").insertOne(doc(9));
                assertNull(cursor.tryNext(), "another collection's insert is not this stream's");
            }

            // The replies, as mongod 7.0 shapes them.
            BsonDocument aggregateReply = server.framesSent(f -> "aggregate".equals(f.commandName())).get(0).document();
            BsonDocument firstCursor = aggregateReply.getDocument("cursor");
            assertEquals(List.of("firstBatch", "postBatchResumeToken", "id", "ns"), List.copyOf(firstCursor.keySet()));
            assertNotEquals(0, firstCursor.getInt64("id").getValue());
            assertEquals("test.c", firstCursor.getString("ns").getValue());
            assertEquals(1.0, aggregateReply.getDouble("ok").getValue());
            assertTrue(aggregateReply.containsKey("operationTime") && aggregateReply.containsKey("$clusterTime"));
            // A new stream starts one tick beyond the latest operation, as mongod's: its high-water mark is there.
            BsonTimestamp opened = aggregateReply.getTimestamp("operationTime");
            assertEquals(ScriptedMongodChangeStreams.highWaterMark(new BsonTimestamp(opened.getTime(), opened.getInc() + 1)),
                    data(firstCursor.getDocument("postBatchResumeToken")));

            ScriptedMongodFrame eventsReply = server.framesSent(f -> "getMore".equals(f.commandName())
                    && !f.document().getDocument("cursor").getArray("nextBatch").isEmpty()).get(0);
            BsonDocument nextCursor = eventsReply.document().getDocument("cursor");
            assertEquals(List.of("nextBatch", "postBatchResumeToken", "id", "ns"), List.copyOf(nextCursor.keySet()));
            assertEquals(firstCursor.getInt64("id"), nextCursor.getInt64("id"), "a getMore keeps the cursor id");
            BsonArray batch = nextCursor.getArray("nextBatch");
            BsonDocument insert = batch.get(0).asDocument();
            assertEquals(List.of("_id", "operationType", "clusterTime", "wallTime", "fullDocument", "ns", "documentKey"),
                    List.copyOf(insert.keySet()));
            assertEquals(new BsonDocument("db", new BsonString("test")).append("coll", new BsonString("c")),
                    insert.getDocument("ns"));
            BsonDocument lastOfBatch = batch.get(batch.size() - 1).asDocument();
            assertEquals(lastOfBatch.getDocument("_id"), nextCursor.getDocument("postBatchResumeToken"),
                    "a non-empty batch's postBatchResumeToken is its last event's token");
            // No reply gossips a cluster time behind an event it carries.
            assertTrue(lastOfBatch.getTimestamp("clusterTime").compareTo(eventsReply.document().getTimestamp("operationTime")) <= 0);
            // An empty batch that read past another collection's event: the high-water mark of that
            // event's time (a point before it, as mongod's token of an oplog entry it skipped).
            BsonDocument emptyCursor = server.framesSent(f -> "getMore".equals(f.commandName())).stream()
                    .map(ScriptedMongodFrame::document).reduce((a, b) -> b).orElseThrow().getDocument("cursor");
            assertTrue(emptyCursor.getArray("nextBatch").isEmpty());
            BsonDocument otherInsert = server.changeEvents().get(5);
            assertEquals("other", otherInsert.getDocument("ns").getString("coll").getValue());
            assertEquals(ScriptedMongodChangeStreams.highWaterMark(otherInsert.getTimestamp("clusterTime")),
                    data(emptyCursor.getDocument("postBatchResumeToken")));
            // The server's own log holds the same events (and the one before the stream, and the other collection's).
            assertEquals(6, server.changeEvents().size());
            assertEquals(insert, server.changeEvents().get(1));
            assertEquals(List.of(), server.errors());
        }
    }

    @Test
    void getMoreAwaitsNewEventsWithoutHoldingUpWrites() throws Exception {
        try (ScriptedMongod server = ScriptedMongod.start(); MongoClient client = MongoClients.create(server.uri())) {
            MongoCollection<Document> coll = client.getDatabase("test").getCollection("c");
            // Nothing comes: the getMore answers an empty batch once maxTimeMS (the driver's maxAwaitTime) has passed.
            try (MongoChangeStreamCursor<ChangeStreamDocument<Document>> cursor =
                         coll.watch().maxAwaitTime(300, TimeUnit.MILLISECONDS).cursor()) {
                long start = System.nanoTime();
                assertNull(cursor.tryNext());
                long waitedMs = (System.nanoTime() - start) / 1_000_000;
                assertTrue(waitedMs >= 250, "the getMore awaited events for maxTimeMS, not " + waitedMs + " ms");
                BsonDocument emptyReply = server.framesSent(f -> "getMore".equals(f.commandName())).get(0).document();
                assertEquals(300, server.commandsReceived("getMore").get(0).document().getNumber("maxTimeMS").intValue());
                assertTrue(emptyReply.getDocument("cursor").getArray("nextBatch").isEmpty());
                assertTrue(emptyReply.getDocument("cursor").isDocument("postBatchResumeToken"), "the high-water mark");
            }

            // An event that comes while a getMore awaits ends the wait at once, and the write that makes
            // it is not held up by the waiting getMore.
            try (MongoChangeStreamCursor<ChangeStreamDocument<Document>> cursor =
                         coll.watch().maxAwaitTime(8, TimeUnit.SECONDS).cursor()) {
                int getMoresBefore = server.commandsReceived("getMore").size();
                CompletableFuture<ChangeStreamDocument<Document>> awaited = CompletableFuture.supplyAsync(cursor::tryNext);
                Await.until(WAIT, "the getMore to arrive", () -> server.commandsReceived("getMore").size() > getMoresBefore);
                Thread.sleep(100); // let it start waiting
                long start = System.nanoTime();
                coll.insertOne(doc(1));
                long insertMs = (System.nanoTime() - start) / 1_000_000;
                ChangeStreamDocument<Document> event = awaited.get(WAIT.toSeconds(), TimeUnit.SECONDS);
                long eventMs = (System.nanoTime() - start) / 1_000_000;
                assertTrue(insertMs < 2000, "the insert waited " + insertMs + " ms for the getMore");
                assertTrue(eventMs < 4000, "the getMore answered " + eventMs + " ms after the insert, not at once");
                assertEquals(doc(1), event.getFullDocument());
            }
            assertEquals(List.of(), server.errors());
        }
    }

    @Test
    void resumeAfterAndStartAfterReturnExactlyTheLaterEvents() throws Exception {
        try (ScriptedMongod server = ScriptedMongod.start(); MongoClient client = MongoClients.create(server.uri())) {
            MongoCollection<Document> coll = client.getDatabase("test").getCollection("c");
            List<BsonDocument> tokens = new ArrayList<>();
            try (MongoChangeStreamCursor<ChangeStreamDocument<Document>> cursor =
                         coll.watch().maxAwaitTime(100, TimeUnit.MILLISECONDS).cursor()) {
                coll.insertMany(IntStream.range(0, 5).mapToObj(ScriptedMongodChangeStreamTest::doc).toList());
                next(cursor, 5).forEach(e -> tokens.add(e.getResumeToken()));
            }
            for (boolean startAfter : List.of(false, true)) {
                var watch = coll.watch().maxAwaitTime(100, TimeUnit.MILLISECONDS);
                watch = startAfter ? watch.startAfter(tokens.get(1)) : watch.resumeAfter(tokens.get(1));
                try (MongoChangeStreamCursor<ChangeStreamDocument<Document>> cursor = watch.cursor()) {
                    assertEquals(List.of(2, 3, 4), next(cursor, 3).stream().map(e -> e.getFullDocument().getInteger("_id")).toList());
                    assertNull(cursor.tryNext(), "nothing after the last event (" + (startAfter ? "startAfter" : "resumeAfter") + ")");
                }
            }
            BsonDocument sent = server.commandsReceived("aggregate").get(1).document();
            assertEquals(tokens.get(1), sent.getArray("pipeline").get(0).asDocument().getDocument("$changeStream")
                    .getDocument("resumeAfter"));

            // Resuming after the last event waits for the next one.
            try (MongoChangeStreamCursor<ChangeStreamDocument<Document>> cursor =
                         coll.watch().resumeAfter(tokens.get(4)).maxAwaitTime(100, TimeUnit.MILLISECONDS).cursor()) {
                assertNull(cursor.tryNext());
                coll.insertOne(doc(5));
                assertEquals(doc(5), next(cursor, 1).get(0).getFullDocument());
            }
            assertEquals(List.of(), server.errors());
        }
    }

    @Test
    void startAtOperationTimeOfAWriteIncludesThatWrite() throws Exception {
        try (ScriptedMongod server = ScriptedMongod.start(); MongoClient client = MongoClients.create(server.uri())) {
            MongoCollection<Document> coll = client.getDatabase("test").getCollection("c");
            coll.insertOne(doc(0));
            BsonTimestamp insertTime;
            try (ClientSession session = client.startSession()) {
                coll.insertOne(session, doc(1));
                insertTime = session.getOperationTime();
            }
            coll.insertOne(doc(2));
            // As on mongod: the insert's operationTime is its event's clusterTime, and the stream starts at it.
            try (MongoChangeStreamCursor<ChangeStreamDocument<Document>> cursor = coll.watch()
                    .startAtOperationTime(insertTime).maxAwaitTime(100, TimeUnit.MILLISECONDS).cursor()) {
                List<ChangeStreamDocument<Document>> events = next(cursor, 2);
                assertEquals(List.of(1, 2), events.stream().map(e -> e.getFullDocument().getInteger("_id")).toList());
                assertEquals(insertTime, events.get(0).getClusterTime());
                assertNull(cursor.tryNext());
            }
            assertEquals(List.of(), server.errors());
        }
    }

    @Test
    void aTokenNotInTheStreamFailsWith280AndATimeBeforeTheLogWith286() throws Exception {
        try (ScriptedMongod server = ScriptedMongod.start(); MongoClient client = MongoClients.create(server.uri())) {
            MongoCollection<Document> coll = client.getDatabase("test").getCollection("c");
            MongoCollection<Document> other = client.getDatabase("test").getCollection("other");
            BsonDocument otherToken;
            try (MongoChangeStreamCursor<ChangeStreamDocument<Document>> cursor =
                         other.watch().maxAwaitTime(100, TimeUnit.MILLISECONDS).cursor()) {
                other.insertOne(doc(1));
                otherToken = next(cursor, 1).get(0).getResumeToken();
            }
            coll.insertMany(List.of(doc(1), doc(2)));
            // Another collection's event is never in this collection's stream: its first event after
            // the token's time passes the token unseen, and mongod gives up there.
            MongoCommandException notFound = assertThrows(MongoCommandException.class,
                    () -> coll.watch().resumeAfter(otherToken).cursor().close());
            assertEquals(280, notFound.getErrorCode());
            assertEquals("ChangeStreamFatalError", notFound.getErrorCodeName());
            assertTrue(notFound.getErrorMessage().contains("cannot resume stream; the resume token was not found"),
                    notFound.getErrorMessage());
            assertTrue(notFound.hasErrorLabel("NonResumableChangeStreamError"));

            // Before the oldest entry the log holds (here: before the server started).
            MongoCommandException lost = assertThrows(MongoCommandException.class,
                    () -> coll.watch().startAtOperationTime(new BsonTimestamp(1, 1)).cursor().close());
            assertEquals(286, lost.getErrorCode());
            assertEquals("ChangeStreamHistoryLost", lost.getErrorCodeName());
            assertTrue(lost.hasErrorLabel("NonResumableChangeStreamError"));
            assertTrue(server.openCursorIds().isEmpty(), "a failed aggregate opens no cursor");
            assertEquals(List.of(), server.errors());
        }
    }

    @Test
    void aSecondWatcherIsIndependent() throws Exception {
        try (ScriptedMongod server = ScriptedMongod.start(); MongoClient client = MongoClients.create(server.uri())) {
            MongoCollection<Document> coll = client.getDatabase("test").getCollection("c");
            MongoChangeStreamCursor<ChangeStreamDocument<Document>> first =
                    coll.watch().maxAwaitTime(100, TimeUnit.MILLISECONDS).cursor();
            coll.insertOne(doc(1));
            try (MongoChangeStreamCursor<ChangeStreamDocument<Document>> second =
                         coll.watch().maxAwaitTime(100, TimeUnit.MILLISECONDS).cursor()) {
                coll.insertOne(doc(2));
                assertEquals(List.of(1, 2), ids(next(first, 2)));
                assertEquals(List.of(2), ids(next(second, 1)), "the second opened after the first insert");
                assertEquals(2, server.openCursorIds().size());

                first.close(); // the other stream goes on
                coll.insertOne(doc(3));
                assertEquals(List.of(3), ids(next(second, 1)));
                assertEquals(1, server.openCursorIds().size());
            }
            assertTrue(server.openCursorIds().isEmpty());
            assertEquals(List.of(), server.errors());
        }
    }

    @Test
    void closingTheStreamKillsItsCursorOnTheServer() throws Exception {
        try (ScriptedMongod server = ScriptedMongod.start(); MongoClient client = MongoClients.create(server.uri())) {
            MongoCollection<Document> coll = client.getDatabase("test").getCollection("c");
            MongoChangeStreamCursor<ChangeStreamDocument<Document>> cursor =
                    coll.watch().maxAwaitTime(100, TimeUnit.MILLISECONDS).cursor();
            long id = cursorIdOfAggregate(server, 0);
            assertEquals(Set.of(id), server.openCursorIds());
            assertNull(cursor.tryNext()); // a getMore on it, so the driver knows it is open
            cursor.close();

            List<ScriptedMongodFrame> kills = server.commandsReceived("killCursors");
            assertEquals(1, kills.size());
            assertEquals(new BsonArray(List.of(new BsonInt64(id))), kills.get(0).document().getArray("cursors"));
            assertEquals("c", kills.get(0).document().getString("killCursors").getValue());
            BsonDocument killReply = server.framesSent(f -> "killCursors".equals(f.commandName())).get(0).document();
            assertEquals(new BsonArray(List.of(new BsonInt64(id))), killReply.getArray("cursorsKilled"));
            assertTrue(server.openCursorIds().isEmpty());
            assertEquals(List.of(), server.errors());
        }
    }

    @Test
    void aResumableErrorOnGetMoreResumesAfterTheLastEventSeen() throws Exception {
        try (ScriptedMongod server = ScriptedMongod.start(); MongoClient client = MongoClients.create(server.uri())) {
            MongoCollection<Document> coll = client.getDatabase("test").getCollection("c");
            try (MongoChangeStreamCursor<ChangeStreamDocument<Document>> cursor =
                         coll.watch().maxAwaitTime(100, TimeUnit.MILLISECONDS).cursor()) {
                long firstCursor = cursorIdOfAggregate(server, 0);
                coll.insertMany(List.of(doc(1), doc(2)));
                List<ChangeStreamDocument<Document>> seen = new ArrayList<>(next(cursor, 2));
                BsonDocument lastSeen = seen.get(1).getResumeToken();

                // The next getMore fails as a mongod's would on a lost host, labelled resumable.
                server.failNext("getMore", hostUnreachable(true));
                coll.insertMany(List.of(doc(3), doc(4)));
                seen.addAll(next(cursor, 2));

                // Every event exactly once, in order.
                assertEquals(List.of(1, 2, 3, 4), ids(seen));
                assertEquals(0, server.pendingScriptedReplies(), "the scripted error was sent");
                ScriptedMongodFrame failed = server.framesSent(f -> "getMore".equals(f.commandName())
                        && f.document().getDouble("ok").getValue() == 0).get(0);
                assertEquals(6, failed.document().getInt32("code").getValue());
                assertTrue(failed.document().containsKey("operationTime"), "a scripted reply gossips as any reply");

                // The driver killed the cursor the getMore failed on, then re-ran the aggregate
                // with resumeAfter = the last event it had seen.
                List<ScriptedMongodFrame> aggregates = server.commandsReceived("aggregate");
                assertEquals(2, aggregates.size());
                BsonDocument spec = aggregates.get(1).document().getArray("pipeline").get(0).asDocument()
                        .getDocument("$changeStream");
                assertEquals(lastSeen, spec.getDocument("resumeAfter"));
                assertFalse(spec.containsKey("startAtOperationTime"));
                List<ScriptedMongodFrame> kills = server.commandsReceived("killCursors");
                assertEquals(1, kills.size());
                assertEquals(new BsonArray(List.of(new BsonInt64(firstCursor))), kills.get(0).document().getArray("cursors"));
                long resumed = cursorIdOfAggregate(server, 1);
                assertEquals(Set.of(resumed), server.openCursorIds());
                assertTrue(server.framesReceived().indexOf(kills.get(0)) < server.framesReceived().indexOf(aggregates.get(1)),
                        "killed before the aggregate that resumed");
            }
            assertTrue(server.openCursorIds().isEmpty());
            assertEquals(List.of(), server.errors());
        }
    }

    @Test
    void theSameErrorWithoutTheLabelReachesTheApplication() throws Exception {
        try (ScriptedMongod server = ScriptedMongod.start(); MongoClient client = MongoClients.create(server.uri())) {
            MongoCollection<Document> coll = client.getDatabase("test").getCollection("c");
            try (MongoChangeStreamCursor<ChangeStreamDocument<Document>> cursor =
                         coll.watch().maxAwaitTime(100, TimeUnit.MILLISECONDS).cursor()) {
                long id = cursorIdOfAggregate(server, 0);
                server.failNext("getMore", hostUnreachable(false));
                coll.insertOne(doc(1));
                // Wire version 21 >= 9: the driver resumes only on the ResumableChangeStreamError label.
                MongoCommandException e = assertThrows(MongoCommandException.class, cursor::tryNext);
                assertEquals(6, e.getErrorCode());
                assertEquals(1, server.commandsReceived("aggregate").size(), "no resume");
                assertEquals(Set.of(id), server.openCursorIds(), "the failed getMore left the cursor open");
            }
            assertTrue(server.openCursorIds().isEmpty(), "closing the stream killed it");
            assertEquals(List.of(), server.errors());
        }
    }

    @Test
    void dropInvalidatesACollectionStreamAndStartAfterGoesOnPastIt() throws Exception {
        try (ScriptedMongod server = ScriptedMongod.start(); MongoClient client = MongoClients.create(server.uri())) {
            MongoCollection<Document> coll = client.getDatabase("test").getCollection("c");
            BsonDocument invalidateToken;
            try (MongoChangeStreamCursor<ChangeStreamDocument<Document>> cursor =
                         coll.watch().maxAwaitTime(100, TimeUnit.MILLISECONDS).cursor()) {
                coll.insertOne(doc(1));
                coll.drop();
                List<ChangeStreamDocument<Document>> events = next(cursor, 3);
                assertEquals(List.of(OperationType.INSERT, OperationType.DROP, OperationType.INVALIDATE),
                        events.stream().map(ChangeStreamDocument::getOperationType).toList());
                assertEquals(events.get(1).getClusterTime(), events.get(2).getClusterTime(), "the invalidate is the drop's");
                invalidateToken = events.get(2).getResumeToken();
                assertTrue(server.openCursorIds().isEmpty(), "the invalidate ended the cursor");
            }
            BsonDocument last = server.framesSent(f -> "getMore".equals(f.commandName())).stream()
                    .map(ScriptedMongodFrame::document).reduce((a, b) -> b).orElseThrow().getDocument("cursor");
            assertEquals(0, last.getInt64("id").getValue());
            assertEquals(invalidateToken, last.getDocument("postBatchResumeToken"));

            MongoCommandException refused = assertThrows(MongoCommandException.class,
                    () -> coll.watch().resumeAfter(invalidateToken).cursor().close());
            assertEquals(260, refused.getErrorCode());

            coll.insertOne(doc(2)); // the collection made again
            try (MongoChangeStreamCursor<ChangeStreamDocument<Document>> cursor = coll.watch()
                    .startAfter(invalidateToken).maxAwaitTime(100, TimeUnit.MILLISECONDS).cursor()) {
                assertEquals(List.of(2), ids(next(cursor, 1)));
                assertNull(cursor.tryNext());
            }
            assertEquals(List.of(), server.errors());
        }
    }

    @Test
    void aDatabaseStreamSeesEveryCollectionAndDropsWithoutInvalidate() throws Exception {
        try (ScriptedMongod server = ScriptedMongod.start(); MongoClient client = MongoClients.create(server.uri())) {
            try (MongoChangeStreamCursor<ChangeStreamDocument<Document>> cursor = client.getDatabase("test").watch()
                    .maxAwaitTime(100, TimeUnit.MILLISECONDS).cursor()) {
                client.getDatabase("test").getCollection("a").insertOne(doc(1));
                client.getDatabase("elsewhere").getCollection("a").insertOne(doc(7)); // another database's
                client.getDatabase("test").getCollection("a").drop();
                client.getDatabase("test").getCollection("b").insertOne(doc(2));
                List<ChangeStreamDocument<Document>> events = next(cursor, 3);
                assertEquals(List.of("insert test.a", "drop test.a", "insert test.b"), events.stream()
                        .map(e -> e.getOperationTypeString() + " " + e.getNamespace().getFullName()).toList());
                assertNull(cursor.tryNext());
            }
            BsonDocument aggregate = server.commandsReceived("aggregate").get(0).document();
            assertEquals(new BsonInt32(1), aggregate.get("aggregate"));
            assertEquals("test.$cmd.aggregate", server.framesSent(f -> "aggregate".equals(f.commandName())).get(0)
                    .document().getDocument("cursor").getString("ns").getValue());
            assertEquals(List.of(), server.errors());
        }
    }

    @Test
    void aMatchAfterTheStageFiltersAndWhatIsNotImplementedIsRefused() throws Exception {
        try (ScriptedMongod server = ScriptedMongod.start(); MongoClient client = MongoClients.create(server.uri())) {
            MongoCollection<Document> coll = client.getDatabase("test").getCollection("c");
            try (MongoChangeStreamCursor<ChangeStreamDocument<Document>> cursor = coll
                    .watch(List.of(Aggregates.match(Filters.eq("operationType", "delete"))))
                    .maxAwaitTime(100, TimeUnit.MILLISECONDS).cursor()) {
                coll.insertMany(List.of(doc(1), doc(2)));
                coll.deleteOne(Filters.eq("_id", 2));
                List<ChangeStreamDocument<Document>> events = next(cursor, 1);
                assertEquals(OperationType.DELETE, events.get(0).getOperationType());
                assertEquals(2, events.get(0).getDocumentKey().getInt32("_id").getValue());
                assertNull(cursor.tryNext());
            }
            // Each refusal names what is missing rather than ignoring it.
            assertRefused(2, "fullDocument: 'required'", () -> coll.watch().fullDocument(FullDocument.REQUIRED).cursor());
            assertRefused(2, "only $match", () -> coll.watch(List.of(Aggregates.project(new Document("x", 1)))).cursor());
            assertRefused(2, "allChangesForCluster", () -> client.watch().cursor());
            assertRefused(73, "internal admin database", () -> client.getDatabase("admin").watch().cursor());
            assertRefused(40602, "first stage", () -> coll.aggregate(List.of(Aggregates.match(new Document()),
                    new Document("$changeStream", new Document()))).first());
            assertTrue(server.openCursorIds().isEmpty());
            assertEquals(List.of(), server.errors());
        }
    }

    // ============================================================ helpers

    private static Document doc(int id) {
        return new Document("_id", id).append("v", "value " + id);
    }

    private static String data(BsonDocument token) {
        return token.getString("_data").getValue();
    }

    private static List<Integer> ids(List<ChangeStreamDocument<Document>> events) {
        return events.stream().map(e -> e.getDocumentKey().getInt32("_id").getValue()).toList();
    }

    /** The next {@code n} events, polling with tryNext so that a broken stream fails instead of hanging. */
    private static <T> List<T> next(MongoChangeStreamCursor<T> cursor, int n) {
        List<T> out = new ArrayList<>();
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (out.size() < n) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out with " + out.size() + " of " + n + " events: " + out);
            }
            T event = cursor.tryNext();
            if (event != null) {
                out.add(event);
            }
        }
        return out;
    }

    private static long cursorIdOfAggregate(ScriptedMongod server, int index) {
        return server.framesSent(f -> "aggregate".equals(f.commandName())).get(index).document()
                .getDocument("cursor").getInt64("id").getValue();
    }

    private static BsonDocument hostUnreachable(boolean resumableLabel) {
        BsonDocument reply = new BsonDocument("ok", new BsonDouble(0))
                .append("errmsg", new BsonString("scripted: host unreachable"))
                .append("code", new BsonInt32(6))
                .append("codeName", new BsonString("HostUnreachable"));
        if (resumableLabel) {
            reply.append("errorLabels", new BsonArray(List.<BsonValue>of(new BsonString("ResumableChangeStreamError"))));
        }
        return reply;
    }

    private static void assertRefused(int code, String inMessage, org.junit.jupiter.api.function.Executable open) {
        MongoCommandException e = assertThrows(MongoCommandException.class, open);
        assertEquals(code, e.getErrorCode(), e.getErrorMessage());
        assertTrue(e.getErrorMessage().contains(inMessage), e.getErrorMessage());
    }
}
