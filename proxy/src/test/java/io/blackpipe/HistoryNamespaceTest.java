package io.blackpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.blackpipe.observe.HistoryEntry;
import io.blackpipe.testing.UpstreamLane;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * The namespace a command is recorded (and matched by a rule's namespace) under, for commands whose
 * first value is a string that names no collection: the database alone, as mongod has it. mongosh
 * sends {getParameter: 'foo'} and {getLog: 'startupWarnings'} at every start, which were recorded as
 * admin.foo and admin.startupWarnings; a user's name (createUser) read as a collection of its database.
 */
class HistoryNamespaceTest {

    @Test
    void aStringThatNamesNoCollectionLeavesTheDatabaseAlone() throws Exception {
        String db = UpstreamLane.freshDatabaseName("history-namespace");
        try (BlackPipe blackPipe = BlackPipe.start(UpstreamLane.uri());
             MongoClient client = MongoClients.create(blackPipe.connectionString())) {
            runEitherWay(client, "admin", new Document("getParameter", "foo"));
            runEitherWay(client, "admin", new Document("getLog", "startupWarnings"));
            runEitherWay(client, db, new Document("usersInfo", "alice"));
            runEitherWay(client, db, new Document("count", "c"));

            List<HistoryEntry> history = blackPipe.history();
            assertEquals("admin", namespaceOf(history, "getParameter"));
            assertEquals("admin", namespaceOf(history, "getLog"));
            assertEquals(db, namespaceOf(history, "usersInfo"));
            assertEquals(db + ".c", namespaceOf(history, "count"), "a collection's command keeps its collection");
        }
    }

    /**
     * A client's own names are kept to {@link HistoryEntry#MAX_NAME_LENGTH} chars: a soak test's 64 KiB collection
     * names filled the 10,000 entries kept in memory with 200 MB, and the sidecar stalled in full GCs. The API's history
     * and the file say the same.
     */
    @Test
    void aHugeNameIsKeptCut() throws Exception {
        String db = UpstreamLane.freshDatabaseName("history-huge");
        String collection = "c".repeat(64 * 1024);
        String command = "x".repeat(100_000);
        try (BlackPipe blackPipe = BlackPipe.start(UpstreamLane.uri());
             MongoClient client = MongoClients.create(blackPipe.connectionString())) {
            try {
                client.getDatabase(db).getCollection(collection).find().first();
            } catch (RuntimeException refused) {
                // mongod refuses a namespace past 255 bytes; jongodb finds nothing: recorded either way
            }
            runEitherWay(client, db, new Document(command, 1));
            String cut = "…";
            HistoryEntry find = blackPipe.history().stream().filter(e -> e.command().equals("find")).reduce((a, b) -> b).orElseThrow();
            assertEquals(db + "." + "c".repeat(HistoryEntry.MAX_NAME_LENGTH) + cut, find.namespace());
            HistoryEntry unknown = blackPipe.history().stream().filter(e -> e.command().startsWith("xxx")).reduce((a, b) -> b).orElseThrow();
            assertEquals("x".repeat(HistoryEntry.MAX_NAME_LENGTH) + cut, unknown.command());
            assertEquals(HistoryEntry.MAX_NAME_LENGTH + 1, HistoryEntry.fromJson(unknown.toJson()).command().length(), "read back as written");
            String emoji = "a".repeat(HistoryEntry.MAX_NAME_LENGTH - 1) + "\uD83D\uDE00".repeat(4); // a pair across the cut
            runEitherWay(client, db, new Document(emoji, 1));
            HistoryEntry pair = blackPipe.history().stream().filter(e -> e.command().startsWith("aaa")).reduce((a, b) -> b).orElseThrow();
            assertEquals("a".repeat(HistoryEntry.MAX_NAME_LENGTH - 1) + cut, pair.command(), "no half of a pair kept");
        }
    }

    /** The server's answer does not matter here (the lane may lack the command): what the proxy recorded does. */
    private static void runEitherWay(MongoClient client, String db, Document command) {
        try {
            client.getDatabase(db).runCommand(command);
        } catch (MongoCommandException e) {
            // recorded all the same
        }
    }

    private static String namespaceOf(List<HistoryEntry> history, String command) {
        return history.stream().filter(e -> e.command().equals(command)).reduce((a, b) -> b).orElseThrow().namespace();
    }
}
