package io.blackpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.blackpipe.testing.UpstreamLane;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * The Atlas Search index commands the Java driver sends (createSearchIndexes, updateSearchIndex, dropSearchIndex) are
 * counted under their own names, so a test can ask how often its app tried them; the README names dropSearchIndex
 * among the commands whose NamespaceNotFound is no failure, yet its count could not be read.
 */
class SearchIndexCountersTest {
    @Test
    void searchIndexCommandsAreCountedByName() {
        try (BlackPipe blackPipe = BlackPipe.start(UpstreamLane.uri());
             MongoClient client = MongoClients.create(blackPipe.connectionString())) {
            String id = blackPipe.fail("dropSearchIndex").times(1).errorCode(2);
            MongoCollection<Document> collection = client.getDatabase(UpstreamLane.freshDatabaseName("search")).getCollection("c");
            collection.insertOne(new Document("_id", 1));
            assertEquals(2, assertThrows(MongoException.class, () -> collection.dropSearchIndex("byName")).getCode());
            assertEquals(1, blackPipe.fired(id));
            assertEquals(1, blackPipe.attempts("dropSearchIndex"));
            assertEquals(1, blackPipe.outcomes("dropSearchIndex", "error"));
            try {
                collection.createSearchIndex("byName", new Document("mappings", new Document("dynamic", true)));
            } catch (MongoException upstreamLacksSearch) {
                // the count is of what the app sent, whatever the member answers
            }
            assertEquals(1, blackPipe.attempts("createSearchIndexes"));
            try {
                collection.updateSearchIndex("byName", new Document("mappings", new Document("dynamic", false)));
            } catch (MongoException upstreamLacksSearch) {
                // as above
            }
            assertEquals(1, blackPipe.attempts("updateSearchIndex"));
        }
    }
}
